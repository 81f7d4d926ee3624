package merge

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// hPlan is what one batch does to the history table: rows to append and
// stored rows to delete.
type hPlan struct {
	rows      *hRows
	rowKeys   []*hKeyState                 // the key of each of rows
	dels      map[string]*roaring64.Bitmap // by file path: physical rows
	files     map[string]*deltalog.Add
	physical  map[string][][]any // every physical row of a file to rewrite (no deletion vectors)
	nrows     map[string]int     // physical rows of each file read
	deleted   map[string]*roaring64.Bitmap
	readPaths []string
	added     int
	removed   int
	// keys are the batch's keys (every stored key with a truncate).
	keys map[string]*hKeyState
	// snapFiles are the snapshot's files by path.
	snapFiles map[string]*deltalog.Add
	// slab hands out the batch's events, key states and rows.
	slab hSlab
}

// hSlab hands out a batch's events, key states and value slices from a
// few large allocations instead of a few an event: less work for the
// allocator and the garbage collector. What it hands out lives as long as
// the plan; what outlives it (the index's versions) is copied.
type hSlab struct {
	evs  []hEvent
	kss  []hKeyState
	vs   []hVersion
	pos  []codecs.Position
	vals []any
}

// version returns a zero version (a new one from a nil slab).
func (s *hSlab) version() *hVersion {
	if s == nil {
		return new(hVersion)
	}
	if len(s.vs) == 0 {
		s.vs = make([]hVersion, 1024)
	}
	v := &s.vs[0]
	s.vs = s.vs[1:]
	return v
}

// position returns a pointer to a copy of p.
func (s *hSlab) position(p codecs.Position) *codecs.Position {
	if s == nil {
		return &p
	}
	if len(s.pos) == 0 {
		s.pos = make([]codecs.Position, 1024)
	}
	c := &s.pos[0]
	s.pos = s.pos[1:]
	*c = p
	return c
}

func (s *hSlab) event() *hEvent {
	if len(s.evs) == 0 {
		s.evs = make([]hEvent, 1024)
	}
	e := &s.evs[0]
	s.evs = s.evs[1:]
	return e
}

func (s *hSlab) keyState(key string) *hKeyState {
	if len(s.kss) == 0 {
		s.kss = make([]hKeyState, 1024)
	}
	ks := &s.kss[0]
	s.kss = s.kss[1:]
	ks.key, ks.slot = key, -1
	return ks
}

// values returns n nil values, whose capacity is n.
func (s *hSlab) values(n int) []any {
	if len(s.vals) < n {
		s.vals = make([]any, max(n, 16384))
	}
	v := s.vals[:n:n]
	s.vals = s.vals[n:]
	return v
}

// hKeyState is a key's stored versions and the batch's events of it.
type hKeyState struct {
	key    string
	slot   int64 // its slot in the key index when it has one, else -1
	stored []*hVersion
	events []*hEvent
	// newest is its newest version after the batch (nil: none), stored
	// (fromFile set) or written as hPlan.rows[newestRow].
	newest    *hVersion
	newestRow int
	// registered says the index has its written newest version.
	registered bool
}

// plan reads the stored versions of the batch's keys (every key when the
// batch truncates), places the events among them and diffs the result
// with what is stored.
func (h *History) plan(ctx context.Context, ts *hSchema, recs []Record) (*hPlan, error) {
	p := &hPlan{dels: map[string]*roaring64.Bitmap{}, files: map[string]*deltalog.Add{},
		physical: map[string][][]any{}, deleted: map[string]*roaring64.Bitmap{}, nrows: map[string]int{},
		// An update usually writes two rows: the version it closes and its own.
		rows: newHRows(ts.nsrc, 2*len(recs)), rowKeys: make([]*hKeyState, 0, 2*len(recs))}
	keys := make(map[string]*hKeyState, len(recs))
	p.keys = keys
	var truncates []*hEvent
	for i := range recs {
		e, key, err := ts.event(&recs[i].Change, &p.slab)
		if err != nil {
			return nil, fmt.Errorf("history table %s, %s offset %d: %w", h.opts.TableName, recs[i].AppID(), recs[i].Offset, err)
		}
		if e.op == codecs.OpTruncate {
			truncates = append(truncates, e)
			continue
		}
		ks := keys[key]
		if ks == nil {
			ks = p.slab.keyState(key)
			keys[key] = ks
		}
		ks.events = append(ks.events, e)
	}
	if h.snap != nil {
		if err := h.readStored(ctx, ts, p, keys, len(truncates) > 0); err != nil {
			return nil, err
		}
	}
	for key, ks := range keys {
		h.planKey(ts, p, key, ks, truncates)
	}
	// The files of rows closed from the index alone.
	for path := range p.dels {
		if p.files[path] != nil {
			continue
		}
		add := p.snapFiles[path]
		if add == nil {
			return nil, fmt.Errorf("history table %s: indexed file %s is not in the snapshot", h.opts.TableName, path)
		}
		gone, err := h.index.deletedRows(ctx, h, add)
		if err != nil {
			return nil, err
		}
		p.files[path], p.deleted[path], p.nrows[path] = add, gone, h.index.rowCount(path)
		p.readPaths = append(p.readPaths, path)
	}
	return p, nil
}

