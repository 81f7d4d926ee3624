package merge

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/codecs"
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
//
// It is compact, as it holds a row of every key of the table: a key is a
// slot (its stored form once, its rows as file numbers and row numbers,
// its newest version encoded in one string, history_index_enc.go), a
// file's rows are the slots of its keys.
type hIndex struct {
	fileIDs map[string]uint32 // path → its number in files
	files   []hFile
	slotOf  map[string]uint32 // stored key → its slot
	slots   []hSlot
	free    []uint32 // slots of keys without rows, for new keys
	// wide are the newest versions the encoding does not take (values of
	// other types), by slot.
	wide map[uint32]*hVersion
	// dvs is each indexed file's deletion vector as last seen.
	dvs   map[string]hDV
	enc   []byte // scratch for encoding versions
	cache bool
	// schema is the table schema the index was built with; another resets
	// it (the cached versions have the old schema's columns).
	schema string
}

// hFile is an indexed file: its path and the slot of each physical row.
// A file gone from the snapshot keeps its number, with no rows.
type hFile struct {
	path  string
	slots []uint32
}

// hSlot is a key: its rows and, when known, its newest version encoded
// ("": unknown).
type hSlot struct {
	key    string
	locs   []hLoc
	newest string
}

// hLoc is a physical row of a file of the index.
type hLoc struct {
	file uint32
	row  uint32
}

// hDV is a file's deletion vector: its descriptor, as a string, and rows.
type hDV struct {
	id   string
	rows *roaring64.Bitmap
}

