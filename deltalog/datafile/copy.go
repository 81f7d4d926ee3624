package datafile

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// Copied describes what Writer.CopyLive wrote.
type Copied struct {
	// Add is the new data file, nil when every row was dropped (no file is written).
	Add *deltalog.Add
	// SourceRows counts the physical rows of the source files, dropped ones included.
	SourceRows int64
	// Rows counts the rows copied: SourceRows less the dropped ones, in source order.
	Rows int64
	// Sources is, for CopyLiveWith, what each source gave, in order: the kept
	// rows of a source follow those of the sources before it.
	Sources []SourceCopied
}

// Source is a data file to copy, less the rows Drop holds (nil: none).
type Source struct {
	Add  *deltalog.Add
	Drop *roaring64.Bitmap
}

// SourceCopied is one source's share of a copy.
type SourceCopied struct {
	SourceRows, Rows int64
}

// CopyLive writes the rows of the data file add that drop does not hold into one new
// data file of w's table, in their order, as the copy-on-write rewrite of a touched
// file. It copies Parquet values column by column: nothing is converted to Go values
// or shredded again, and the statistics are recomputed from the values kept. The new
// file keeps add's partition values and its row groups (less the dropped rows), so it
// is no larger than add's file even when that exceeds the target file size.
//
// ok is false, and nothing is written, when the fast copy does not apply: the table
// has nested columns, or the file's Parquet schema is not exactly the one w writes
// (a file from before a schema change, or one another writer wrote with other
// physical types). The caller then reads the rows (Read) and writes them (Write).
//
// Up to parallel columns are decoded, filtered and encoded at once (at least one).
func (w *Writer) CopyLive(ctx context.Context, store deltalog.Store, add *deltalog.Add, drop *roaring64.Bitmap, parallel int) (res Copied, ok bool, err error) {
	return w.CopyLiveWith(ctx, store, []Source{{Add: add, Drop: drop}}, nil, parallel)
}

// CopyLiveWith is CopyLive of each of srcs in turn into one file, followed by rows
// (aligned with the schema fields, of the sources' partition), written after the
// copied ones: small files and a few new rows become one file, without decoding the
// files' rows. Copied.Rows counts the copied rows only; the file holds Rows +
// len(rows), in one row group unless a single source is copied alone or the
// rows outgrow a row group (RowGroupRows, RowGroupSize): groups then close
// between input row groups, within RowGroupRows unless one input group alone
// holds more, and appended rows are cut at RowGroupRows. ok is false as for
// CopyLive, and when the sources' partition values differ.
func (w *Writer) CopyLiveWith(ctx context.Context, store deltalog.Store, srcs []Source, rows [][]any, parallel int) (res Copied, ok bool, err error) {
	for i, r := range rows {
		if len(r) != len(w.opts.Schema.Fields) {
			return Copied{}, false, &ValueError{Row: i, Column: "*", Err: fmt.Errorf("%w: row has %d values, schema %d columns", ErrSchema, len(r), len(w.opts.Schema.Fields))}
		}
	}
	leaves, flat := w.flatLeaves()
	if !flat {
		return Copied{}, false, nil
	}
	if len(srcs) == 0 {
		return Copied{}, false, fmt.Errorf("datafile: %w: no file to copy", ErrSchema)
	}
	part, err := w.partitionValuesOf(srcs[0].Add)
	if err != nil {
		return Copied{}, false, fmt.Errorf("data file %s: %w", srcs[0].Add.Path, err)
	}
	in := make([]copyInput, len(srcs))
	size := 0
	for i, src := range srcs {
		key, err := objectKey(store, src.Add.Path)
		if err != nil {
			return Copied{}, false, err
		}
		if p, err := w.partitionValuesOf(src.Add); err != nil || !slices.EqualFunc(p, part, sameValue) {
			return Copied{}, false, nil
		}
		data, err := fetch(ctx, store, key, src.Add.Size)
		if err != nil {
			return Copied{}, false, err
		}
		f, err := openChecked(data)
		if err != nil {
			return Copied{}, false, &deltalog.CorruptFileError{Path: key, Err: err}
		}
		if !sameFlatSchema(f.Schema(), w.schema) {
			return Copied{}, false, nil
		}
		in[i] = copyInput{key: key, f: f, dropped: denseBitmap(src.Drop, f.NumRows())}
		size += len(data)
		res.SourceRows += f.NumRows()
	}
	// With rows to append or several files, everything goes into one row
	// group as long as it is not full: a file that takes a few rows per
	// commit would otherwise gain a row group (and its metadata) each time.
	res.Sources, err = w.copyRowGroups(ctx, in, leaves, size, parallel, len(rows) > 0 || len(srcs) > 1)
	if err != nil {
		if ctx.Err() != nil {
			return Copied{}, false, ctx.Err()
		}
		return Copied{}, false, err
	}
	for _, c := range res.Sources {
		res.Rows += c.Rows
	}
	if len(rows) > 0 {
		if err := w.appendRows(ctx, rows, res.Rows > 0); err != nil {
			return Copied{}, false, err
		}
	}
	if res.Rows == 0 && len(rows) == 0 {
		return res, true, nil
	}
	out, err := w.finish(ctx, store, part, res.Rows+int64(len(rows)), 0)
	if err != nil {
		return Copied{}, false, err
	}
	res.Add = &out
	return res, true, nil
}

