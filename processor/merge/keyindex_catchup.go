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
// rows, read completely before the index is touched so that a failed read
// leaves the index as it was.
type indexDelta struct {
	// gone maps a file id to the rows no longer live there; nil: all of them.
	gone map[uint32]*roaring64.Bitmap
	// removed are the paths that left the table.
	removed []string
	// added are the live rows of the files new to the table.
	added map[string][]keyEntry
}

// sameDV reports whether two files carry the same deletion vector.
func sameDV(a, b *deltalog.DeletionVector) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UniqueID() == b.UniqueID() && a.Cardinality == b.Cardinality
}

// diffSnapshots reads what changed in the indexed rows from old to cur, both
// of st's metadata: removed files, rows newly deleted by a deletion vector
// and the rows of new files. A deletion vector that lost rows (undeleted)
// gives errCatchUpUnsupported.
func (x *keyIndex) diffSnapshots(ctx context.Context, store deltalog.Store, st *tableState, old, cur *deltalog.Snapshot) (*indexDelta, error) {
	d := &indexDelta{gone: map[uint32]*roaring64.Bitmap{}, added: map[string][]keyEntry{}}
	curFiles := cur.Files()
	now := make(map[string]*deltalog.Add, len(curFiles))
	for i := range curFiles {
		now[curFiles[i].Path] = &curFiles[i]
	}
	before := map[string]bool{}
	dvs := deltalog.NewDVReader(store)
	for _, o := range old.Files() {
		before[o.Path] = true
		n, live := now[o.Path]
		id, indexed := x.fileIDs[o.Path]
		switch {
		case !live:
			d.removed = append(d.removed, o.Path)
			if indexed {
				d.gone[id] = nil
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
		}
	}
	var fresh []*deltalog.Add
	for path, add := range now {
		if !before[path] {
			fresh = append(fresh, add)
		}
	}
	err := readFileKeys(ctx, store, st, fresh, func(path string, entries []keyEntry) error {
		d.added[path] = entries
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
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

// applyDelta drops the keys whose rows are gone, then records the rows of
// the new files where they are newer than what is indexed. Run entries of
// gone rows need nothing: check, against the new snapshot, finds them dead.
// A failure leaves the index part-way, to be rebuilt.
func (x *keyIndex) applyDelta(d *indexDelta, check *liveCheck) error {
	if len(d.gone) > 0 {
		// One pass over the index: it has no file-to-keys map, which
		// would cost memory on every key to save this scan after races.
		// Slices by file id and 32-bit bitmaps (rows are uint32) make the
		// per-key test cheap.
		all := make([]bool, len(x.files))
		rows := make([]*roaring.Bitmap, len(x.files))
		for id, bm := range d.gone {
			all[id] = bm == nil
			if bm != nil {
				rows[id] = roaring.New()
				for it := bm.Iterator(); it.HasNext(); {
					rows[id].Add(uint32(it.Next()))
				}
			}
		}
		x.keys.deleteFunc(func(loc rowLoc) bool {
			return all[loc.file] || rows[loc.file] != nil && rows[loc.file].Contains(loc.row)
		})
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
	for path, entries := range d.added {
		if err := x.putNewer(path, entries, check); err != nil {
			return err
		}
	}
	return nil
}