// after says whether every event comes after v: its last folded event
// and its end.
func after(evs []*hEvent, v *hVersion) bool {
	bound := v.last
	if v.end != nil && v.end.Compare(bound) > 0 {
		bound = *v.end
	}
	for _, e := range evs {
		if e.pos.Compare(bound) <= 0 {
			return false
		}
	}
	return true
}

// readStored reads the live rows of the stored keys the batch touches (all
// of them with a truncate) into keys: the rows the key index names (the
// whole file when it is to be rewritten, in a table without deletion
// vectors). A key whose events all come after its newest version, which
// the index keeps, takes that version alone, without reading.
func (h *History) readStored(ctx context.Context, ts *hSchema, p *hPlan, keys map[string]*hKeyState, all bool) error {
	files := h.snap.Files()
	x := h.index
	if err := x.sync(ctx, h, ts, files); err != nil {
		return err
	}
	p.snapFiles = make(map[string]*deltalog.Add, len(files))
	for i := range files {
		p.snapFiles[files[i].Path] = &files[i]
	}
	var rowsOf map[string][]uint64
	if !all {
		slow := keys
		if x.cache {
			slow = map[string]*hKeyState{}
			for key, ks := range keys {
				s, ok := x.slotOf[key]
				if !ok {
					continue
				}
				ks.slot = int64(s)
				if v := x.newestAt(s, &p.slab); v != nil && after(ks.events, v) {
					ks.stored = append(ks.stored, v)
					continue
				}
				slow[key] = ks
			}
		}
		rowsOf = x.rowsOf(slow)
	}
	conf, parts := ts.meta.Configuration, ts.meta.PartitionColumns
	for i := range files {
		add := &files[i]
		n := x.rowCount(add.Path)
		cand := rowsOf[add.Path]
		if all {
			cand = make([]uint64, n)
			for r := range cand {
				cand[r] = uint64(r)
			}
		}
		if len(cand) == 0 {
			continue
		}
		gone, err := x.deletedRows(ctx, h, add)
		if err != nil {
			return err
		}
		var wanted []uint64
		for _, r := range cand {
			if !gone.Contains(r) {
				wanted = append(wanted, r)
			}
		}
		if len(wanted) == 0 {
			continue
		}
		skip := roaring64.New() // the rows not wanted, for the reader to drop
		skip.AddRange(0, uint64(n))
		for _, r := range wanted {
			skip.Remove(r)
		}
		var rows [][]any
		if ts.dv {
			rows, err = datafile.Read(ctx, h.opts.Store, add, ts.schema, datafile.ReadOptions{Properties: conf, PartitionColumns: parts, DeletedRows: skip})
		} else {
			rows, err = datafile.Read(ctx, h.opts.Store, add, ts.schema, datafile.ReadOptions{Properties: conf, PartitionColumns: parts, DeletedRows: roaring64.New()})
			p.physical[add.Path] = rows
		}
		if err != nil {
			return fmt.Errorf("reading history table %s file %s: %w", h.opts.TableName, add.Path, err)
		}
		for n, r := range wanted {
			row := rows[n]
			if !ts.dv {
				row = rows[r]
			}
			key, err := ts.rowKey(row)
			if err != nil {
				return fmt.Errorf("history table %s file %s row %d: %w", h.opts.TableName, add.Path, r, err)
			}
			ks := keys[key]
			if ks == nil {
				ks = &hKeyState{key: key, slot: -1}
				keys[key] = ks
			}
			v, err := ts.version(row)
			if err != nil {
				return fmt.Errorf("history table %s file %s row %d: %w", h.opts.TableName, add.Path, r, err)
			}
			v.fromFile, v.fromRow = add.Path, r
			ks.stored = append(ks.stored, v)
		}
		p.files[add.Path], p.deleted[add.Path], p.nrows[add.Path] = add, gone, n
		p.readPaths = append(p.readPaths, add.Path)
	}
	return nil
}

