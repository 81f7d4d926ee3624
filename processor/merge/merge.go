package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"golang.org/x/sync/errgroup"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// ErrNoKey reports a change record without a primary key.
var ErrNoKey = errors.New("merge: change without a key")

// apply runs applyOnce, re-applying the batch from a fresh snapshot when a
// concurrent writer won a conflicting commit; the position guard makes the
// re-application safe.
func (s *Sink) apply(ctx context.Context, b Batch) (Result, error) {
	for attempt := 0; ; attempt++ {
		if behind := s.behind.Swap(false); s.stale || behind {
			if err := s.reload(ctx); err != nil {
				return Result{Retries: attempt}, err
			}
			s.stale = false
		}
		res, err := s.applyOnce(ctx, b)
		res.Retries = attempt
		if err == nil {
			return res, nil
		}
		// Whatever failed, the in-memory state may no longer match the log.
		s.stale = true
		var ce *deltalog.ConflictError
		var corrupt *corruptRunError
		switch {
		case attempt >= s.opts.CommitRetries:
			return res, err
		case errors.As(err, &corrupt):
			// Set aside, the run is missing from its manifest, so the
			// reload builds the index from the data files.
			s.log.Warn("a key index run is corrupt; setting it aside and rebuilding the index", "err", err,
				"set_aside", corrupt.path+".corrupt")
			if rerr := os.Rename(corrupt.path, corrupt.path+".corrupt"); rerr != nil {
				return res, fmt.Errorf("%w (setting the run aside: %v)", err, rerr)
			}
			s.setState(nil)
		case errors.As(err, &ce) || errors.Is(err, deltalog.ErrExist) || errors.Is(err, errReplan):
			s.log.Info("lost a commit race, re-applying the batch", "attempt", attempt+1, "err", err)
		default:
			return res, err
		}
	}
}

// mergePlan accumulates one batch's effect on the table.
type mergePlan struct {
	st       *tableState
	files    map[string]*deltalog.Add
	live     *liveCheck
	rows     [][]any
	rowKeys  []string
	rowPos   []codecs.Position // of rows, as their cdctable.ColPosition holds it
	fills    []fill
	dels     map[string]*roaring64.Bitmap
	ops      []indexOp
	tombs    map[string]tombstone
	tombFile string // the file holding tombs, "" for none
	removes  []deltalog.Action
	adds     []deltalog.Action
	metrics  mergeMetrics
	readRows map[string][][]any // full physical rows read, by path
	changes  []change           // the change data feed's rows, when it is on
	cdcs     []deltalog.Action
	// truncated are the stored rows a truncate removes, by path.
	truncated map[string]*roaring64.Bitmap
	// unresolved are the columns stored as NULL for lack of an earlier image.
	unresolved []unresolvedColumns
	// dvs reads the deletion vectors the batch updates, each file once.
	dvs *deltalog.DVReader
	// moves are the files copied value for value, whose kept rows the index
	// follows after the commit.
	moves []fileMove
	// owners says which files the batch may fold into its tail.
	owners cdctable.FileOwners
	// lookedUp is what the plan found of the batch's keys, which a rebase
	// checks again (rebase.go).
	lookedUp lookups
}

// fill copies the stored values of unavailable columns into a new row.
type fill struct {
	row    int
	path   string
	oldRow int
	fields []int
	// origin and originRec are folded.origin and folded.originRec.
	origin    []int
	originRec *Record
}

type mergeMetrics struct {
	copied, bytesAdded, bytesRemoved int64
	dvAdded, dvRemoved, dvUpdated    int
	dvFiles                          int   // deletion vector files written
	dvBytes                          int64 // their bytes
	scan, rewrite                    time.Duration
}

