package datafile

import (
	"context"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Column is one column of the rows WriteColumns takes: a value per row,
// typed where the column's type allows, so a batch of rows need not box
// each value into an interface and take it out again. Exactly one of Ints,
// Strs and Values holds the rows.
type Column struct {
	// Ints holds a byte, short, integer, date (days since 1970), long,
	// timestamp or timestamp_ntz (microseconds since 1970) column.
	Ints []int64
	// Strs holds a string or binary column.
	Strs []string
	// Values holds a column of any type as Write takes it: a Go value per
	// row, nil for null.
	Values []any
	// Null marks the null rows of Ints and Strs; nil when no row is null.
	Null []bool
}

// Len is the column's number of rows.
func (c *Column) Len() int {
	switch {
	case c.Ints != nil:
		return len(c.Ints)
	case c.Strs != nil:
		return len(c.Strs)
	}
	return len(c.Values)
}

func (c *Column) null(i int) bool { return c.Null != nil && c.Null[i] }

// at is row i's value as Write would take it for a leaf of kind k.
func (c *Column) at(i int, k leafKind) any {
	switch {
	case c.null(i):
		return nil
	case c.Ints != nil:
		switch k {
		case leafInt64, leafTimestamp, leafTimestampNTZ:
			return c.Ints[i]
		}
		// intValue takes an int in range for every narrower kind.
		return int(c.Ints[i])
	case c.Strs != nil:
		if k == leafBinary {
			return []byte(c.Strs[i])
		}
		return c.Strs[i]
	}
	return c.Values[i]
}

// WriteColumns is Write for rows given column by column, one Column per
// schema field (partition columns included), each holding the same number
// of rows. The files, their statistics and the adds are the ones Write
// makes of the same rows.
func (w *Writer) WriteColumns(ctx context.Context, store deltalog.Store, cols []Column) (adds []deltalog.Add, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("datafile: writing parquet: %v", r)
		}
	}()
	fields := w.opts.Schema.Fields
	if len(cols) != len(fields) {
		return nil, fmt.Errorf("%w: %d columns for a schema of %d", ErrSchema, len(cols), len(fields))
	}
	n := cols[0].Len()
	for i := range cols {
		if err := w.checkColumn(&cols[i], &fields[i], n); err != nil {
			return nil, err
		}
	}
	if !w.shred.flat {
		// Repeated fields go to parquet-go a row at a time anyway.
		rows := make([][]any, n)
		cells := make([]any, n*len(cols))
		for r := range rows {
			rows[r] = cells[r*len(cols) : (r+1)*len(cols) : (r+1)*len(cols)]
			for i := range cols {
				rows[r][i] = cols[i].at(r, w.leafOf(i))
			}
		}
		return w.Write(ctx, store, rows)
	}
	return w.writeGroups(ctx, store, batch{cols: cols})
}

// same reports whether rows i and j hold the same typed value (false for
// Values, which then take the slow way).
func (c *Column) same(i, j int) bool {
	if c.null(i) || c.null(j) {
		return false
	}
	switch {
	case c.Ints != nil:
		return c.Ints[i] == c.Ints[j]
	case c.Strs != nil:
		return c.Strs[i] == c.Strs[j]
	}
	return false
}

// leafOf is the leaf kind of schema field fi; a nested field's is unused.
func (w *Writer) leafOf(fi int) leafKind {
	k, _ := fieldLeaf(w.opts.Schema.Fields[fi].Type)
	return k
}

func fieldLeaf(t deltalog.Type) (leafKind, bool) {
	if p, ok := t.(deltalog.PrimitiveType); ok {
		return primitiveLeaf(p)
	}
	return 0, false
}

