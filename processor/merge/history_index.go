package merge

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// hIndex is the history table's key index, in memory: where each key's
// rows are. Data files never change once written, so it is kept by the
// paths of the snapshot's files: a file not indexed yet is read once, a
// file gone from the snapshot leaves the index. A deleted row stays
// indexed until its file is removed.
//
// With deletion vectors and no partition columns it also keeps each key's
// newest version (the live row with the latest start) with its values, so
// that a batch whose events of a key all come after that version closes
// it without reading its file (ADR 0046, Cost). The index keeps it exact
// itself: the rows it writes are registered from the batch, those of
// another writer are read when their file appears, and a key whose newest
// row another writer deleted is unknown (read from its files) until a
// batch of this writer places it again.
type hIndex struct {
	files map[string][]string // path → the stored key of each physical row
	byKey map[string][]hLoc
	// dvs is each indexed file's deletion vector as last seen.
	dvs map[string]hDV
	// newest is each key's newest live version when known; absent for a
	// key with rows, unknown. Only when cache is set.
	newest map[string]*hVersion
	cache  bool
	// schema is the table schema the index was built with; another resets
	// it (the cached versions have the old schema's columns).
	schema string
}

type hLoc struct {
	path string
	row  uint32
}

// hDV is a file's deletion vector: its descriptor, as a string, and rows.
type hDV struct {
	id   string
	rows *roaring64.Bitmap
}

func newHIndex() *hIndex {
	return &hIndex{files: map[string][]string{}, byKey: map[string][]hLoc{}, dvs: map[string]hDV{}, newest: map[string]*hVersion{}}
}

func dvID(dv *deltalog.DeletionVector) string {
	if dv == nil {
		return ""
	}
	off := int32(-1)
	if dv.Offset != nil {
		off = *dv.Offset
	}
	return dv.StorageType + dv.PathOrInlineDV + "@" + strconv.Itoa(int(off)) + "/" + strconv.FormatInt(dv.Cardinality, 10)
}

// deletedRows returns the rows add's deletion vector deletes, reading it
// unless the index has it.
func (x *hIndex) deletedRows(ctx context.Context, h *History, add *deltalog.Add) (*roaring64.Bitmap, error) {
	id := dvID(add.DeletionVector)
	if d, ok := x.dvs[add.Path]; ok && d.id == id {
		return d.rows, nil
	}
	if add.DeletionVector == nil {
		return roaring64.New(), nil
	}
	gone, err := deltalog.ReadDeletionVector(ctx, h.opts.Store, add.DeletionVector)
	if err != nil {
		return nil, fmt.Errorf("reading history table %s deletion vector of %s: %w", h.opts.TableName, add.Path, err)
	}
	return gone, nil
}

// forget drops key's newest version: unknown while it has rows.
func (x *hIndex) forget(key string) {
	delete(x.newest, key)
}

// sync brings the index to the snapshot's files.
func (x *hIndex) sync(ctx context.Context, h *History, ts *hSchema, files []deltalog.Add) error {
	cache := ts.dv && len(ts.meta.PartitionColumns) == 0
	if x.schema != ts.meta.SchemaString || x.cache != cache {
		*x = *newHIndex()
		x.schema, x.cache = ts.meta.SchemaString, cache
	}
	live := make(map[string]*deltalog.Add, len(files))
	for i := range files {
		live[files[i].Path] = &files[i]
	}
	// Files gone: their rows leave, and a newest version among them.
	for path, keys := range x.files {
		if live[path] != nil {
			continue
		}
		for _, k := range keys {
			locs := slices.DeleteFunc(x.byKey[k], func(l hLoc) bool { return l.path == path })
			if len(locs) == 0 {
				delete(x.byKey, k)
				delete(x.newest, k)
				continue
			}
			x.byKey[k] = locs
			if v := x.newest[k]; v != nil && v.fromFile == path {
				x.forget(k)
			}
		}
		delete(x.files, path)
		delete(x.dvs, path)
	}
	// Deletion vectors changed (by another writer): a newest version they
	// delete is unknown.
	for path, keys := range x.files {
		add := live[path]
		if d := x.dvs[path]; d.id == dvID(add.DeletionVector) {
			continue
		}
		gone, err := x.deletedRows(ctx, h, add)
		if err != nil {
			return err
		}
		x.dvs[path] = hDV{id: dvID(add.DeletionVector), rows: gone}
		for it := gone.Iterator(); it.HasNext(); {
			r := it.Next()
			if r >= uint64(len(keys)) {
				continue
			}
			if v := x.newest[keys[r]]; v != nil && v.fromFile == path && v.fromRow == r {
				x.forget(keys[r])
			}
		}
	}
	// New files: read once. A key all of whose rows are in them (a new
	// key, or one whose files a compaction replaced) gets its newest
	// version from them.
	news := map[string]bool{}
	for i := range files {
		if _, ok := x.files[files[i].Path]; !ok {
			news[files[i].Path] = true
		}
	}
	fresh := map[string]bool{}
	for i := range files {
		if add := &files[i]; news[add.Path] {
			if err := x.read(ctx, h, ts, add, news, fresh); err != nil {
				return err
			}
		}
	}
	return nil
}