func (s *Sink) applyOnce(ctx context.Context, b Batch) (Result, error) {
	start := time.Now()
	res := Result{Version: -1}
	st := s.state
	applied := map[cdctable.TopicPartition]int64{}
	if st != nil {
		applied = cdctable.Offsets(st.snap)
		res.Version = st.snap.Version()
	}
	last := make(map[cdctable.TopicPartition]int64, len(b.LastOffsets))
	for tp, off := range b.LastOffsets {
		last[tp] = off
	}
	// The batch's records are used as they are unless some must go: a
	// record is a few hundred bytes, and copying every batch's showed in
	// the allocation profile. They are never modified in place (a retry
	// applies the same batch again).
	recs, copied := b.Records, false
	for i := range b.Records {
		r := &b.Records[i]
		drop := true
		if v, ok := applied[r.TopicPartition]; ok && r.Offset <= v {
			res.SkippedReplayed++
		} else {
			if cur, ok := last[r.TopicPartition]; !ok || r.Offset > cur {
				last[r.TopicPartition] = r.Offset
			}
			drop = r.Change.Op == codecs.OpTombstone
		}
		switch {
		case drop && !copied:
			recs, copied = append(make([]Record, 0, len(b.Records)), b.Records[:i]...), true
		case !drop && copied:
			recs = append(recs, *r)
		}
	}
	var txns []deltalog.Action
	for tp, off := range last {
		if v, ok := applied[tp]; !ok || off > v {
			txns = append(txns, deltalog.Action{Txn: &deltalog.Txn{AppID: tp.AppID(), Version: off}})
		}
	}
	slices.SortFunc(txns, func(a, b deltalog.Action) int { return strings.Compare(a.Txn.AppID, b.Txn.AppID) })
	if len(txns) == 0 && len(recs) == 0 {
		return res, nil
	}

	var pre []deltalog.Action
	if st == nil {
		i := slices.IndexFunc(recs, func(r Record) bool { return r.Change.Layout != nil && r.Change.KeyLayout != nil })
		if i < 0 {
			// No schema to create the table from; the offsets stay unapplied
			// and are consumed again, harmlessly, after a restart. A
			// truncate still holds back the older events other partitions
			// may deliver next: its floor is kept for the table's creation.
			return res, writeFloor(ctx, s.opts.Store, latestTruncate(recs))
		}
		meta, proto, err := s.newTableMetadata(&recs[i].Change)
		if err != nil {
			return res, err
		}
		if st, err = newTableState(*meta); err != nil {
			return res, err
		}
		st.proto, st.index = proto, s.newIndex()
		if st.tombs, err = loadTombstones(ctx, s.opts.Store, tombstoneView{s.table, -1}, s.opts.Now(), s.opts.TombstoneRetention); err != nil {
			return res, err
		}
		pre = []deltalog.Action{{Protocol: &proto}, {Metadata: meta}}
	}
	st, evo, err := s.evolveAll(st, recs)
	if err != nil {
		return res, err
	}
	pre = mergeMetaActions(pre, evo)

	keys := make([]string, len(recs))
	var buf []byte
	vals := make([]any, len(st.KeyNames))
	keySource := keySourceNames(st.Schema, st.KeyFields)
	emptyNull := emptyPartitionNull(st)
	for i := range recs {
		c := &recs[i].Change
		if c.Op == codecs.OpTruncate {
			continue
		}
		if c.KeyLayout == nil || len(c.Key) != len(c.KeyLayout.Columns) {
			return res, fmt.Errorf("table %s, %s/%d offset %d: %w", s.opts.TableName, recs[i].Topic, recs[i].Partition, recs[i].Offset, ErrNoKey)
		}
		for k, name := range keySource {
			j := c.KeyLayout.Index(name)
			if j < 0 {
				return res, fmt.Errorf("table %s: key column %q missing from the event key: %w", s.opts.TableName, name, ErrNoKey)
			}
			vals[k] = c.Key[j]
			if emptyNull != nil && emptyNull[k] && vals[k] == "" {
				vals[k] = nil
			}
		}
		if buf, err = cdctable.AppendKey(buf[:0], vals); err != nil {
			return res, err
		}
		keys[i] = string(buf)
	}
	d := dedup(recs, keys)
	res.Duplicates, res.Superseded = d.duplicates, d.superseded

	p := &mergePlan{st: st, files: map[string]*deltalog.Add{}, dels: map[string]*roaring64.Bitmap{}, tombs: map[string]tombstone{}, readRows: map[string][][]any{}, truncated: map[string]*roaring64.Bitmap{}, dvs: deltalog.NewDVReader(s.opts.Store),
		owners: cdctable.NewFileOwners(b.Owned, b.LastOffsets, partitionsOf(recs), applied)}
	if st.snap != nil {
		files := st.snap.Files()
		for i := range files {
			p.files[files[i].Path] = &files[i]
		}
	}
	if err := s.plan(ctx, p, d, &res); err != nil {
		return res, err
	}
	if err := s.writeChanges(ctx, p); err != nil {
		return res, err
	}
	if err := s.writeChangeData(ctx, p); err != nil {
		return res, err
	}

	view := tombstoneView{table: s.table, version: -1}
	if st.snap != nil {
		view.version = st.snap.Version()
	}
	var floor *codecs.Position
	if d.truncate != nil {
		floor = &d.truncate.Change.Pos
	}
	// The tombstones are written before the commit, so that no crash can
	// lose those of a commit that landed, and count once the commit names
	// them (ADR 0022).
	if p.tombFile, err = writeTombstones(ctx, s.opts.Store, view, p.tombs, floor); err != nil {
		return res, err
	}

	actions := make([]deltalog.Action, 0, len(pre)+len(p.removes)+len(p.adds)+len(p.cdcs)+len(txns))
	actions = append(append(append(append(append(actions, pre...), p.removes...), p.adds...), p.cdcs...), txns...)
	op := s.operation(st, &res, p, len(b.Records), time.Since(start))
	// The commit lands at the version after its snapshot or not at all: a
	// lost race is checked here, against the batch's keys (rebase.go), not
	// by the log's file-level rules, for which every concurrent append of
	// another writer conflicts.
	copts := []deltalog.CommitOption{deltalog.ReadWholeTable(), deltalog.ExactVersion()}
	op.Extra = map[string]string{}
	if prog := progressOf(recs); !prog.Empty() {
		js, err := json.Marshal(prog)
		if err != nil {
			return res, fmt.Errorf("recording progress: %w", err)
		}
		op.Extra[cdctable.ProgressField] = string(js)
	}
	if p.tombFile != "" {
		// Only the commit of the version in the file's name may name it; a
		// rebase writes the file again under its new version.
		op.Extra[cdctable.TombstonesField] = p.tombFile
	}
	cr, err := s.commit(ctx, p, actions, &op, copts, d.truncate != nil, &res)
	if err != nil {
		return res, fmt.Errorf("committing batch to %s: %w", s.opts.TableName, err)
	}
	res.Version, res.Committed = cr.Version, true
	res.FilesAdded, res.FilesRemoved = len(p.adds), len(p.removes)
	res.DeletionVectors = p.metrics.dvAdded + p.metrics.dvUpdated
	res.FilesWritten, res.BytesWritten = p.written()
	if cr.CheckpointErr != nil {
		s.log.Warn("checkpoint failed", "version", cr.Version, "err", cr.CheckpointErr)
	}
	s.afterCommit(st, p, d.truncate, cr)
	s.logUnresolved(st, p.unresolved)
	return res, nil
}

