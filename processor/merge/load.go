package merge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// Load errors callers branch on.
var (
	// ErrLoadColumns: the rows lack a key or required column, or carry a
	// metadata column, which the load sets.
	ErrLoadColumns = errors.New("load: columns do not fit the table")
	// ErrLoadOlder: the table holds rows or a truncate that the load's
	// position does not order (see LoadOptions.Position).
	ErrLoadOlder = errors.New("load: the table holds changes at or below the load position")
)

// LoadOptions configure Load.
type LoadOptions struct {
	// Position is what the rows represent: the source table as of every
	// change at or below it. Each row is stored at Position and the commit
	// records it as a truncate floor (ADR 0040), so that changes at or
	// below it are obsolete for every key and later ones apply.
	Position codecs.Position
	// Columns are the rows' columns, by table name; Next returns up to n
	// more rows aligned with them, none at the end.
	Columns []string
	Next    func(ctx context.Context, n int) ([][]any, error)
	// Progress, if set, is called after each chunk of rows is written.
	Progress func(LoadResult)
	// TargetFileSize is the data files' size; default 128 MiB.
	TargetFileSize int64
	// ChunkRows is how many rows are written at once; default 262,144.
	ChunkRows int
	// Parameters are added to the commit's operationParameters.
	Parameters map[string]string
}

// LoadResult is what Load wrote.
type LoadResult struct {
	Version int64 // the load's commit, -1 until committed
	Rows    int64 // rows written
	// Newer are the rows left out because the table holds a newer change
	// of their key (a live row or a delete above Position).
	Newer int64
	Files int
}

// loadChunkRows is LoadOptions.ChunkRows's default.
const loadChunkRows = 1 << 18

// Load writes rows of a snapshot of the source table into the
// cdc2delta table in store, in one commit: an initial full load before
// (or beside) the CDC feed. The table must exist (the pipeline creates it)
// and hold no row and no truncate at or below Position; rows whose key
// the table holds a newer change of are left out. Memory holds the
// table's keys (live and deleted), not the rows loaded.
func Load(ctx context.Context, store deltalog.Store, opts LoadOptions) (LoadResult, error) {
	res := LoadResult{Version: -1}
	if opts.ChunkRows <= 0 {
		opts.ChunkRows = loadChunkRows
	}
	table, err := deltalog.Open(ctx, store)
	if err != nil {
		return res, err
	}
	snap, err := table.Snapshot(ctx)
	if err != nil {
		return res, err
	}
	st, err := newTableState(snap.Metadata())
	if err != nil {
		return res, err
	}
	st.snap = snap
	idx, err := loadColumns(st, opts.Columns)
	if err != nil {
		return res, err
	}
	newer, err := newerKeys(ctx, store, table, st, opts.Position)
	if err != nil {
		return res, err
	}
	w, err := datafile.NewWriter(datafile.Options{Schema: st.Schema, PartitionColumns: st.meta.PartitionColumns,
		Properties: st.meta.Configuration, TargetFileSize: opts.TargetFileSize})
	if err != nil {
		return res, err
	}
	posHex := opts.Position.Hex()
	var adds []deltalog.Add
	var key []byte
	for {
		chunk, err := opts.Next(ctx, opts.ChunkRows)
		if err != nil {
			return res, err
		}
		if len(chunk) == 0 {
			break
		}
		rows := make([][]any, 0, len(chunk))
		for _, in := range chunk {
			row := make([]any, len(st.Schema.Fields))
			for i, v := range in {
				row[idx[i]] = v
			}
			row[st.PosField], row[st.OpField] = posHex, "r"
			if st.DeletedField >= 0 {
				row[st.DeletedField] = false
			}
			if key, err = st.AppendRowKey(key[:0], row); err != nil {
				return res, err
			}
			if newer[string(key)] {
				res.Newer++
				continue
			}
			rows = append(rows, row)
		}
		a, err := w.Write(ctx, store, rows)
		if err != nil {
			return res, fmt.Errorf("writing rows %d to %d: %w", res.Rows, res.Rows+int64(len(rows)), err)
		}
		adds = append(adds, a...)
		res.Rows += int64(len(rows))
		res.Files = len(adds)
		if opts.Progress != nil {
			opts.Progress(res)
		}
	}
	// The floor goes in a batch tombstone file that counts once this
	// commit lands (ADR 0022): no crash leaves one without the other.
	name := cdctable.BatchTombstoneName(snap.Version() + 1)
	if err := putTombstones(ctx, store, cdctable.TombstoneDir+name, nil, &opts.Position); err != nil {
		return res, err
	}
	actions := make([]deltalog.Action, len(adds))
	for i := range adds {
		actions[i] = deltalog.Action{Add: &adds[i]}
	}
	params := map[string]string{"mode": `"Append"`, "partitionBy": "[]"}
	for k, v := range opts.Parameters {
		params[k] = v
	}
	op := deltalog.Operation{Name: deltalog.OpWrite, Parameters: params,
		Metrics: map[string]string{"numFiles": fmt.Sprint(len(adds)), "numOutputRows": fmt.Sprint(res.Rows)},
		Extra:   map[string]string{cdctable.TombstonesField: name}}
	cr, err := table.Commit(ctx, snap, actions, op, deltalog.ExactVersion())
	if err != nil {
		return res, fmt.Errorf("committing the load: %w", err)
	}
	res.Version = cr.Version
	return res, nil
}

