package merge

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"golang.org/x/sync/errgroup"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// rowLoc is where the live version of a key is stored, and the position of
// the change that wrote it.
type rowLoc struct {
	file uint32 // index into keyIndex.files
	row  uint32 // physical row index in the data file
	pos  codecs.Position
}

// keyIndex maps each live key of the table to its row (ADR 0023). Keys are
// cdctable.AppendKey encodings.
type keyIndex struct {
	keys    *keyTable
	files   []string
	fileIDs map[string]uint32
	// free are the ids of files moved away, which no key points at any
	// more: new files take them, so that files stays as long as the live
	// files and not as long as every file a trickle ever wrote.
	free []uint32
	// runs, when not nil, hold the keys flushed to disk; keys then holds
	// only the changes since (keyindex_runs.go).
	runs *indexRuns
	// redirects, by file id, say where the rows of moved files that runs
	// still name went (keyindex_redirect.go).
	redirects map[uint32]*redirect
	// walks and skips count the catch-ups that dropped gone rows by a pass
	// over every key and those that proved the pass needless.
	walks, skips int
}

func newKeyIndex(runs *indexRuns) *keyIndex {
	return &keyIndex{keys: newKeyTable(), fileIDs: map[string]uint32{}, runs: runs}
}

// close closes the index's run files.
func (x *keyIndex) close() {
	if x.runs != nil {
		x.runs.close()
	}
}

// onDisk reports whether some keys are in runs.
func (x *keyIndex) onDisk() bool { return x.runs != nil && len(x.runs.runs) > 0 }

// freeID makes the id of a file no key points at any more available, unless
// a run may still name it.
func (x *keyIndex) freeID(id uint32) {
	x.files[id] = ""
	if x.runs == nil || !x.runs.holds(id) {
		x.free = append(x.free, id)
	}
}