// evolveAll checks every new layout of the batch against the table and
// returns the state to merge with and the metadata change, if any.
func (s *Sink) evolveAll(st *tableState, recs []Record) (*tableState, []deltalog.Action, error) {
	var evo []deltalog.Action
	seen := map[*codecs.Layout]bool{}
	for i := range recs {
		c := &recs[i].Change
		if c.Layout == nil || seen[c.Layout] || st.mappers[c.Layout] != nil {
			continue
		}
		seen[c.Layout] = true
		meta, proto, err := s.evolve(st, c)
		if err != nil {
			// Name the record that brought the schema: it is rarely the
			// batch's first, and an operator moving past it needs it.
			var se *SchemaError
			if errors.As(err, &se) && se.Record == nil {
				rec := recs[i]
				se.Record = &rec
			}
			return nil, nil, err
		}
		if meta == nil {
			continue
		}
		pr := st.proto
		if proto != nil {
			pr = *proto
			evo = append(evo, deltalog.Action{Protocol: proto})
		}
		evo = append(evo, deltalog.Action{Metadata: meta})
		if st, err = st.withMetadata(*meta, pr); err != nil {
			return nil, nil, err
		}
		s.log.Info("evolving table schema", "layout", c.Layout.Name, "schemaID", c.Layout.SchemaID)
	}
	for l := range seen {
		st.mappers[l] = newRowMapper(st.Schema, l)
	}
	for i := range recs {
		if l := recs[i].Change.Layout; l != nil && st.mappers[l] == nil {
			st.mappers[l] = newRowMapper(st.Schema, l)
		}
	}
	return st, evo, nil
}

// mergeMetaActions keeps one protocol and one metadata action, the last of each.
func mergeMetaActions(pre, evo []deltalog.Action) []deltalog.Action {
	var proto *deltalog.Protocol
	var meta *deltalog.Metadata
	for _, a := range append(pre, evo...) {
		if a.Protocol != nil {
			proto = a.Protocol
		}
		if a.Metadata != nil {
			meta = a.Metadata
		}
	}
	var out []deltalog.Action
	if proto != nil {
		out = append(out, deltalog.Action{Protocol: proto})
	}
	if meta != nil {
		out = append(out, deltalog.Action{Metadata: meta})
	}
	return out
}