// loadColumns maps the rows' columns to schema fields: the key columns and
// every column that cannot be null must be among them, metadata columns not.
func loadColumns(st *tableState, cols []string) ([]int, error) {
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = slices.IndexFunc(st.Schema.Fields, func(f deltalog.StructField) bool { return f.Name == c })
		if idx[i] < 0 {
			return nil, fmt.Errorf("%w: column %q is not in the table", ErrLoadColumns, c)
		}
		if cdctable.IsMetaColumn(c) {
			return nil, fmt.Errorf("%w: column %q is set by the load", ErrLoadColumns, c)
		}
	}
	for _, f := range st.Schema.Fields {
		if !f.Nullable && !cdctable.IsMetaColumn(f.Name) && !slices.Contains(cols, f.Name) {
			return nil, fmt.Errorf("%w: column %q (not nullable) is missing", ErrLoadColumns, f.Name)
		}
	}
	for _, k := range st.KeyNames {
		if !slices.Contains(cols, k) {
			return nil, fmt.Errorf("%w: key column %q is missing", ErrLoadColumns, k)
		}
	}
	return idx, nil
}

// newerKeys returns the keys of which the table holds a change above pos:
// its live rows, all of which must be above pos, and its deletes above pos.
func newerKeys(ctx context.Context, store deltalog.Store, table *deltalog.Table, st *tableState, pos codecs.Position) (map[string]bool, error) {
	tombs := newTombstones()
	if err := tombs.catchUp(ctx, store, tombstoneView{table: table, version: st.snap.Version()}, 0, nil); err != nil {
		return nil, err
	}
	if tombs.floor.Compare(pos) > 0 {
		return nil, fmt.Errorf("%w: a truncate or an earlier load at %s", ErrLoadOlder, tombs.floor)
	}
	newer := map[string]bool{}
	for k, ts := range tombs.keys {
		if ts.pos.Compare(pos) > 0 {
			newer[k] = true
		}
	}
	var older []string
	var olderN int
	dvs := deltalog.NewDVReader(store)
	files := st.snap.Files()
	for i := range files {
		entries, err := readKeyEntries(ctx, store, dvs, st, &files[i])
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.pos.Compare(pos) <= 0 {
				if olderN++; len(older) < 3 {
					older = append(older, fmt.Sprintf("%s row %d at %s", files[i].Path, e.row, e.pos))
				}
				continue
			}
			newer[e.key] = true
		}
	}
	if olderN > 0 {
		return nil, fmt.Errorf("%w: %d live rows, e.g. %s; delete them first (cdc2delta delete TABLE --where \"%s <= '%s'\")",
			ErrLoadOlder, olderN, strings.Join(older, ", "), cdctable.ColPosition, pos.Hex())
	}
	return newer, nil
}