// appendRows writes rows into the file buffer after what copyRowGroups copied, in the
// same row group until it is full; with nothing copied it starts the file afresh, so
// that no empty row group precedes them.
func (w *Writer) appendRows(ctx context.Context, rows [][]any, copied bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("datafile: writing parquet: %v", r)
		}
	}()
	if !copied {
		w.newFile()
		for _, s := range w.stats {
			s.reset()
		}
	}
	// One file whatever its size: the caller reported one add for the copy.
	_, err = w.writeRows(ctx, batch{rows: rows}, allRows(len(rows)), math.MaxInt64)
	return err
}

// flatLeaves returns the plan's leaf per Parquet column when every data column is a
// top-level primitive: then each column holds one value per row.
func (w *Writer) flatLeaves() ([]*wnode, bool) {
	leaves := make([]*wnode, len(w.plan.children))
	for i, c := range w.plan.children {
		if c.kind != nodeLeaf || c.col != i {
			return nil, false
		}
		leaves[i] = c
	}
	return leaves, true
}

// partitionValuesOf returns add's partition values in the order of w's partition
// columns.
func (w *Writer) partitionValuesOf(add *deltalog.Add) ([]*string, error) {
	part := make([]*string, len(w.partNames))
	for i, n := range w.partNames {
		v, ok := add.PartitionValues[n]
		if !ok {
			return nil, fmt.Errorf("%w: no value for partition column %q", ErrSchema, n)
		}
		part[i] = v
	}
	return part, nil
}

// sameValue reports whether two partition values are equal (nil is null).
func sameValue(a, b *string) bool {
	return a == b || a != nil && b != nil && *a == *b
}

// openChecked opens a Parquet file held in memory after the checks Read makes; a
// panic of parquet-go on malformed input becomes an error.
func openChecked(data []byte) (f *parquet.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("malformed parquet: %v", r)
		}
	}()
	if err := checkFraming(data); err != nil {
		return nil, err
	}
	f, err = parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, err
	}
	if err := checkPages(data, f, pageLimits{uncompressed: maxPageBytes, values: maxPageValues}); err != nil {
		return nil, err
	}
	return f, nil
}

// sameFlatSchema reports whether the file's columns are exactly those the writer
// writes: same names, order, repetition, field ids and physical and logical types.
// Values can then move from one to the other unchanged.
func sameFlatSchema(file, want *parquet.Schema) bool {
	a, b := file.Fields(), want.Fields()
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !x.Leaf() || !y.Leaf() || x.Name() != y.Name() || x.ID() != y.ID() ||
			x.Optional() != y.Optional() || x.Repeated() != y.Repeated() || x.Required() != y.Required() {
			return false
		}
		tx, ty := x.Type(), y.Type()
		if tx.Kind() != ty.Kind() || tx.Length() != ty.Length() || !reflect.DeepEqual(tx.LogicalType(), ty.LogicalType()) {
			return false
		}
	}
	return true
}

// denseBitmap turns drop into a bit per physical row, which is cheaper to test once per
// value than the roaring bitmap.
func denseBitmap(drop *roaring64.Bitmap, rows int64) []uint64 {
	bits := make([]uint64, (rows+63)/64)
	if drop == nil {
		return bits
	}
	for it := drop.Iterator(); it.HasNext(); {
		r := it.Next()
		if r < uint64(rows) {
			bits[r/64] |= 1 << (r % 64)
		}
	}
	return bits
}

// copyInput is a source file opened for copyRowGroups.
type copyInput struct {
	key     string
	f       *parquet.File
	dropped []uint64 // a bit per physical row
}

// copyRowGroups copies the kept rows of every row group of each input in turn into a
// fresh file buffer, one output row group per input row group (when oneGroup, as few
// as the row group bounds allow, closed only between input row groups), and returns
// what each input gave. Up to parallel columns are copied at
// once: parquet-go's column writers share nothing but the codec until the row group is
// flushed, and the codecs of concurrentCodec are safe for concurrent use. sizeHint
// presizes the file buffer (the new file is about as large as the inputs). A malformed
// input fails with a CorruptFileError naming it.
func (w *Writer) copyRowGroups(ctx context.Context, in []copyInput, leaves []*wnode, sizeHint, parallel int, oneGroup bool) (out []SourceCopied, err error) {
	if !w.codec.concurrent {
		parallel = 1
	}
	w.newFile()
	w.buf.Grow(sizeHint)
	for _, s := range w.stats {
		s.reset()
	}
	// One value buffer per column copied at once, not per column: the
	// errgroup's limit bounds how many are out.
	slots := min(max(parallel, 1), max(len(leaves), 1))
	bufs := make(chan []parquet.Value, slots)
	for range slots {
		bufs <- make([]parquet.Value, 1024)
	}
	out = make([]SourceCopied, len(in))
	for i, src := range in {
		last := i == len(in)-1
		if out[i], err = w.copyFile(ctx, src, leaves, slots, bufs, oneGroup, last); err != nil {
			return nil, &deltalog.CorruptFileError{Path: src.key, Err: err}
		}
	}
	return out, nil
}