// plan decides each key's effect on the table: it folds the key's chain of
// events (fold.go) and compares the outcome with the stored row.
func (s *Sink) plan(ctx context.Context, p *mergePlan, d dedupResult, res *Result) error {
	st := p.st
	soft := s.opts.DeleteMode == DeleteSoft
	cdf := cdfEnabled(st.meta.Configuration)
	now := s.opts.Now().UnixMilli()
	var tpos codecs.Position
	truncated := d.truncate != nil
	if truncated {
		res.Truncates = 1
		tpos = d.truncate.Change.Pos
		if err := p.truncate(ctx, tpos, s.opts.TableName); err != nil {
			return err
		}
	}
	p.rows, p.rowKeys, p.rowPos = slices.Grow(p.rows, len(d.chains)), slices.Grow(p.rowKeys, len(d.chains)), slices.Grow(p.rowPos, len(d.chains))
	keys := make([]string, len(d.chains))
	for i, ch := range d.chains {
		keys[i] = ch.key
	}
	locs, founds, err := st.index.lookup(keys, p.liveCheck(ctx))
	if err != nil {
		return fmt.Errorf("table %s: looking up keys: %w", s.opts.TableName, err)
	}
	p.lookedUp = newLookups(st.index, keys, locs, founds)
	for i, ch := range d.chains {
		loc, found := locs[i], founds[i]
		if found && truncated && loc.pos.Compare(tpos) <= 0 {
			found = false // the truncate removes the stored row
		}
		stale := func(pos codecs.Position) bool {
			if found {
				return pos.Compare(loc.pos) <= 0
			}
			return st.tombs.obsolete(ch.key, pos) || truncated && pos.Compare(tpos) <= 0
		}
		if stale(ch.events[len(ch.events)-1].Change.Pos) {
			res.SkippedStale++
			continue
		}
		f, err := s.fold(p, ch.events, stale, found)
		if err != nil {
			return err
		}
		path := ""
		if found {
			path = st.index.files[loc.file]
			if err := p.del(path, loc.row, s.opts.TableName); err != nil {
				return err
			}
		}
		c := &f.last.Change
		if f.row == nil { // a hard delete
			if found {
				res.Deleted++
				if cdf {
					p.changes = append(p.changes, storedChange(ChangeDelete, path, int(loc.row)))
				}
			}
			p.ops = append(p.ops, indexOp{key: ch.key})
			p.tombs[ch.key] = tombstone{pos: c.Pos, at: now}
			continue
		}
		switch {
		case c.Op == codecs.OpDelete:
			if found {
				res.Deleted++
			}
		case found:
			res.Updated++
		default:
			res.Inserted++
		}
		if found && (len(f.fromStored) > 0 || soft && len(f.origin) > 0) {
			p.fills = append(p.fills, fill{row: len(p.rows), path: path, oldRow: int(loc.row), fields: f.fromStored, origin: f.origin, originRec: f.originRec})
		}
		if cdf && found {
			// Soft-delete mode keeps the row: its delete is an update.
			p.changes = append(p.changes, storedChange(ChangeUpdatePreimage, path, int(loc.row)), newChange(ChangeUpdatePostimage, len(p.rows)))
		} else if cdf {
			p.changes = append(p.changes, newChange(ChangeInsert, len(p.rows)))
		}
		p.rows = append(p.rows, f.row)
		p.rowKeys = append(p.rowKeys, ch.key)
		p.rowPos = append(p.rowPos, f.last.Change.Pos) // the change imageRow wrote f.row from
	}
	// Keep stored values of columns the events did not carry; a deleted
	// row is no earlier image.
	for _, f := range p.fills {
		old, err := p.fullRows(ctx, s.opts.Store, f.path)
		if err != nil {
			return err
		}
		if f.oldRow >= len(old) {
			return fmt.Errorf("table %s: row %d beyond the %d rows of %s", s.opts.TableName, f.oldRow, len(old), f.path)
		}
		if st.DeletedField >= 0 && old[f.oldRow][st.DeletedField] == true {
			if len(f.origin) > 0 {
				p.unresolved = append(p.unresolved, unresolvedColumns{rec: f.originRec, fields: f.origin})
			}
			continue
		}
		for _, i := range f.fields {
			p.rows[f.row][i] = old[f.oldRow][i]
		}
	}
	for _, u := range p.unresolved {
		res.UnavailableUnresolved += int64(len(u.fields))
	}
	return nil
}

