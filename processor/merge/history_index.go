package merge

import (
	"context"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// hIndex is the history table's key index, in memory: where each key's
// rows are. Data files never change once written, so it is kept by the
// paths of the snapshot's files alone: a file not indexed yet has its key
// columns read once, a file gone from the snapshot leaves the index.
// Deletion vectors are read when a file's rows are (a deleted row stays
// indexed until its file is removed). About 60 bytes a row.
type hIndex struct {
	files map[string][]string // path → the stored key of each physical row
	byKey map[string][]hLoc
}

type hLoc struct {
	path string
	row  uint32
}

func newHIndex() *hIndex {
	return &hIndex{files: map[string][]string{}, byKey: map[string][]hLoc{}}
}

// sync brings the index to the snapshot's files.
func (x *hIndex) sync(ctx context.Context, h *History, ts *hSchema, files []deltalog.Add) error {
	keyCols := make([]string, len(ts.keyIdx))
	for i, j := range ts.keyIdx {
		keyCols[i] = ts.schema.Fields[j].Name
	}
	live := make(map[string]bool, len(files))
	for i := range files {
		add := &files[i]
		live[add.Path] = true
		if _, ok := x.files[add.Path]; ok {
			continue
		}
		rows, err := datafile.ReadColumns(ctx, h.opts.Store, add, ts.schema, keyCols, datafile.ReadOptions{
			Properties: ts.meta.Configuration, PartitionColumns: ts.meta.PartitionColumns, DeletedRows: roaring64.New()})
		if err != nil {
			return fmt.Errorf("indexing history table %s file %s: %w", h.opts.TableName, add.Path, err)
		}
		keys := make([]string, len(rows))
		for r, kr := range rows {
			b, err := cdctable.AppendKey(nil, kr)
			if err != nil {
				return fmt.Errorf("indexing history table %s file %s row %d: %w", h.opts.TableName, add.Path, r, err)
			}
			keys[r] = string(b)
			x.byKey[keys[r]] = append(x.byKey[keys[r]], hLoc{path: add.Path, row: uint32(r)})
		}
		x.files[add.Path] = keys
	}
	for path, keys := range x.files {
		if live[path] {
			continue
		}
		for _, k := range keys {
			locs := slices.DeleteFunc(x.byKey[k], func(l hLoc) bool { return l.path == path })
			if len(locs) == 0 {
				delete(x.byKey, k)
			} else {
				x.byKey[k] = locs
			}
		}
		delete(x.files, path)
	}
	return nil
}

// rowsOf returns, per file path, the physical rows of keys (sorted).
func (x *hIndex) rowsOf(keys map[string]*hKeyState) map[string][]uint64 {
	out := map[string][]uint64{}
	for k := range keys {
		for _, l := range x.byKey[k] {
			out[l.path] = append(out[l.path], uint64(l.row))
		}
	}
	for _, rows := range out {
		slices.Sort(rows)
	}
	return out
}