// lookup returns the stored row of each key and whether it has one: the
// in-memory table's entry, else the newest run's while check says its row
// is live.
func (x *keyIndex) lookup(keys []string, check *liveCheck) ([]rowLoc, []bool, error) {
	locs, found := make([]rowLoc, len(keys)), make([]bool, len(keys))
	var miss []int
	for i, k := range keys {
		if locs[i], found[i] = x.keys.get(k); !found[i] && x.onDisk() {
			miss = append(miss, i)
		}
	}
	if len(miss) == 0 {
		return locs, found, nil
	}
	slices.SortFunc(miss, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	sorted := make([][]byte, len(miss))
	for j, i := range miss {
		sorted[j] = []byte(keys[i])
	}
	cands, has, err := x.runs.lookup(sorted)
	if err != nil {
		return nil, nil, err
	}
	for j, i := range miss {
		if !has[j] {
			continue
		}
		loc, ok := x.follow(cands[j])
		if !ok {
			continue
		}
		if found[i], err = check.live(loc); err != nil {
			return nil, nil, err
		}
		if found[i] {
			locs[i] = loc
		}
	}
	return locs, found, nil
}

func (x *keyIndex) fileID(path string) uint32 {
	id, ok := x.fileIDs[path]
	switch {
	case ok:
	case len(x.free) > 0:
		id, x.free = x.free[len(x.free)-1], x.free[:len(x.free)-1]
		x.files[id] = path
		x.fileIDs[path] = id
	default:
		id = uint32(len(x.files))
		x.files = append(x.files, path)
		x.fileIDs[path] = id
	}
	return id
}

// put records key at (path, row) with pos.
func (x *keyIndex) put(key, path string, row int, pos codecs.Position) {
	x.keys.put(key, rowLoc{file: x.fileID(path), row: uint32(row), pos: pos})
}

// indexOp is one pending change to the index, applied after its commit.
type indexOp struct {
	key  string
	path string // empty: delete the key
	row  int
	pos  codecs.Position
}

func (x *keyIndex) apply(ops []indexOp) {
	for _, op := range ops {
		if op.path == "" {
			x.keys.delete(op.key)
		} else {
			x.put(op.key, op.path, op.row, op.pos)
		}
	}
}

// fileMove is the index change of a file copied value for value: its rows not
// in gone moved, in order, to the file to ("" when none was kept).
type fileMove struct {
	from, to string
	gone     *roaring64.Bitmap
	rows     int64 // physical rows of from
	// offset is the row of to that from's first kept row becomes (files
	// folded into one follow each other).
	offset int64
}

// move points the keys of moved files at their rows in the new files, in one
// pass over the in-memory table. It runs after apply: the keys a batch
// changed no longer point at the old files, and a key still at a gone row is
// dropped. Run entries of a moved file are redirected (addRedirect); it
// returns the rows of the files redirected.
func (x *keyIndex) move(moves []fileMove) (redirected int64) {
	if len(moves) == 0 {
		return 0
	}
	// newRows[file id][old row] is the row in the new file + 1, 0 when gone.
	newRows := make([][]uint32, len(x.files))
	toIDs := make([]uint32, len(x.files))
	var freed []uint32
	for _, m := range moves {
		id, ok := x.fileIDs[m.from]
		if !ok {
			continue
		}
		rows := make([]uint32, m.rows)
		it := m.gone.Iterator()
		next := uint64(m.rows)
		if it.HasNext() {
			next = it.Next()
		}
		kept := uint32(m.offset)
		for r := range uint64(m.rows) {
			if r == next {
				next = uint64(m.rows)
				if it.HasNext() {
					next = it.Next()
				}
				continue
			}
			kept++
			rows[r] = kept
		}
		newRows[id] = rows
		if m.to != "" {
			toIDs[id] = x.fileID(m.to)
			if x.runs != nil && x.runs.holds(id) {
				x.addRedirect(id, toIDs[id], m)
				redirected += m.rows
			}
		}
		delete(x.fileIDs, m.from) // data file names are never reused
		freed = append(freed, id)
	}
	x.keys.updateFunc(func(loc rowLoc) (rowLoc, bool) {
		if int(loc.file) >= len(newRows) || newRows[loc.file] == nil {
			return loc, true
		}
		rows := newRows[loc.file]
		if int64(loc.row) >= int64(len(rows)) || rows[loc.row] == 0 {
			return loc, false
		}
		loc.file, loc.row = toIDs[loc.file], rows[loc.row]-1
		return loc, true
	})
	// Every key of a moved file now points at its new file or is gone.
	for _, id := range freed {
		x.freeID(id)
	}
	return redirected
}

// physicalRows reads the named columns of every physical row of add (deleted
// ones included, so row i is physical row i) and the file's deletion vector.
func physicalRows(ctx context.Context, store deltalog.Store, dvs *deltalog.DVReader, st *tableState, add *deltalog.Add, cols []string) ([][]any, *roaring64.Bitmap, error) {
	rows, err := datafile.ReadColumns(ctx, store, add, st.Schema, cols, datafile.ReadOptions{
		Properties: st.meta.Configuration, PartitionColumns: st.meta.PartitionColumns, DeletedRows: roaring64.New(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", add.Path, err)
	}
	dv := roaring64.New()
	if add.DeletionVector != nil {
		dv, err = dvs.Read(ctx, add.DeletionVector)
		if err != nil {
			return nil, nil, fmt.Errorf("reading deletion vector of %s: %w", add.Path, err)
		}
	}
	return rows, dv, nil
}

// keyEntry is one live row of a data file, as the index holds it.
type keyEntry struct {
	key string
	row int
	pos codecs.Position
}

// readKeyEntries reads the key and position of every live row of add.
func readKeyEntries(ctx context.Context, store deltalog.Store, dvs *deltalog.DVReader, st *tableState, add *deltalog.Add) ([]keyEntry, error) {
	src, err := readKeySource(ctx, store, dvs, st, add)
	if err != nil {
		return nil, err
	}
	var all []keyEntry
	err = src.each(ctx, func(entries []keyEntry) error {
		all = append(all, entries...)
		return nil
	})
	return all, err
}

// keySource is a data file's keys as read: the file opened for its flat
// columns, whose entries are made a row group and a part at a time (a file
// of millions of rows would otherwise hold its columns and an entry per
// row at once), or entries read row by row.
type keySource struct {
	path string
	file *datafile.FlatFile
	// first is the file's first row group, read with it: files of one
	// group, the most, are then decoded by the readers in parallel.
	first   []datafile.FlatColumn
	dv      *roaring64.Bitmap
	entries []keyEntry
}

// keyPart is the rows whose entries a keySource makes at a time.
const keyPart = 1 << 16

func readKeySource(ctx context.Context, store deltalog.Store, dvs *deltalog.DVReader, st *tableState, add *deltalog.Add) (*keySource, error) {
	cols := append(append([]string(nil), st.KeyNames...), cdctable.ColPosition)
	file, ok, err := datafile.OpenFlat(ctx, store, add, st.Schema, cols, datafile.ReadOptions{
		Properties: st.meta.Configuration, PartitionColumns: st.meta.PartitionColumns,
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", add.Path, err)
	}
	if ok && file.Groups() > 0 {
		first, _, err := file.ReadGroup(ctx, 0)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", add.Path, err)
		}
		if first[len(first)-1].Kind == datafile.FlatString {
			dv := roaring64.New()
			if add.DeletionVector != nil {
				if dv, err = dvs.Read(ctx, add.DeletionVector); err != nil {
					return nil, fmt.Errorf("reading deletion vector of %s: %w", add.Path, err)
				}
			}
			return &keySource{path: add.Path, file: file, first: first, dv: dv}, nil
		}
	}
	if ok && file.Groups() == 0 {
		return &keySource{path: add.Path}, nil
	}
	entries, err := readKeyEntriesRows(ctx, store, dvs, st, add, cols)
	if err != nil {
		return nil, err
	}
	return &keySource{path: add.Path, entries: entries}, nil
}

// each passes the file's entries to fn in parts of at most keyPart, in row
// order; fn may keep them. It reads the row groups after the first as it
// goes, and can be called once.
func (s *keySource) each(ctx context.Context, fn func([]keyEntry) error) error {
	if s.file == nil {
		for len(s.entries) > 0 {
			n := min(len(s.entries), keyPart)
			if err := fn(s.entries[:n:n]); err != nil {
				return err
			}
			s.entries = s.entries[n:]
		}
		return nil
	}
	for g := range s.file.Groups() {
		cols, base := s.first, int64(0)
		s.first = nil // held no longer than it is used
		if g > 0 {
			var err error
			if cols, base, err = s.file.ReadGroup(ctx, g); err != nil {
				return fmt.Errorf("reading %s: %w", s.path, err)
			}
		}
		rows := int64(flatLen(cols[0]))
		for from := int64(0); from < rows; from += keyPart {
			entries, err := flatKeyEntries(s.path, cols, base, from, min(from+keyPart, rows), s.dv)
			if err != nil {
				return err
			}
			if len(entries) > 0 {
				if err := fn(entries); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// flatLen returns the values a flat column holds.
func flatLen(c datafile.FlatColumn) int {
	if c.Kind == datafile.FlatInt {
		return len(c.Ints)
	}
	return len(c.Bytes)
}

// readKeyEntriesRows is readKeyEntries through datafile.Read's rows, for
// key columns ReadFlat does not read.
func readKeyEntriesRows(ctx context.Context, store deltalog.Store, dvs *deltalog.DVReader, st *tableState, add *deltalog.Add, cols []string) ([]keyEntry, error) {
	rows, dv, err := physicalRows(ctx, store, dvs, st, add, cols)
	if err != nil {
		return nil, err
	}
	entries := make([]keyEntry, 0, len(rows))
	var buf []byte
	nk := len(st.KeyNames)
	for r, row := range rows {
		if dv.Contains(uint64(r)) {
			continue
		}
		buf, err = cdctable.AppendKey(buf[:0], row[:nk])
		if err != nil {
			return nil, fmt.Errorf("indexing %s: %w", add.Path, err)
		}
		hex, _ := row[nk].(string)
		pos, err := codecs.PositionFromHex(hex)
		if err != nil {
			return nil, fmt.Errorf("indexing %s row %d: bad %s %q: %w", add.Path, r, cdctable.ColPosition, hex, err)
		}
		entries = append(entries, keyEntry{key: string(buf), row: r, pos: pos})
	}
	return entries, nil
}

// flatKeyEntries is readKeyEntries of rows [from, to) of a row group read
// by datafile.OpenFlat, whose first row is the file's row base: the keys,
// then the position; rows in dv are left out. Keys are encoded as
// cdctable.AppendKey encodes the values Read returns.
func flatKeyEntries(path string, cols []datafile.FlatColumn, base, from, to int64, dv *roaring64.Bitmap) ([]keyEntry, error) {
	keys, posCol := cols[:len(cols)-1], cols[len(cols)-1]
	entries := make([]keyEntry, 0, to-from)
	var buf []byte
	for r := int(from); r < int(to); r++ {
		row := int(base) + r
		if dv.Contains(uint64(row)) {
			continue
		}
		buf = buf[:0]
		for _, c := range keys {
			buf = cdctable.AppendFlatKey(buf, c, r)
		}
		pos, err := codecs.PositionFromHexBytes(posCol.Bytes[r])
		if err != nil {
			return nil, fmt.Errorf("indexing %s row %d: bad %s %q: %w", path, row, cdctable.ColPosition, posCol.Bytes[r], err)
		}
		entries = append(entries, keyEntry{key: string(buf), row: row, pos: pos})
	}
	return entries, nil
}

// putNewer records the entries of path, keeping an indexed row with a
// higher position: two live rows of one key should not exist, and if they
// do the newer one is the key's value. check says which run entries are
// live; the in-memory table is flushed to a run when it is full.
func (x *keyIndex) putNewer(path string, entries []keyEntry, check *liveCheck) error {
	// On disk, a file's entries go in parts no larger than the table's free
	// room, flushing between them: a file of millions of rows (bulk loaded,
	// or compacted and read again) then holds memKeys keys and one part's
	// lookups in memory, not all of its keys.
	for len(entries) > 0 {
		n := len(entries)
		if x.runs != nil {
			n = min(n, max(x.runs.memKeys-x.keys.len(), 1))
		}
		if err := x.putNewerPart(path, entries[:n], check); err != nil {
			return err
		}
		entries = entries[n:]
	}
	return nil
}

// putNewerPart is putNewer of entries that fit the in-memory table.
func (x *keyIndex) putNewerPart(path string, entries []keyEntry, check *liveCheck) error {
	if !x.onDisk() {
		x.putEntries(path, entries, func(old rowLoc, e keyEntry) bool { return old.pos.Compare(e.pos) < 0 })
		return x.flushIfFull()
	}
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.key
	}
	locs, found, err := x.lookup(keys, check)
	if err != nil {
		return fmt.Errorf("indexing %s: %w", path, err)
	}
	for i, e := range entries {
		old, ok := x.keys.get(e.key) // an entry put above, or looked up
		if !ok {
			old, ok = locs[i], found[i]
		}
		if ok && old.pos.Compare(e.pos) >= 0 {
			continue
		}
		x.put(e.key, path, e.row, e.pos)
	}
	return x.flushIfFull()
}

// putEntries records the entries of path in the in-memory table with one
// hash probe each, where the key is new or replaces(its location, the
// entry); the file's id is taken once. A rebuild and another writer's rows
// in a catch-up go through here, a key at a time.
func (x *keyIndex) putEntries(path string, entries []keyEntry, replaces func(old rowLoc, e keyEntry) bool) {
	id, named := uint32(0), false
	for _, e := range entries {
		rec, found := x.keys.entry(e.key)
		if found && !replaces(rec.loc(), e) {
			continue
		}
		if !named {
			id, named = x.fileID(path), true
		}
		rec.setLoc(rowLoc{file: id, row: uint32(e.row), pos: e.pos})
	}
}

// flushIfFull flushes the in-memory table to a run once it holds memKeys.
func (x *keyIndex) flushIfFull() error {
	if x.runs != nil && x.keys.len() >= x.runs.memKeys {
		return x.flush()
	}
	return nil
}

// readKeySources reads the keys of files, a few at a time.
func readKeySources(ctx context.Context, store deltalog.Store, st *tableState, files []*deltalog.Add) (map[string]*keySource, error) {
	out := make(map[string]*keySource, len(files))
	err := eachKeySource(ctx, store, st, files, func(add *deltalog.Add, src *keySource) error {
		out[add.Path] = src
		return nil
	})
	return out, err
}

// readFileKeys reads the keys of files, a few at a time, and passes each
// file's entries to use in parts of at most keyPart, in row order, one call
// at a time: a file's parts follow each other.
func readFileKeys(ctx context.Context, store deltalog.Store, st *tableState, files []*deltalog.Add, use func(path string, entries []keyEntry) error) error {
	return eachKeySource(ctx, store, st, files, func(add *deltalog.Add, src *keySource) error {
		return src.each(ctx, func(entries []keyEntry) error { return use(add.Path, entries) })
	})
}

// eachKeySource reads the keys of files, a few at a time, and passes each
// file's to use, one call at a time.
func eachKeySource(ctx context.Context, store deltalog.Store, st *tableState, files []*deltalog.Add, use func(add *deltalog.Add, src *keySource) error) error {
	var mu sync.Mutex
	dvs := deltalog.NewDVReader(store)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, add := range files {
		g.Go(func() error {
			src, err := readKeySource(ctx, store, dvs, st, add)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			return use(add, src)
		})
	}
	return g.Wait()
}

// buildKeyIndex reads the key and position columns of every live file.
// With runs, the keys go to disk as the in-memory table fills.
func buildKeyIndex(ctx context.Context, store deltalog.Store, st *tableState, runs *indexRuns, log *slog.Logger) (*keyIndex, error) {
	x := newKeyIndex(runs)
	files := st.snap.Files()
	adds := make([]*deltalog.Add, len(files))
	for i := range files {
		adds[i] = &files[i]
	}
	reserve := liveRows(adds)
	if runs != nil {
		reserve = min(reserve, runs.memKeys)
	}
	x.keys.reserve(reserve)
	check := liveCheckOf(ctx, x, store, st.snap)
	now := time.Now()
	prog := buildProgress{log: log, total: len(adds), start: now, last: now}
	keys, last := 0, ""
	if err := readFileKeys(ctx, store, st, adds, func(path string, entries []keyEntry) error {
		keys += len(entries)
		if path != last { // a file's parts follow each other
			last = path
			prog.file(keys)
		}
		return x.putNewer(path, entries, check)
	}); err != nil {
		if runs != nil {
			runs.close()
		}
		return nil, err
	}
	return x, nil
}

// maxReserveHint caps liveRows: statistics are not trusted with more than
// 512 MiB of slots; a larger table grows its index as it is read.
const maxReserveHint = 1 << 26

// liveRows estimates the live rows of files from their statistics, to size
// the index before it is built; files without statistics count for none.
func liveRows(files []*deltalog.Add) int {
	var n int64
	for _, add := range files {
		live, ok, err := add.LiveRows()
		if err != nil || !ok {
			continue
		}
		n += live
	}
	return int(min(max(n, 0), maxReserveHint))
}