// del marks row of the live file path as replaced.
func (p *mergePlan) del(path string, row uint32, table string) error {
	if p.files[path] == nil {
		return fmt.Errorf("table %s: key index names %s, which is not live", table, path)
	}
	bm := p.dels[path]
	if bm == nil {
		bm = roaring64.New()
		p.dels[path] = bm
	}
	bm.Add(uint64(row))
	return nil
}

// truncate removes every stored row at or below pos, and only those: a row
// written by a later change stays even though its event arrived first, from
// another partition (ADR 0025).
func (p *mergePlan) truncate(ctx context.Context, pos codecs.Position, table string) error {
	return p.st.index.allLive(p.liveCheck(ctx), func(key string, loc rowLoc) error {
		if loc.pos.Compare(pos) > 0 {
			return nil
		}
		path := p.st.index.files[loc.file]
		if err := p.del(path, loc.row, table); err != nil {
			return err
		}
		bm := p.truncated[path]
		if bm == nil {
			bm = roaring64.New()
			p.truncated[path] = bm
		}
		bm.Add(uint64(loc.row))
		p.ops = append(p.ops, indexOp{key: key})
		return nil
	})
}

// liveCheck checks run entries against the plan's snapshot.
func (p *mergePlan) liveCheck(ctx context.Context) *liveCheck {
	if p.live == nil {
		p.live = newLiveCheck(ctx, p.st.index, p.files, p.dvs)
	}
	return p.live
}

// fullRows reads (once per batch) every physical row of a live file.
func (p *mergePlan) fullRows(ctx context.Context, store deltalog.Store, path string) ([][]any, error) {
	if rows, ok := p.readRows[path]; ok {
		return rows, nil
	}
	t := time.Now()
	rows, err := datafile.Read(ctx, store, p.files[path], p.st.Schema, datafile.ReadOptions{
		Properties: p.st.meta.Configuration, PartitionColumns: p.st.meta.PartitionColumns, DeletedRows: roaring64.New(),
	})
	p.metrics.scan += time.Since(t)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	p.readRows[path] = rows
	return rows, nil
}

// useDV reports whether old rows leave through deletion vectors.
func (s *Sink) useDV(st *tableState) bool {
	has := st.proto.HasReaderFeature(deltalog.FeatureDeletionVectors) && st.proto.HasWriterFeature(deltalog.FeatureDeletionVectors)
	switch s.opts.Mode {
	case ModeCoW:
		return false
	case ModeDV:
		if !has {
			s.log.Warn("merge mode dv needs the deletionVectors table feature; rewriting files instead")
		}
	}
	return has
}

// writeChanges writes the new rows, the deletion vectors or rewritten files,
// and fills the plan's add and remove actions and index operations.
func (s *Sink) writeChanges(ctx context.Context, p *mergePlan) error {
	st := p.st
	t := time.Now()
	defer func() { p.metrics.rewrite += time.Since(t) }()
	absorbed, err := s.absorb(ctx, p)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(p.dels))
	for path := range p.dels {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	dv := s.useDV(st)
	// Copy-on-write writes the new rows while it rewrites files: both use
	// the cores, neither waits for the other.
	type written struct {
		adds  []deltalog.Add
		order []int
		err   error
	}
	rows := make(chan written, 1)
	if len(p.rows) > 0 && !absorbed {
		write := func() {
			adds, order, err := s.writeRows(ctx, st, p.rows)
			rows <- written{adds, order, err}
		}
		if dv {
			write()
		} else {
			go write()
		}
	} else {
		rows <- written{}
	}
	if dv {
		err = s.writeDVs(ctx, p, paths)
	} else {
		err = s.rewriteFiles(ctx, p, paths)
	}
	w := <-rows
	if err != nil {
		return err
	}
	if w.err != nil {
		return fmt.Errorf("writing rows of %s: %w", s.opts.TableName, w.err)
	}
	for i := range w.adds {
		cdctable.Tag(&w.adds[i], p.owners.Rows)
	}
	return p.addFiles(w.adds, w.order, func(i int) (string, codecs.Position, error) {
		return p.rowKeys[i], p.rowPos[i], nil
	})
}