// copyFile copies one input's kept rows for copyRowGroups, flushing a row
// group after each of its row groups unless oneGroup (and after its last
// one unless it is the last input), before one that would take the group
// past RowGroupRows and after one that fills it (RowGroupRows, RowGroupSize).
func (w *Writer) copyFile(ctx context.Context, src copyInput, leaves []*wnode, slots int, bufs chan []parquet.Value, oneGroup, last bool) (c SourceCopied, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed parquet: %v", r)
		}
	}()
	var base int64
	groups := src.f.RowGroups()
	for g, rg := range groups {
		n := rg.NumRows()
		if base+n > src.f.NumRows() {
			return c, fmt.Errorf("footer claims %d rows, row groups more", src.f.NumRows())
		}
		kept := int64(0)
		for r := base; r < base+n; r++ {
			if src.dropped[r/64]&(1<<(r%64)) == 0 {
				kept++
			}
		}
		// A row group that this one would take past RowGroupRows closes
		// first: groups stay within the bound unless one input group alone
		// exceeds it.
		if w.rgRows > 0 && w.rgRows+kept > w.opts.RowGroupRows {
			if err := w.closeGroup(); err != nil {
				return c, err
			}
		}
		chunks := rg.ColumnChunks()
		cws := w.pw.ColumnWriters()
		if len(chunks) != len(leaves) || len(cws) != len(leaves) {
			return c, fmt.Errorf("row group %d has %d columns, want %d", g, len(chunks), len(leaves))
		}
		eg, ectx := errgroup.WithContext(ctx)
		eg.SetLimit(slots)
		for col, chunk := range chunks {
			eg.Go(func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("malformed parquet: %v", r)
					}
				}()
				if err := ectx.Err(); err != nil {
					return err
				}
				buf := <-bufs
				defer func() { bufs <- buf }()
				if err := copyColumn(chunk, cws[col], leaves[col], base, n, src.dropped, buf); err != nil {
					return fmt.Errorf("column %s: %w", leaves[col].path, err)
				}
				return nil
			})
		}
		if err := eg.Wait(); err != nil {
			return c, err
		}
		c.Rows += kept
		w.rgRows += kept
		base += n
		if w.groupFull() || !oneGroup && !(last && g == len(groups)-1) {
			if err := w.closeGroup(); err != nil {
				return c, err
			}
		}
	}
	if base != src.f.NumRows() {
		return c, fmt.Errorf("footer claims %d rows, row groups %d", src.f.NumRows(), base)
	}
	c.SourceRows = base
	return c, nil
}

// copyColumn writes the values of one column chunk whose rows are not dropped to cw,
// feeding the column's statistics. Rows of the chunk are base..base+n-1; buf is the
// caller's scratch space: the kept values move to its front and go to cw while
// their page still holds their bytes.
func copyColumn(chunk parquet.ColumnChunk, cw *parquet.ColumnWriter, leaf *wnode, base, n int64, dropped []uint64, buf []parquet.Value) error {
	row, end := base, base+n
	err := eachValues(chunk.Pages(), buf, func(vals []parquet.Value) error {
		if row+int64(len(vals)) > end {
			return fmt.Errorf("more values than the row group's %d rows", end)
		}
		j := 0
		for _, v := range vals {
			r := row
			row++
			if dropped[r/64]&(1<<(r%64)) != 0 {
				continue
			}
			leaf.stat(v)
			vals[j] = v
			j++
		}
		// (An empty slice is not written: parquet-go's buffers do pointer
		// arithmetic on it that the race detector's checkptr refuses.)
		if j > 0 {
			if _, err := cw.WriteRowValues(vals[:j]); err != nil {
				return fmt.Errorf("writing values: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if row != end {
		return fmt.Errorf("%d values for %d rows", row-base, n)
	}
	return nil
}

// stat feeds one value of a flat leaf into its statistics, as value does for Go values.
func (n *wnode) stat(v parquet.Value) {
	st := n.stats
	if st == nil {
		return
	}
	if v.IsNull() {
		st.nulls++
		return
	}
	switch n.leaf {
	case leafInt8, leafInt16, leafInt32, leafDate:
		st.int(int64(v.Int32()))
	case leafInt64, leafTimestamp, leafTimestampNTZ:
		st.int(v.Int64())
	case leafFloat:
		st.float(float64(v.Float()))
	case leafDouble:
		st.float(v.Double())
	case leafString:
		st.strBytes(v.ByteArray())
	case leafDecimal32:
		st.decimal(decimal128.FromInt64(int64(v.Int32())))
	case leafDecimal64:
		st.decimal(decimal128.FromInt64(v.Int64()))
	case leafDecimalFixed:
		if d, ok := decimal128.FromBytes(v.ByteArray()); ok {
			st.decimal(d)
		} else {
			st.unbounded = true // a bound that might be wrong is never written
		}
	}
}