// read indexes a file the index does not know: its key columns, or with
// the cache every column, for the newest versions.
func (x *hIndex) read(ctx context.Context, h *History, ts *hSchema, add *deltalog.Add, news, fresh map[string]bool) error {
	var cols []string
	if !x.cache {
		cols = make([]string, len(ts.keyIdx))
		for i, j := range ts.keyIdx {
			cols[i] = ts.schema.Fields[j].Name
		}
	}
	rows, err := datafile.ReadColumns(ctx, h.opts.Store, add, ts.schema, cols, datafile.ReadOptions{
		Properties: ts.meta.Configuration, PartitionColumns: ts.meta.PartitionColumns, DeletedRows: roaring64.New()})
	if err != nil {
		return fmt.Errorf("indexing history table %s file %s: %w", h.opts.TableName, add.Path, err)
	}
	gone, err := x.deletedRows(ctx, h, add)
	if err != nil {
		return err
	}
	x.dvs[add.Path] = hDV{id: dvID(add.DeletionVector), rows: gone}
	keys := make([]string, len(rows))
	for r, row := range rows {
		var key string
		if x.cache {
			key, err = ts.rowKey(row)
		} else {
			var b []byte
			b, err = cdctable.AppendKey(nil, row)
			key = string(b)
		}
		if err != nil {
			return fmt.Errorf("indexing history table %s file %s row %d: %w", h.opts.TableName, add.Path, r, err)
		}
		keys[r] = key
		if _, ok := fresh[key]; x.cache && !ok {
			fresh[key] = !slices.ContainsFunc(x.byKey[key], func(l hLoc) bool { return !news[l.path] })
		}
		if x.cache && !gone.Contains(uint64(r)) {
			if cur := x.newest[key]; fresh[key] || cur != nil {
				v, err := ts.version(row)
				if err != nil {
					return fmt.Errorf("history table %s file %s row %d: %w", h.opts.TableName, add.Path, r, err)
				}
				if cur == nil || v.start.Compare(cur.start) > 0 {
					v.fromFile, v.fromRow = add.Path, uint64(r)
					x.newest[key] = v
				}
			}
		}
		x.byKey[key] = append(x.byKey[key], hLoc{path: add.Path, row: uint32(r)})
	}
	x.files[add.Path] = keys
	return nil
}

// committed registers what this writer committed: the files it wrote
// (rows in the order they were written, when the writer kept it), the
// deletion vectors it wrote and each planned key's newest version.
func (x *hIndex) committed(p *hPlan, written []deltalog.Add, dvs map[string]hDV) {
	for path, d := range dvs {
		if _, ok := x.files[path]; ok {
			x.dvs[path] = d
		}
	}
	// Where each written row went: in order, file after file.
	locs := make([]hLoc, 0, len(p.rows))
	ordered := x.cache
	for i := range written {
		st, ok, err := deltalog.ParseStatsSummary(written[i].Stats)
		if err != nil || !ok {
			ordered = false
			break
		}
		for r := range st.NumRecords {
			locs = append(locs, hLoc{path: written[i].Path, row: uint32(r)})
		}
	}
	if len(locs) != len(p.rows) {
		ordered = false
	}
	if ordered {
		for i := range written {
			x.files[written[i].Path] = make([]string, 0, len(locs))
			x.dvs[written[i].Path] = hDV{rows: roaring64.New()}
		}
		for i, key := range p.rowKeys {
			l := locs[i]
			x.files[l.path] = append(x.files[l.path], key)
			x.byKey[key] = append(x.byKey[key], l)
		}
	}
	if !x.cache {
		return
	}
	for key, n := range p.newest {
		switch {
		case n == nil:
			x.forget(key)
		case n.fromFile == "" && !ordered:
			// Not registered: the file is read at the next sync, and the
			// key is unknown until then.
			x.forget(key)
		case n.fromFile == "":
			v := *n
			v.fromFile, v.fromRow = locs[p.newestRow[key]].path, uint64(locs[p.newestRow[key]].row)
			x.newest[key] = &v
		default:
			x.newest[key] = n
		}
	}
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