func newHIndex() *hIndex {
	return &hIndex{fileIDs: map[string]uint32{}, slotOf: map[string]uint32{}, wide: map[uint32]*hVersion{}, dvs: map[string]hDV{}}
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

// file returns path's number, adding it (without rows) when new.
func (x *hIndex) file(path string) uint32 {
	if id, ok := x.fileIDs[path]; ok {
		return id
	}
	id := uint32(len(x.files))
	x.files = append(x.files, hFile{path: path})
	x.fileIDs[path] = id
	return id
}

// rowCount is the physical rows of an indexed file (0 when not indexed).
func (x *hIndex) rowCount(path string) int {
	if id, ok := x.fileIDs[path]; ok {
		return len(x.files[id].slots)
	}
	return 0
}

// addRow registers a row of key at file's row r and returns key's slot.
func (x *hIndex) addRow(key string, file, r uint32) uint32 {
	return x.addRowAt(key, -1, file, r)
}

// isSlot says whether slot, found for key in this batch's plan, is a
// slot: a plan finds slots after the index's sync, the only step that
// frees them, so a slot found is key's (comparing the keys would cost a
// cache miss a key).
func (x *hIndex) isSlot(slot int64, _ string) bool {
	return slot >= 0 && slot < int64(len(x.slots))
}

// addRowAt is addRow with key's slot when known (else -1).
func (x *hIndex) addRowAt(key string, slot int64, file, r uint32) uint32 {
	s, ok := uint32(slot), x.isSlot(slot, key)
	if !ok {
		s, ok = x.slotOf[key]
	}
	if !ok {
		if n := len(x.free); n > 0 {
			s, x.free = x.free[n-1], x.free[:n-1]
		} else {
			s = uint32(len(x.slots))
			x.slots = append(x.slots, hSlot{})
		}
		x.slots[s].key = key
		x.slotOf[key] = s
	}
	x.slots[s].locs = append(x.slots[s].locs, hLoc{file: file, row: r})
	x.files[file].slots = append(x.files[file].slots, s)
	return s
}

// keyPaths returns the paths of the files holding key's rows.
func (x *hIndex) keyPaths(key string) []string {
	s, ok := x.slotOf[key]
	if !ok {
		return nil
	}
	var out []string
	for _, l := range x.slots[s].locs {
		out = append(out, x.files[l.file].path)
	}
	return out
}

// rowsOutside says whether key has a row in a file not in paths.
func (x *hIndex) rowsOutside(key string, paths map[string]bool) bool {
	s, ok := x.slotOf[key]
	return ok && slices.ContainsFunc(x.slots[s].locs, func(l hLoc) bool { return !paths[x.files[l.file].path] })
}

// forget drops slot s's newest version: unknown while it has rows.
func (x *hIndex) forget(s uint32) {
	// Without wide versions the old one is not read: a cache miss a key.
	if len(x.wide) > 0 && isWide(x.slots[s].newest) {
		delete(x.wide, s)
	}
	x.slots[s].newest = ""
}

// setNewest makes v slot s's newest version; v.fromFile is an indexed
// file.
func (x *hIndex) setNewest(s uint32, v *hVersion) {
	file, ok := x.fileIDs[v.fromFile]
	if !ok {
		x.forget(s)
		return // not indexed: unknown
	}
	x.setNewestIn(s, v, file)
}

// setNewestIn is setNewest with the number of v's file, which is indexed.
func (x *hIndex) setNewestIn(s uint32, v *hVersion, file uint32) {
	x.forget(s)
	if b, ok := encodeVersion(x.enc[:0], v, file); ok {
		x.slots[s].newest, x.enc = string(b), b
		return
	}
	c := *v
	c.vals = slices.Clone(v.vals) // not the batch's slab
	if v.end != nil {
		end := *v.end
		c.end = &end
	}
	x.slots[s].newest = wideVersion(file, v.fromRow)
	x.wide[s] = &c
}

// newestOf returns key's newest version when known: a fresh copy.
func (x *hIndex) newestOf(key string) *hVersion {
	s, ok := x.slotOf[key]
	if !ok {
		return nil
	}
	return x.newestAt(s, nil)
}

// newestAt returns slot s's newest version when known: a fresh copy, from
// slab (nil: new).
func (x *hIndex) newestAt(s uint32, slab *hSlab) *hVersion {
	b := x.slots[s].newest
	if b == "" {
		return nil
	}
	if isWide(b) {
		c := *x.wide[s]
		return &c
	}
	v, file := decodeVersion(b, slab)
	v.fromFile = x.files[file].path
	return v
}

// newestFrom returns the file and row of slot s's newest version, if
// known.
func (x *hIndex) newestFrom(s uint32) (file uint32, row uint64, ok bool) {
	if x.slots[s].newest == "" {
		return 0, 0, false
	}
	file, row = versionFrom(x.slots[s].newest)
	return file, row, true
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
	for path, id := range x.fileIDs {
		if live[path] != nil {
			continue
		}
		for _, s := range x.files[id].slots {
			sl := &x.slots[s]
			if len(sl.locs) == 0 {
				continue // a key of several rows here, gone already
			}
			sl.locs = slices.DeleteFunc(sl.locs, func(l hLoc) bool { return l.file == id })
			if len(sl.locs) == 0 {
				x.forget(s)
				delete(x.slotOf, sl.key)
				*sl = hSlot{}
				x.free = append(x.free, s)
				continue
			}
			if f, _, ok := x.newestFrom(s); ok && f == id {
				x.forget(s)
			}
		}
		x.files[id] = hFile{}
		delete(x.fileIDs, path)
		delete(x.dvs, path)
	}
	// Deletion vectors changed (by another writer): a newest version they
	// delete is unknown.
	for path, id := range x.fileIDs {
		add := live[path]
		if d := x.dvs[path]; d.id == dvID(add.DeletionVector) {
			continue
		}
		gone, err := x.deletedRows(ctx, h, add)
		if err != nil {
			return err
		}
		x.dvs[path] = hDV{id: dvID(add.DeletionVector), rows: gone}
		slots := x.files[id].slots
		for it := gone.Iterator(); it.HasNext(); {
			r := it.Next()
			if r >= uint64(len(slots)) {
				continue
			}
			if f, row, ok := x.newestFrom(slots[r]); ok && f == id && row == r {
				x.forget(slots[r])
			}
		}
	}
	// New files: read once. A key all of whose rows are in them (a new
	// key, or one whose files a compaction replaced) gets its newest
	// version from them.
	news := map[string]bool{}
	for i := range files {
		if _, ok := x.fileIDs[files[i].Path]; !ok {
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
	id := x.file(add.Path)
	x.files[id].slots = make([]uint32, 0, len(rows))
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
		if _, ok := fresh[key]; x.cache && !ok {
			fresh[key] = !x.rowsOutside(key, news)
		}
		s := x.addRow(key, id, uint32(r))
		if x.cache && !gone.Contains(uint64(r)) {
			if known := x.slots[s].newest != ""; fresh[key] || known {
				v, err := ts.version(row)
				if err != nil {
					return fmt.Errorf("history table %s file %s row %d: %w", h.opts.TableName, add.Path, r, err)
				}
				if !known || v.start.Compare(x.newestStart(s)) > 0 {
					v.fromFile, v.fromRow = add.Path, uint64(r)
					x.setNewest(s, v)
				}
			}
		}
	}
	return nil
}

// newestStart is the start of slot s's newest version, which is known.
func (x *hIndex) newestStart(s uint32) (start codecs.Position) {
	b := x.slots[s].newest
	if isWide(b) {
		return x.wide[s].start
	}
	return versionStart(b)
}

// committed registers what this writer committed: the files it wrote
// (rows in the order they were written, when the writer kept it), the
// deletion vectors it wrote and each planned key's newest version.
func (x *hIndex) committed(p *hPlan, written []deltalog.Add, dvs map[string]hDV) {
	for path, d := range dvs {
		if _, ok := x.fileIDs[path]; ok {
			x.dvs[path] = d
		}
	}
	// Where each written row went: in order, file after file.
	type wloc struct {
		file int // in written
		row  uint32
	}
	locs := make([]wloc, 0, len(p.rowKeys))
	ordered := x.cache
	for i := range written {
		st, ok, err := deltalog.ParseStatsSummary(written[i].Stats)
		if err != nil || !ok {
			ordered = false
			break
		}
		for r := range st.NumRecords {
			locs = append(locs, wloc{file: i, row: uint32(r)})
		}
	}
	if len(locs) != len(p.rowKeys) {
		ordered = false
	}
	var ids []uint32 // the index's numbers of written
	if ordered {
		ids = make([]uint32, len(written))
		for i := range written {
			ids[i] = x.file(written[i].Path)
			x.files[ids[i]].slots = make([]uint32, 0, len(locs))
			x.dvs[written[i].Path] = hDV{rows: roaring64.New()}
		}
		// A key's rows are consecutive: they are registered, and its new
		// newest version set, while its slot is in the cache.
		for i := 0; i < len(p.rowKeys); {
			ks := p.rowKeys[i]
			j := i + 1
			for j < len(p.rowKeys) && p.rowKeys[j] == ks {
				j++
			}
			s := x.addRowAt(ks.key, ks.slot, ids[locs[i].file], locs[i].row)
			x.slots[s].locs = slices.Grow(x.slots[s].locs, j-i-1)
			for k := i + 1; k < j; k++ {
				x.addRowAt(ks.key, int64(s), ids[locs[k].file], locs[k].row)
			}
			ks.slot = int64(s)
			if n := ks.newest; n != nil && n.fromFile == "" && ks.newestRow >= i && ks.newestRow < j {
				v := *n
				l := locs[ks.newestRow]
				v.fromFile, v.fromRow = written[l.file].Path, uint64(l.row)
				x.setNewestIn(s, &v, ids[l.file])
				ks.registered = true
			}
			i = j
		}
		for i := range written {
			x.files[ids[i]].slots = slices.Clip(x.files[ids[i]].slots)
		}
	}
	if !x.cache {
		return
	}
	for key, ks := range p.keys {
		if ks.registered {
			continue
		}
		n := ks.newest
		s, ok := uint32(ks.slot), x.isSlot(ks.slot, key)
		if !ok {
			s, ok = x.slotOf[key]
		}
		switch {
		case !ok:
			// No rows indexed (its file is read at the next sync).
		case n == nil:
			x.forget(s)
		case n.fromFile == "" && !ordered:
			// Not registered: the file is read at the next sync, and the
			// key is unknown until then.
			x.forget(s)
		case n.fromFile == "":
			v := *n
			l := locs[ks.newestRow]
			v.fromFile, v.fromRow = written[l.file].Path, uint64(l.row)
			x.setNewestIn(s, &v, ids[l.file])
		default:
			if f, row, known := x.newestFrom(s); known && x.files[f].path == n.fromFile && row == n.fromRow {
				continue // the version the index has
			}
			x.setNewest(s, n)
		}
	}
}

// rowsOf returns, per file path, the physical rows of keys (sorted).
func (x *hIndex) rowsOf(keys map[string]*hKeyState) map[string][]uint64 {
	out := map[string][]uint64{}
	for k := range keys {
		s, ok := x.slotOf[k]
		if !ok {
			continue
		}
		for _, l := range x.slots[s].locs {
			path := x.files[l.file].path
			out[path] = append(out[path], uint64(l.row))
		}
	}
	for _, rows := range out {
		slices.Sort(rows)
	}
	return out
}
