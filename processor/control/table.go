package control

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/backoff"
)

// maxVersionFiles bounds the files holding version rows: past it, an
// update rewrites them into one.
const maxVersionFiles = 32

// maxRetries bounds the attempts of one update against concurrent writers.
const maxRetries = 20

// Table is an open control table.
type Table struct {
	t   *deltalog.Table
	now func() time.Time
}

// Open opens the control table in store, creating it when there is none.
// now stamps updated_at; nil means time.Now.
func Open(ctx context.Context, store deltalog.Store, now func() time.Time) (*Table, error) {
	if now == nil {
		now = time.Now
	}
	t, err := deltalog.Open(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("opening the control table: %w", err)
	}
	c := &Table{t: t, now: now}
	if _, err := t.Snapshot(ctx); errors.Is(err, deltalog.ErrNotExist) {
		if err := c.create(ctx); err != nil && !errors.Is(err, deltalog.ErrExist) {
			return nil, fmt.Errorf("creating the control table: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("reading the control table: %w", err)
	}
	return c, nil
}

// ErrNoTable says there is no control table where one was to be read.
var ErrNoTable = errors.New("no control table")

// OpenExisting opens the control table in store without creating it, for
// readers (cdc2delta status), which must not write: with no table there it
// returns an error matching ErrNoTable and writes nothing.
func OpenExisting(ctx context.Context, store deltalog.Store) (*Table, error) {
	t, err := deltalog.Open(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("opening the control table: %w", err)
	}
	if _, err := t.Snapshot(ctx); errors.Is(err, deltalog.ErrNotExist) {
		return nil, ErrNoTable
	} else if err != nil {
		return nil, fmt.Errorf("reading the control table: %w", err)
	}
	return &Table{t: t, now: time.Now}, nil
}

func (c *Table) create(ctx context.Context) error {
	st := schema()
	ss, err := st.SchemaString()
	if err != nil {
		return err
	}
	created := c.now().UnixMilli()
	conf := map[string]string{}
	meta := deltalog.Metadata{
		ID: uuid.NewString(), CreatedTime: &created, Name: "cdc2delta_control",
		Description: "cdc2delta's control table: how far each Delta table is complete, each group's finalized_until, and the versions to read for a consistent cut (ADR 0029)",
		Format:      deltalog.Format{Provider: "parquet", Options: map[string]string{}}, SchemaString: ss,
		PartitionColumns: []string{colKind}, Configuration: conf,
	}
	proto := deltalog.MinimalFeaturesProtocol(st, conf)
	_, err = c.t.Commit(ctx, nil, []deltalog.Action{{Protocol: &proto}, {Metadata: &meta}},
		deltalog.Operation{Name: deltalog.OpCreateTable}, deltalog.ExactVersion())
	return err
}

// State is the control table as of one version.
type State struct {
	Version int64
	// Tables and Groups are the current rows by name.
	Tables, Groups map[string]Row
	// Versions are the version rows, by table, in position order.
	Versions map[string][]Row
	files    []deltalog.Add
}

// Read reads the latest state.
func (c *Table) Read(ctx context.Context) (*State, error) {
	snap, err := c.t.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the control table: %w", err)
	}
	return c.read(ctx, snap)
}

// ReadAt reads the state as of version v.
func (c *Table) ReadAt(ctx context.Context, v int64) (*State, error) {
	snap, err := c.t.SnapshotAt(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("reading the control table at version %d: %w", v, err)
	}
	return c.read(ctx, snap)
}

func (c *Table) read(ctx context.Context, snap *deltalog.Snapshot) (*State, error) {
	st := &State{Version: snap.Version(), Tables: map[string]Row{}, Groups: map[string]Row{}, Versions: map[string][]Row{}}
	meta := snap.Metadata()
	for _, f := range snap.Files() {
		st.files = append(st.files, f)
		rows, err := datafile.Read(ctx, c.t.Store(), &f, snap.Schema(), datafile.ReadOptions{Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns})
		if err != nil {
			return nil, fmt.Errorf("reading the control table's %s: %w", f.Path, err)
		}
		for _, vals := range rows {
			r, err := rowFrom(vals)
			if err != nil {
				return nil, fmt.Errorf("reading the control table's %s: %w", f.Path, err)
			}
			switch r.Kind {
			case KindTable:
				st.Tables[r.Name] = r
			case KindGroup:
				st.Groups[r.Name] = r
			case KindVersion:
				st.Versions[r.Name] = append(st.Versions[r.Name], r)
			}
		}
	}
	for _, vs := range st.Versions {
		slices.SortFunc(vs, func(a, b Row) int { return a.CompleteThrough.Compare(b.CompleteThrough) })
	}
	return st, nil
}

// Update is what a writer knows now; Advance keeps what moves forward. A
// row's DeltaVersion and ScanFrom are -1 when it has none (0 is a version).
type Update struct {
	Tables []Row // Kind, Name, TablePath, DeltaVersion, CompleteThrough(Commit), LastApplied(Commit)
	Groups []Row // Kind, Name, CompleteThrough(Commit), FinalizedUntil
}

// Advance applies u: every row moves forward only, and a table whose
// complete_through moved gets a version row. It commits nothing when
// nothing moves, and plans again after losing a commit race. It reports the
// version committed, or -1.
func (c *Table) Advance(ctx context.Context, u Update) (int64, error) {
	// Writers that lost a race spread out before planning again.
	raceBackoff := backoff.Policy{Min: 5 * time.Millisecond, Max: 500 * time.Millisecond}
	for attempt := 0; ; attempt++ {
		snap, err := c.t.Snapshot(ctx)
		if err != nil {
			return -1, fmt.Errorf("reading the control table: %w", err)
		}
		st, err := c.read(ctx, snap)
		if err != nil {
			return -1, err
		}
		v, err := c.advance(ctx, snap, st, u)
		var ce *deltalog.ConflictError
		if err == nil || !(errors.As(err, &ce) || errors.Is(err, deltalog.ErrExist)) || attempt >= maxRetries {
			return v, err
		}
		if err := raceBackoff.Wait(ctx, attempt); err != nil {
			return -1, err
		}
	}
}

func (c *Table) advance(ctx context.Context, snap *deltalog.Snapshot, st *State, u Update) (int64, error) {
	now := c.now().UTC()
	state := map[string]Row{}
	for k, r := range st.Tables {
		state[KindTable+"\x00"+k] = r
	}
	for k, r := range st.Groups {
		state[KindGroup+"\x00"+k] = r
	}
	var versions []Row
	moved := false
	for _, upd := range slices.Concat(u.Tables, u.Groups) {
		key := upd.Kind + "\x00" + upd.Name
		old, ok := state[key]
		if !ok {
			old = Row{Kind: upd.Kind, Name: upd.Name, DeltaVersion: -1, ScanFrom: -1}
		}
		next, m, completed := ahead(old, upd)
		if !m && ok {
			continue
		}
		next.UpdatedAt = now
		state[key], moved = next, true
		if completed && upd.Kind == KindTable {
			versions = append(versions, Row{Kind: KindVersion, Name: next.Name, TablePath: next.TablePath, DeltaVersion: upd.DeltaVersion, ScanFrom: -1,
				CompleteThrough: next.CompleteThrough, CompleteThroughCommit: next.CompleteThroughCommit,
				LastApplied: upd.LastApplied, LastAppliedCommit: upd.LastAppliedCommit, UpdatedAt: now})
		}
	}
	if !moved {
		return -1, nil
	}
	var actions []deltalog.Action
	var stateRows [][]any
	for _, k := range slices.Sorted(maps.Keys(state)) {
		stateRows = append(stateRows, state[k].values())
	}
	versionFiles := 0
	for i := range st.files {
		f := &st.files[i]
		if f.PartitionValues[colKind] == nil || *f.PartitionValues[colKind] != KindVersion {
			actions = append(actions, deltalog.Action{Remove: f.Remove(true)})
		} else {
			versionFiles++
		}
	}
	meta := snap.Metadata()
	write := func(rows [][]any, noDataChange bool) error {
		if len(rows) == 0 {
			return nil
		}
		w, err := datafile.NewWriter(datafile.Options{Schema: snap.Schema(), PartitionColumns: meta.PartitionColumns,
			Properties: meta.Configuration, Now: c.now, NoDataChange: noDataChange})
		if err != nil {
			return err
		}
		adds, err := w.Write(ctx, c.t.Store(), rows)
		if err != nil {
			return fmt.Errorf("writing the control table: %w", err)
		}
		for i := range adds {
			actions = append(actions, deltalog.Action{Add: &adds[i]})
		}
		return nil
	}
	if versionFiles >= maxVersionFiles {
		// Fold the version rows into one file, as they are: no data change,
		// so an incremental reader of the version rows sees each once.
		var folded [][]any
		for i := range st.files {
			f := &st.files[i]
			if f.PartitionValues[colKind] != nil && *f.PartitionValues[colKind] == KindVersion {
				actions = append(actions, deltalog.Action{Remove: f.Remove(false)})
			}
		}
		for _, name := range slices.Sorted(maps.Keys(st.Versions)) {
			for _, r := range st.Versions[name] {
				folded = append(folded, r.values())
			}
		}
		if err := write(folded, true); err != nil {
			return -1, err
		}
	}
	rows := stateRows
	for _, r := range versions {
		rows = append(rows, r.values())
	}
	if err := write(rows, false); err != nil {
		return -1, err
	}
	// A MERGE by (kind, name) in effect: state rows are replaced, version
	// rows appended.
	op := deltalog.Operation{Name: deltalog.OpMerge, Parameters: map[string]string{"predicate": `["target.kind = source.kind AND target.name = source.name"]`}}
	res, err := c.t.Commit(ctx, snap, actions, op, deltalog.ReadWholeTable())
	if err != nil {
		return -1, fmt.Errorf("committing the control table: %w", err)
	}
	return res.Version, nil
}