// checkColumn refuses a column of another length, or typed values its
// field's type cannot hold.
func (w *Writer) checkColumn(c *Column, f *deltalog.StructField, n int) error {
	set := 0
	for _, ok := range []bool{c.Ints != nil, c.Strs != nil, c.Values != nil} {
		if ok {
			set++
		}
	}
	if set > 1 || c.Len() != n || c.Null != nil && len(c.Null) != n {
		return fmt.Errorf("%w: column %s: %d rows, or more than one kind of values, where the first column has %d", ErrSchema, f.Name, c.Len(), n)
	}
	if n > 0 && set == 0 {
		return fmt.Errorf("%w: column %s has no values", ErrSchema, f.Name)
	}
	k, prim := fieldLeaf(f.Type)
	switch {
	case c.Ints != nil:
		switch k {
		case leafInt8, leafInt16, leafInt32, leafDate, leafInt64, leafTimestamp, leafTimestampNTZ:
			if prim {
				return nil
			}
		}
	case c.Strs != nil:
		if prim && (k == leafString || k == leafBinary) {
			return nil
		}
	default:
		return nil
	}
	return fmt.Errorf("%w: column %s of type %s given typed values it cannot hold", ErrValueType, f.Name, f.Type)
}

// batch is the rows a write takes: rows, or cols.
type batch struct {
	rows [][]any
	cols []Column
}

func (b batch) len() int {
	if b.cols != nil {
		return b.cols[0].Len()
	}
	return len(b.rows)
}

func allRows(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// writeColumns shreds the rows idx of a flat schema's columns onto
// w.shred.cols: typed columns straight into Parquet values, Values ones as
// Write does.
func (w *Writer) writeColumns(cols []Column, idx []int) error {
	s := w.shred
	for j, fi := range w.dataIdx {
		c := &cols[fi]
		nd := s.root.children[j]
		if c.Values != nil || nd.kind != nodeLeaf {
			for _, ri := range idx {
				if err := s.write(nd, c.at(ri, nd.leaf), 0); err != nil {
					return rowErr(err, ri)
				}
			}
			continue
		}
		var err error
		if s.cols[nd.col], err = appendTyped(s.cols[nd.col], nd, c, idx); err != nil {
			return err
		}
	}
	return nil
}

// appendTyped appends the rows idx of an Ints or Strs column to dst as
// Parquet values at nd's levels, and adds them to nd's statistics.
func appendTyped(dst []parquet.Value, nd *wnode, c *Column, idx []int) ([]parquet.Value, error) {
	lo, hi, wide := intRange(nd.leaf)
	st, def, ints := nd.stats, int(nd.def), c.Ints != nil
	dst = slices.Grow(dst, len(idx))
	// One null for the column: building it per row (Value.Level, not
	// inlined) was a third of this loop's time on mostly null columns.
	null := parquet.NullValue()
	if nd.optional {
		setLevels(&null, def-1, nd.col)
	}
	for _, ri := range idx {
		if c.null(ri) {
			if !nd.optional {
				return dst, &ValueError{Row: ri, Column: nd.path, Err: ErrNull}
			}
			if st != nil {
				st.nulls++
			}
			dst = append(dst, null)
			continue
		}
		var v parquet.Value
		if ints {
			x := c.Ints[ri]
			if x < lo || x > hi {
				return dst, &ValueError{Row: ri, Column: nd.path, Err: fmt.Errorf("%w: %d out of range for %s", ErrValueType, x, nd.typ)}
			}
			if st != nil {
				st.int(x)
			}
			if wide {
				v = parquet.Int64Value(x)
			} else {
				v = parquet.Int32Value(int32(x))
			}
		} else {
			x := c.Strs[ri]
			if st != nil {
				st.str(x)
			}
			// Zero-copy view: parquet-go copies byte arrays into its column buffers.
			v = parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(x), len(x)))
		}
		setLevels(&v, def, nd.col)
		dst = append(dst, v)
	}
	return dst, nil
}

// intRange is the range of values a leaf of kind k holds, and whether it is
// stored as INT64.
func intRange(k leafKind) (lo, hi int64, wide bool) {
	switch k {
	case leafInt8:
		return math.MinInt8, math.MaxInt8, false
	case leafInt16:
		return math.MinInt16, math.MaxInt16, false
	case leafInt32, leafDate:
		return math.MinInt32, math.MaxInt32, false
	}
	return math.MinInt64, math.MaxInt64, true
}

// setLevels is v.Level(0, def, col) in place: Level copies the value twice
// and is not inlined, a measurable part of a column of small values.
func setLevels(v *parquet.Value, def, col int) {
	v.SetDefinitionLevel(def)
	v.SetColumnIndex(col)
}