// planKey places a key's events (and the batch's truncates) in position
// order among its versions, and records what changed: a stored version the
// events changed is deleted and written anew, a new one written.
func (h *History) planKey(ts *hSchema, p *hPlan, key string, ks *hKeyState, truncates []*hEvent) {
	slices.SortFunc(ks.stored, func(a, b *hVersion) int { return a.start.Compare(b.start) })
	evs := ks.events
	if len(truncates) > 0 {
		evs = slices.Concat(ks.events, truncates)
	}
	slices.SortStableFunc(evs, func(a, b *hEvent) int { return a.pos.Compare(b.pos) })
	tl := timeline{vs: ks.stored, tracked: ts.tracked, slab: &p.slab}
	for _, e := range evs {
		tl.apply(e)
	}
	ks.newest = nil
	for i, v := range tl.vs {
		newest := i == len(tl.vs)-1
		if v.fromFile != "" && !v.dirty {
			if newest {
				ks.newest = v // the timeline is done with it
			}
			continue
		}
		if v.fromFile != "" {
			bm := p.dels[v.fromFile]
			if bm == nil {
				bm = roaring64.New()
				p.dels[v.fromFile] = bm
			}
			bm.Add(v.fromRow)
			p.removed++
		}
		if newest {
			// Written anew: its file and row are the written ones.
			v.fromFile, v.fromRow, v.dirty = "", 0, false
			ks.newest, ks.newestRow = v, p.rows.n
		}
		p.rows.addVersion(v)
		p.rowKeys = append(p.rowKeys, ks)
		p.added++
	}
}

// event is a change as the timeline takes it, and its key.
func (ts *hSchema) event(c *codecs.Change, slab *hSlab) (*hEvent, string, error) {
	e := slab.event()
	e.op, e.pos = c.Op, c.Pos
	if c.CommitMillis > 0 {
		e.at = c.CommitMillis * 1000
	}
	if c.Op == codecs.OpTruncate {
		return e, "", nil
	}
	if c.Layout == nil || c.Row == nil {
		return nil, "", fmt.Errorf("a %c event without a row image", c.Op)
	}
	e.vals = slab.values(ts.nsrc)
	cols := ts.layoutCols(c.Layout)
	for i := range ts.nsrc {
		j := cols[i]
		if j < 0 {
			continue
		}
		if c.IsUnavailable(j) {
			if e.unavailable == nil {
				e.unavailable = make([]bool, ts.nsrc)
			}
			e.unavailable[i] = true
			continue
		}
		e.vals[i] = c.Row[j]
	}
	if c.Op == codecs.OpDelete {
		e.unavailable = nil
	}
	key, err := ts.rowKey(e.vals)
	return e, key, err
}

// layoutCols returns, per source field, its column in layout (-1: none),
// worked out once per layout.
func (ts *hSchema) layoutCols(l *codecs.Layout) []int {
	if cols, ok := ts.cols[l]; ok {
		return cols
	}
	cols := make([]int, ts.nsrc)
	for i, f := range ts.schema.Fields[:ts.nsrc] {
		cols[i] = l.Index(sourceName(f))
	}
	if ts.cols == nil {
		ts.cols = map[*codecs.Layout][]int{}
	}
	ts.cols[l] = cols
	return cols
}

// rowKey is the stored form of a row's key.
func (ts *hSchema) rowKey(row []any) (string, error) {
	if len(ts.keyIdx) == 1 {
		b, err := cdctable.AppendKey(ts.keyBuf[:0], row[ts.keyIdx[0]:ts.keyIdx[0]+1])
		ts.keyBuf = b
		return string(b), err
	}
	vals := ts.keyVals[:0]
	for _, j := range ts.keyIdx {
		vals = append(vals, row[j])
	}
	b, err := cdctable.AppendKey(ts.keyBuf[:0], vals)
	clear(vals)
	ts.keyVals, ts.keyBuf = vals, b
	return string(b), err
}

// version is a stored row as a version.
func (ts *hSchema) version(row []any) (*hVersion, error) {
	m := row[ts.nsrc:]
	v := &hVersion{vals: slices.Clone(row[:ts.nsrc]), startAt: micros(m[0]), endAt: micros(m[1]), lastAt: micros(m[5])}
	var err error
	if v.start, err = hexPosition(m[2], cdctable.HistStartPosition); err != nil {
		return nil, err
	}
	if v.last, err = hexPosition(m[4], cdctable.ColPosition); err != nil {
		return nil, err
	}
	if m[3] != nil {
		end, err := hexPosition(m[3], cdctable.HistEndPosition)
		if err != nil {
			return nil, err
		}
		v.end = &end
	}
	return v, nil
}

func hexPosition(v any, col string) (codecs.Position, error) {
	s, ok := v.(string)
	if !ok {
		return codecs.Position{}, fmt.Errorf("column %s holds %T, not a position", col, v)
	}
	p, err := codecs.PositionFromHex(s)
	if err != nil {
		return codecs.Position{}, fmt.Errorf("column %s: %w", col, err)
	}
	return p, nil
}

// micros is a stored timestamp as µs since the epoch.
func micros(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UnixMicro()
	case int64:
		return x
	}
	return nil
}