// addFiles records new data files; order[k] is the index of the adds' k-th
// row among the rows written, and ident gives row i's key and position.
func (p *mergePlan) addFiles(adds []deltalog.Add, order []int, ident func(i int) (string, codecs.Position, error)) error {
	row := 0
	p.ops = slices.Grow(p.ops, len(order))
	for _, add := range adds {
		stats, ok, err := deltalog.ParseStatsSummary(add.Stats)
		if err != nil || !ok {
			return fmt.Errorf("new file %s has no row count: %v", add.Path, err)
		}
		for r := range int(stats.NumRecords) {
			if row >= len(order) {
				return fmt.Errorf("new file %s holds more rows than were written", add.Path)
			}
			key, pos, err := ident(order[row])
			if err != nil {
				return err
			}
			p.ops = append(p.ops, indexOp{key: key, path: add.Path, row: r, pos: pos})
			row++
		}
		p.metrics.bytesAdded += add.Size
		p.adds = append(p.adds, deltalog.Action{Add: &add})
	}
	return nil
}

// written counts the objects the plan wrote besides the log entry: new data
// files, deletion vector files, change data files and its tombstone file
// (whose bytes are not counted).
func (p *mergePlan) written() (files int, bytes int64) {
	for _, a := range p.adds {
		if a.Add != nil && p.files[a.Add.Path] == nil { // not a re-add with a new vector
			files++
			bytes += a.Add.Size
		}
	}
	for _, a := range p.cdcs {
		if a.CDC != nil {
			files++
			bytes += a.CDC.Size
		}
	}
	files += p.metrics.dvFiles
	bytes += p.metrics.dvBytes
	if p.tombFile != "" {
		files++
	}
	return files, bytes
}

func (p *mergePlan) remove(add *deltalog.Add) {
	p.metrics.bytesRemoved += add.Size
	if add.DeletionVector != nil {
		p.metrics.dvRemoved++
	}
	p.removes = append(p.removes, deltalog.Action{Remove: add.Remove(true)})
}

// writeDVs marks old rows in deletion vectors (merge-on-read): each touched
// file is removed and re-added with the union of its old and new vector.
func (s *Sink) writeDVs(ctx context.Context, p *mergePlan, paths []string) error {
	var bitmaps []*roaring64.Bitmap
	var targets []*deltalog.Add
	var loose []bool // the file's stats already say its bounds are not tight
	for _, path := range paths {
		add := p.files[path]
		merged := p.dels[path]
		if add.DeletionVector != nil {
			// Read once per batch: the index's checks may have read it.
			old, err := p.liveCheck(ctx).deleted(add)
			if err != nil {
				return err
			}
			merged.Or(old)
		}
		p.remove(add)
		sum, ok, err := deltalog.ParseStatsSummary(add.Stats)
		if err == nil && ok && merged.GetCardinality() >= uint64(sum.NumRecords) {
			continue // every row is gone: the remove suffices
		}
		bitmaps = append(bitmaps, merged)
		targets = append(targets, add)
		loose = append(loose, err == nil && ok && sum.TightBounds != nil && !*sum.TightBounds)
	}
	if len(bitmaps) == 0 {
		return nil
	}
	descs, err := deltalog.WriteDeletionVectors(ctx, s.opts.Store, "", bitmaps)
	if err != nil {
		return fmt.Errorf("writing deletion vectors of %s: %w", s.opts.TableName, err)
	}
	p.metrics.dvFiles++
	p.metrics.dvBytes++ // the format version byte
	for _, d := range descs {
		p.metrics.dvBytes += int64(d.SizeInBytes) + 8 // each vector's size and checksum framing
	}
	for i, old := range targets {
		add := *old
		add.DataChange = true
		add.DeletionVector = &descs[i]
		add.Tags = cdctable.WithoutMoved(old.Tags)
		if loose[i] {
			// Already not tight (a vector before this one): the stats stand.
		} else if stats, ok, err := deltalog.ParseStats(old.Stats); err == nil && ok {
			// Min/max still cover the deleted rows, so they are no longer tight.
			stats.TightBounds = new(bool)
			if js, err := stats.JSON(); err == nil {
				add.Stats = js
			}
		}
		if old.DeletionVector != nil {
			p.metrics.dvUpdated++
		} else {
			p.metrics.dvAdded++
		}
		p.adds = append(p.adds, deltalog.Action{Add: &add})
	}
	return nil
}

