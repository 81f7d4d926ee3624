package merge

import (
	"context"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// errCatchUpUnsupported means a log change the incremental catch-up does not
// follow; the index is rebuilt from scratch instead.
var errCatchUpUnsupported = errors.New("merge: log change needs a full index rebuild")

// indexDelta is what the commits between two snapshots did to the indexed
// rows, read before the index is touched so that a failed read leaves the
// index as it was: all of it but the keys of many new rows (a compaction's),
// which are read as they are applied.
type indexDelta struct {
	// gone maps a file id to the rows no longer live there; nil: all of them.
	gone map[uint32]*roaring64.Bitmap
	// removed are the paths that left the table.
	removed []string
	// added are the keys of the files new to the table, read when they
	// hold at most readAheadRows; their entries are made a part at a time
	// as they are applied.
	added map[string]*keySource
	// fresh are the new files when they hold more: read as they are
	// applied, a few files and a row group at a time, so that a catch-up
	// holds that much and not every new key at once.
	fresh []*deltalog.Add
	// freshRows are the rows of fresh, by their statistics (-1: unknown).
	freshRows int64
	// goneRows counts the rows of gone (for a removed file, the rows it had
	// live); -1 when a removed file has no statistics to count them.
	goneRows int64
	// followed are the compactions whose moved rows are followed, not read.
	followed *followed
}

// sameDV reports whether two files carry the same deletion vector.
func sameDV(a, b *deltalog.DeletionVector) bool {
	if a == nil || b == nil {
		return a == b
	}
	// The fields UniqueID is made of, compared without building it: a
	// catch-up compares every live file.
	return a.StorageType == b.StorageType && a.PathOrInlineDV == b.PathOrInlineDV &&
		(a.Offset == nil) == (b.Offset == nil) && (a.Offset == nil || *a.Offset == *b.Offset) &&
		a.Cardinality == b.Cardinality
}

// diffSnapshots reads what changed in the indexed rows from old to cur, both
// of st's metadata: removed files, rows newly deleted by a deletion vector
// and the rows of new files, when they are at most readAhead. The rows a
// compaction's tags say it moved are followed instead (followMoves). A deletion
// vector that lost rows (undeleted) gives errCatchUpUnsupported.
func (x *keyIndex) diffSnapshots(ctx context.Context, store deltalog.Store, st *tableState, old, cur *deltalog.Snapshot, readAhead int64, log func(string, ...any)) (*indexDelta, error) {
	d := &indexDelta{gone: map[uint32]*roaring64.Bitmap{}}
	now, before := filesByPath(cur), filesByPath(old)
	dvs := deltalog.NewDVReader(store)
	d.followed = followMoves(ctx, dvs, before, now, log)
	for _, o := range old.Files() {
		n, live := now[o.Path]
		id, indexed := x.fileIDs[o.Path]
		switch {
		case !live:
			d.removed = append(d.removed, o.Path)
			if indexed && !d.followed.from[o.Path] {
				d.gone[id] = nil
				d.countRemoved(&o)
			}
		case sameDV(o.DeletionVector, n.DeletionVector):
		case n.DeletionVector == nil:
			return nil, fmt.Errorf("%w: deletion vector of %s dropped", errCatchUpUnsupported, o.Path)
		case indexed:
			bm, err := newlyDeleted(ctx, dvs, o.DeletionVector, n.DeletionVector)
			if err != nil {
				return nil, fmt.Errorf("catching up on %s: %w", o.Path, err)
			}
			d.gone[id] = bm
			d.count(int64(bm.GetCardinality()))
		}
	}
	var fresh []*deltalog.Add
	for path, add := range now {
		if before[path] == nil && !d.followed.to[path] {
			fresh = append(fresh, add)
		}
	}
	if rows, known := statRows(fresh); known && rows <= readAhead {
		var err error
		if d.added, err = readKeySources(ctx, store, st, fresh); err != nil {
			return nil, err
		}
	} else {
		d.fresh, d.freshRows = fresh, rows
		if !known {
			d.freshRows = -1
		}
	}
	return d, nil
}

// readAheadRows bounds the new rows whose keys a catch-up reads before it
// touches the index. Below it, a failed read (a store's transient error)
// leaves the index as it was, to be caught up again; above it, the keys are
// read as they are applied, and a failed read has the index rebuilt (from
// its manifest when on disk): memory, not that retry, bounds a catch-up
// after a compaction of millions of rows.
const readAheadRows = 1 << 18

// statRows sums the live rows of files by their statistics; known is false
// when a file has none.
func statRows(files []*deltalog.Add) (rows int64, known bool) {
	for _, add := range files {
		n, ok, err := add.LiveRows()
		if err != nil || !ok {
			return 0, false
		}
		rows += n
	}
	return rows, true
}

// eachAdded passes the entries of the new files to use, a file's parts one
// after the other: those read with the diff, then the fresh ones, read now.
func (d *indexDelta) eachAdded(ctx context.Context, store deltalog.Store, st *tableState, all func(path string, entries []keyEntry) error) error {
	use := func(path string, entries []keyEntry) error {
		if entries = d.followed.keep(path, entries); len(entries) == 0 {
			return nil
		}
		return all(path, entries)
	}
	for path, src := range d.added {
		if err := src.each(ctx, func(entries []keyEntry) error { return use(path, entries) }); err != nil {
			return err
		}
	}
	return readFileKeys(ctx, store, st, d.fresh, use)
}

// countRemoved adds the rows a removed file had live to goneRows.
func (d *indexDelta) countRemoved(add *deltalog.Add) {
	n, ok, err := add.LiveRows()
	if err != nil || !ok {
		d.goneRows = -1
		return
	}
	d.count(n)
}

func (d *indexDelta) count(n int64) {
	if d.goneRows >= 0 {
		d.goneRows += n
	}
}

// newlyDeleted returns the rows deleted by cur and not by old.
func newlyDeleted(ctx context.Context, dvs *deltalog.DVReader, old, cur *deltalog.DeletionVector) (*roaring64.Bitmap, error) {
	bm, err := dvs.Read(ctx, cur)
	if err != nil {
		return nil, fmt.Errorf("reading deletion vector: %w", err)
	}
	if old == nil {
		return bm, nil
	}
	was, err := dvs.Read(ctx, old)
	if err != nil {
		return nil, fmt.Errorf("reading deletion vector: %w", err)
	}
	if was.AndCardinality(bm) != was.GetCardinality() {
		return nil, fmt.Errorf("%w: deletion vector lost rows", errCatchUpUnsupported)
	}
	bm.AndNot(was)
	return bm, nil
}

// deadRows tests whether an indexed location is among an indexDelta's gone
// rows: slices by file id and 32-bit bitmaps (rows are uint32) keep the
// per-key test cheap.
type deadRows struct {
	all  []bool
	rows []*roaring.Bitmap
}

func newDeadRows(gone map[uint32]*roaring64.Bitmap, files int) deadRows {
	d := deadRows{all: make([]bool, files), rows: make([]*roaring.Bitmap, files)}
	for id, bm := range gone {
		d.all[id] = bm == nil
		if bm != nil {
			d.rows[id] = roaring.New()
			for it := bm.Iterator(); it.HasNext(); {
				d.rows[id].Add(uint32(it.Next()))
			}
		}
	}
	return d
}

// has reports whether loc is gone; files new since the delta are not.
func (d deadRows) has(loc rowLoc) bool {
	if int(loc.file) >= len(d.all) {
		return false
	}
	return d.all[loc.file] || d.rows[loc.file] != nil && d.rows[loc.file].Contains(loc.row)
}

// applyDelta drops the keys whose rows are gone and records the rows of the
// new files of st's snapshot where they are newer than what is indexed.
// deleted names keys the commits may have deleted (their tombstones). Run
// entries of gone rows need nothing: check, against the new snapshot, finds
// them dead. A failure leaves the index part-way, to be rebuilt.
func (x *keyIndex) applyDelta(ctx context.Context, store deltalog.Store, st *tableState, d *indexDelta, deleted []string, check *liveCheck) error {
	if f := d.followed; len(f.moves) > 0 {
		x.move(f.moves)
		// Rows deleted in an output since its inputs were read are gone
		// as a deletion vector's newly deleted rows are.
		for path, bm := range f.toGone {
			if id, ok := x.fileIDs[path]; ok {
				d.gone[id] = bm
				d.count(int64(bm.GetCardinality()))
			}
		}
	}
	dead := newDeadRows(d.gone, len(x.files))
	if x.runs == nil && d.goneRows >= 0 {
		if err := x.applyCounted(ctx, store, st, d, deleted, dead); err != nil {
			return err
		}
	} else {
		if len(d.gone) > 0 {
			x.keys.deleteFunc(dead.has)
			x.walks++
		}
		if err := d.eachAdded(ctx, store, st, func(path string, entries []keyEntry) error {
			return x.putNewer(path, entries, check)
		}); err != nil {
			return err
		}
	}
	for _, path := range d.removed {
		// A removed path never comes back (data file names are unique), so
		// its id is dead; dropping it keeps fileIDs to the live files. Once
		// no key points at it (all its rows gone above), new files take it.
		id, ok := x.fileIDs[path]
		delete(x.fileIDs, path)
		if bm, gone := d.gone[id]; ok && gone && bm == nil {
			x.freeID(id)
		}
	}
	return nil
}

// applyCounted is applyDelta for an index all in memory, without a pass over
// every key when it can prove none is needed. A gone row is replaced by a
// new file's row of its key (another writer's update or compaction) or was
// deleted (its key has a tombstone); no two keys share a row, so once as
// many keys have left gone rows as there are gone rows, none is left.
// Otherwise (deletes without tombstones, rows of no key) one pass drops the
// rest, as before: the count only ever saves work.
func (x *keyIndex) applyCounted(ctx context.Context, store deltalog.Store, st *tableState, d *indexDelta, deleted []string, dead deadRows) error {
	var left int64
	replaces := func(old rowLoc, e keyEntry) bool {
		if dead.has(old) {
			left++
			return true
		}
		return old.pos.Compare(e.pos) < 0
	}
	if err := d.eachAdded(ctx, store, st, func(path string, entries []keyEntry) error {
		x.putEntries(path, entries, replaces)
		return nil
	}); err != nil {
		return err
	}
	for _, k := range deleted {
		if old, ok := x.keys.get(k); ok && dead.has(old) {
			x.keys.delete(k)
			left++
		}
	}
	switch {
	case len(d.gone) == 0:
	case left == d.goneRows:
		x.skips++
	default:
		x.keys.deleteFunc(dead.has)
		x.walks++
	}
	return nil
}