// allGone reports whether gone holds every row of add, by its statistics.
func allGone(add *deltalog.Add, gone *roaring64.Bitmap) bool {
	sum, ok, err := deltalog.ParseStatsSummary(add.Stats)
	return err == nil && ok && gone.GetCardinality() >= uint64(sum.NumRecords)
}

// rewriteFiles rewrites each touched file without its old rows (copy-on-write).
// Files are copied value for value (datafile.Writer.CopyLive), several at a time;
// a file that cannot be copied so (another schema, nested columns) is read and
// written row by row.
func (s *Sink) rewriteFiles(ctx context.Context, p *mergePlan, paths []string) error {
	type rewrite struct {
		path   string
		add    *deltalog.Add
		gone   *roaring64.Bitmap
		copied datafile.Copied
		ok     bool
	}
	var jobs []*rewrite
	for _, path := range paths {
		add := p.files[path]
		gone := p.dels[path]
		if add.DeletionVector != nil {
			// Read once per batch: the index's checks may have read it.
			old, err := p.liveCheck(ctx).deleted(add)
			if err != nil {
				return err
			}
			gone.Or(old)
		}
		p.remove(add)
		if allGone(add, gone) {
			continue // a truncate, say: nothing to copy
		}
		jobs = append(jobs, &rewrite{path: path, add: add, gone: gone})
	}
	// Files at once, and columns at once within each file: a batch rewrites
	// one large file and a few small ones as often as many alike.
	procs := runtime.GOMAXPROCS(0)
	perFile := procs
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(procs)
	for _, j := range jobs {
		g.Go(func() error {
			w, err := s.newWriter(p.st)
			if err != nil {
				return err
			}
			j.copied, j.ok, err = w.CopyLive(gctx, s.opts.Store, j.add, j.gone, perFile)
			if err != nil {
				return fmt.Errorf("rewriting %s: %w", j.path, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, j := range jobs {
		if !j.ok {
			if err := s.rewriteRows(ctx, p, j.path, j.gone, false); err != nil {
				return err
			}
			continue
		}
		m := fileMove{from: j.path, gone: j.gone, rows: j.copied.SourceRows}
		if a := j.copied.Add; a != nil {
			m.to = a.Path
			p.metrics.copied += j.copied.Rows
			p.metrics.bytesAdded += a.Size
			p.adds = append(p.adds, deltalog.Action{Add: a})
		}
		p.moves = append(p.moves, m)
	}
	return nil
}

// plainJSON encodes v as Spark writes predicates: "<" and ">" as they are.
func plainJSON(v any) string {
	b, _ := deltalog.MarshalPlain(v) // strings and maps of strings always encode
	return string(b)
}

// newWriter returns a data file writer for the table's schema.
func (s *Sink) newWriter(st *tableState) (*datafile.Writer, error) {
	w, err := datafile.NewWriter(datafile.Options{
		Schema: st.Schema, PartitionColumns: st.meta.PartitionColumns, Properties: st.meta.Configuration,
		TargetFileSize: s.opts.TargetFileSize, Now: s.opts.Now,
	})
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", s.opts.TableName, err)
	}
	return w, nil
}

// rewriteRows rewrites the file path without the rows gone by reading and writing
// its rows as Go values; withNew appends the plan's new rows to them (absorb).
func (s *Sink) rewriteRows(ctx context.Context, p *mergePlan, path string, gone *roaring64.Bitmap, withNew bool) error {
	st := p.st
	rows, err := p.fullRows(ctx, s.opts.Store, path)
	if err != nil {
		return err
	}
	var keep [][]any
	for i, r := range rows {
		if !gone.Contains(uint64(i)) {
			keep = append(keep, r)
		}
	}
	kept := len(keep)
	if withNew {
		keep = append(keep, p.rows...)
	}
	if len(keep) == 0 {
		return nil
	}
	p.metrics.copied += int64(kept)
	adds, order, err := s.writeRows(ctx, st, keep)
	if err != nil {
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
	var buf []byte
	return p.addFiles(adds, order, func(i int) (string, codecs.Position, error) {
		hex, _ := keep[i][st.PosField].(string)
		pos, err := codecs.PositionFromHex(hex)
		if err != nil {
			return "", codecs.Position{}, err
		}
		if i >= kept {
			return p.rowKeys[i-kept], pos, nil
		}
		if buf, err = st.AppendRowKey(buf[:0], keep[i]); err != nil {
			return "", codecs.Position{}, err
		}
		return string(buf), pos, nil
	})
}

// operation describes the commit as Spark describes a MERGE.
func (s *Sink) operation(st *tableState, res *Result, p *mergePlan, sourceRows int, elapsed time.Duration) deltalog.Operation {
	conds := make([]string, len(st.KeyNames))
	for i, k := range st.KeyNames {
		conds[i] = fmt.Sprintf("(target.`%s` = source.`%s`)", k, k)
	}
	predicate := plainJSON([]string{strings.Join(conds, " AND ")})
	matched := plainJSON([]map[string]string{
		{"actionType": "delete", "predicate": "(source._cdc_op = 'd' AND source._cdc_position > target._cdc_position)"},
		{"actionType": "update", "predicate": "(source._cdc_position > target._cdc_position)"},
	})
	notMatched := plainJSON([]map[string]string{{"actionType": "insert", "predicate": "(source._cdc_op <> 'd')"}})
	m := p.metrics
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	return deltalog.Operation{
		Name: deltalog.OpMerge,
		Parameters: map[string]string{
			"predicate":                    predicate,
			"matchedPredicates":            matched,
			"notMatchedPredicates":         notMatched,
			"notMatchedBySourcePredicates": "[]",
		},
		Metrics: map[string]string{
			"numSourceRows":                   strconv.Itoa(sourceRows),
			"numTargetRowsInserted":           n(res.Inserted),
			"numTargetRowsUpdated":            n(res.Updated),
			"numTargetRowsDeleted":            n(res.Deleted),
			"numTargetRowsCopied":             n(m.copied),
			"numOutputRows":                   n(int64(len(p.rows)) + m.copied),
			"numTargetFilesAdded":             strconv.Itoa(len(p.adds)),
			"numTargetFilesRemoved":           strconv.Itoa(len(p.removes)),
			"numTargetBytesAdded":             n(m.bytesAdded),
			"numTargetBytesRemoved":           n(m.bytesRemoved),
			"numTargetChangeFilesAdded":       strconv.Itoa(len(p.cdcs)),
			"numTargetDeletionVectorsAdded":   strconv.Itoa(m.dvAdded),
			"numTargetDeletionVectorsRemoved": strconv.Itoa(m.dvRemoved),
			"numTargetDeletionVectorsUpdated": strconv.Itoa(m.dvUpdated),
			"executionTimeMs":                 n(elapsed.Milliseconds()),
			"scanTimeMs":                      n(m.scan.Milliseconds()),
			"rewriteTimeMs":                   n(m.rewrite.Milliseconds()),
		},
	}
}

// afterCommit makes the committed state the Sink's, or marks it stale when
// the log moved past the commit (another writer) so the next batch reloads.
func (s *Sink) afterCommit(st *tableState, p *mergePlan, truncate *Record, cr deltalog.CommitResult) {
	// Our commit followed st.snap directly (no retries): Commit then built the
	// snapshot after it, without listing or reading the log.
	snap := cr.Snapshot
	if snap == nil || snap.Version() != cr.Version {
		s.stale = true
		return
	}
	st.snap, st.meta, st.proto = snap, snap.Metadata(), snap.Protocol()
	if truncate != nil && truncate.Change.Pos.Compare(st.tombs.floor) > 0 {
		st.tombs.floor = truncate.Change.Pos
	}
	st.index.apply(p.ops)
	redirected := st.index.move(p.moves)
	for k, ts := range p.tombs {
		st.tombs.merge(k, ts)
	}
	if p.tombFile != "" {
		st.tombs.files[cdctable.TombstoneDir+p.tombFile] = fileMerged
	}
	s.state = st
	s.afterCommitRuns(st, redirected)
}

// afterCommitRuns flushes a full in-memory table of an on-disk index to a
// run, with a manifest of the commit's version. It saves one too when the
// commit moved as many rows out of files in runs as the table holds: an
// open after a kill would otherwise read them again.
func (s *Sink) afterCommitRuns(st *tableState, redirected int64) {
	x := st.index
	if x.runs == nil || x.keys.len() < x.runs.memKeys && redirected < int64(x.runs.memKeys) {
		return
	}
	if err := x.saveManifest(st.snap); err != nil {
		// The index is still whole (runs and table); only the next
		// open has further to catch up.
		s.log.Warn("saving the key index", "err", err)
	}
}
