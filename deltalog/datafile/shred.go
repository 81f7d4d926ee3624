package datafile

import (
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// shredder turns rows of Go values into parquet-go values with Dremel levels, gathered
// per column in cols. Flat schemas (no lists or maps) give every leaf exactly one value
// per row, so appendColumns can batch many rows column by column; with repeated fields
// shred turns one row at a time into a parquet.Row, which must hold each column's values
// contiguously.
type shredder struct {
	root *wnode
	flat bool
	cols [][]parquet.Value
}

func newShredder(root *wnode, numCols int) *shredder {
	return &shredder{root: root, flat: !hasRepeated(root), cols: make([][]parquet.Value, numCols)}
}

// appendColumns shreds one row of a flat schema onto the per-column batches in s.cols:
// with no repeated fields each row adds exactly one value to every column, so the
// batches stay row-aligned and can go to parquet-go's column writers directly.
func (s *shredder) appendColumns(values []any) error {
	for i, c := range s.root.children {
		if err := s.write(c, values[i], 0); err != nil {
			return err
		}
	}
	return nil
}

func hasRepeated(n *wnode) bool {
	if n.kind == nodeList || n.kind == nodeMap {
		return true
	}
	for _, c := range n.children {
		if hasRepeated(c) {
			return true
		}
	}
	return false
}

// shred appends the Parquet values of one data row (already stripped of partition
// columns) to dst and returns it.
func (s *shredder) shred(dst parquet.Row, values []any) (parquet.Row, error) {
	for i := range s.cols {
		s.cols[i] = s.cols[i][:0]
	}
	if err := s.appendColumns(values); err != nil {
		return dst, err
	}
	for _, vs := range s.cols {
		dst = append(dst, vs...)
	}
	return dst, nil
}

func (s *shredder) emit(v parquet.Value, col int) {
	s.cols[col] = append(s.cols[col], v)
}

// nulls writes a null at definition level def for every leaf below n.
func (s *shredder) nulls(n *wnode, rep, def uint8) {
	if n.stats != nil {
		n.stats.nulls++
	}
	if n.kind == nodeLeaf {
		s.emit(parquet.NullValue().Level(int(rep), int(def), n.col), n.col)
		return
	}
	if n.kind != nodeStruct {
		// The repeated group is absent: one null per leaf of the element, key or value.
		for _, c := range n.children {
			s.nullsNoStats(c, rep, def)
		}
		return
	}
	for _, c := range n.children {
		s.nulls(c, rep, def)
	}
}

func (s *shredder) nullsNoStats(n *wnode, rep, def uint8) {
	if n.kind == nodeLeaf {
		s.emit(parquet.NullValue().Level(int(rep), int(def), n.col), n.col)
		return
	}
	for _, c := range n.children {
		s.nullsNoStats(c, rep, def)
	}
}

func (s *shredder) write(n *wnode, v any, rep uint8) error {
	if v == nil {
		if !n.optional {
			return &ValueError{Column: n.path, Err: ErrNull}
		}
		s.nulls(n, rep, n.def-1)
		return nil
	}
	switch n.kind {
	case nodeStruct:
		fields, ok := v.([]any)
		if !ok || len(fields) != len(n.children) {
			return typeErr(n, v)
		}
		for i, c := range n.children {
			if err := s.write(c, fields[i], rep); err != nil {
				return err
			}
		}
		return nil
	case nodeList:
		items, ok := v.([]any)
		if !ok {
			return typeErr(n, v)
		}
		if len(items) == 0 {
			s.nullsNoStats(n.children[0], rep, n.def)
			return nil
		}
		for i, it := range items {
			r := rep
			if i > 0 {
				r = n.rep
			}
			if err := s.write(n.children[0], it, r); err != nil {
				return err
			}
		}
		return nil
	case nodeMap:
		kvs, ok := v.([]KV)
		if !ok {
			return typeErr(n, v)
		}
		if len(kvs) == 0 {
			s.nullsNoStats(n.children[0], rep, n.def)
			s.nullsNoStats(n.children[1], rep, n.def)
			return nil
		}
		for i, kv := range kvs {
			r := rep
			if i > 0 {
				r = n.rep
			}
			if err := s.write(n.children[0], kv.Key, r); err != nil {
				return err
			}
			if err := s.write(n.children[1], kv.Value, r); err != nil {
				return err
			}
		}
		return nil
	}
	pv, err := n.value(v)
	if err != nil {
		return err
	}
	s.emit(pv.Level(int(rep), int(n.def), n.col), n.col)
	return nil
}

// KV is one entry of a map value.
type KV struct {
	Key   any
	Value any
}

func typeErr(n *wnode, v any) error {
	return &ValueError{Column: n.path, Err: fmt.Errorf("%w: %s cannot hold %T", ErrValueType, n.typ, v)}
}

// value converts a non-nil Go value for leaf n and feeds the column statistics.
func (n *wnode) value(v any) (parquet.Value, error) {
	st := n.stats
	switch n.leaf {
	case leafBool:
		b, ok := v.(bool)
		if !ok {
			return parquet.Value{}, typeErr(n, v)
		}
		return parquet.BooleanValue(b), nil
	case leafInt8, leafInt16, leafInt32, leafDate:
		i, ok := intValue(n.leaf, v)
		if !ok {
			return parquet.Value{}, typeErr(n, v)
		}
		if st != nil {
			st.int(i)
		}
		return parquet.Int32Value(int32(i)), nil
	case leafInt64, leafTimestamp, leafTimestampNTZ:
		var i int64
		switch x := v.(type) {
		case int64:
			i = x
		case int:
			i = int64(x)
		case time.Time:
			if n.leaf == leafInt64 {
				return parquet.Value{}, typeErr(n, v)
			}
			i = timeMicros(x, n.leaf == leafTimestampNTZ)
		default:
			return parquet.Value{}, typeErr(n, v)
		}
		if st != nil {
			st.int(i)
		}
		return parquet.Int64Value(i), nil
	case leafFloat:
		f, ok := v.(float32)
		if !ok {
			return parquet.Value{}, typeErr(n, v)
		}
		if st != nil {
			st.float(float64(f))
		}
		return parquet.FloatValue(f), nil
	case leafDouble:
		f, ok := v.(float64)
		if !ok {
			return parquet.Value{}, typeErr(n, v)
		}
		if st != nil {
			st.float(f)
		}
		return parquet.DoubleValue(f), nil
	case leafString, leafBinary:
		var b []byte
		switch x := v.(type) {
		case string:
			if st != nil {
				st.str(x)
			}
			// Zero-copy view: parquet-go copies byte arrays into its column buffers.
			b = unsafe.Slice(unsafe.StringData(x), len(x))
		case []byte:
			if st != nil && n.leaf == leafString {
				st.str(string(x))
			}
			b = x
		default:
			return parquet.Value{}, typeErr(n, v)
		}
		return parquet.ByteArrayValue(b), nil
	case leafDecimal32, leafDecimal64, leafDecimalFixed:
		d, ok := v.(decimal128.Num)
		if !ok {
			return parquet.Value{}, typeErr(n, v)
		}
		if !d.FitsPrecision(n.precision) {
			return parquet.Value{}, &ValueError{Column: n.path, Err: ErrDecimalRange}
		}
		if st != nil {
			st.decimal(d)
		}
		switch n.leaf {
		case leafDecimal32:
			return parquet.Int32Value(int32(d.Lo)), nil
		case leafDecimal64:
			return parquet.Int64Value(int64(d.Lo)), nil
		}
		return parquet.FixedLenByteArrayValue(d.AppendBytes(make([]byte, 0, n.fixedLen), n.fixedLen)), nil
	}
	return parquet.Value{}, typeErr(n, v)
}

// intValue accepts the exact Go type of a 32-bit-or-narrower column, or an int in range.
func intValue(k leafKind, v any) (int64, bool) {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	var i int64
	switch x := v.(type) {
	case int8:
		if k != leafInt8 {
			return 0, false
		}
		return int64(x), true
	case int16:
		if k != leafInt16 {
			return 0, false
		}
		return int64(x), true
	case int32:
		if k != leafInt32 && k != leafDate {
			return 0, false
		}
		return int64(x), true
	case int:
		i = int64(x)
	default:
		return 0, false
	}
	switch k {
	case leafInt8:
		lo, hi = math.MinInt8, math.MaxInt8
	case leafInt16:
		lo, hi = math.MinInt16, math.MaxInt16
	}
	return i, i >= lo && i <= hi
}

// timeMicros converts a time.Time: an instant for timestamp, the wall clock for
// timestamp_ntz (which has no zone).
func timeMicros(t time.Time, wallClock bool) int64 {
	if wallClock {
		y, mo, d := t.Date()
		h, mi, sec := t.Clock()
		t = time.Date(y, mo, d, h, mi, sec, t.Nanosecond(), time.UTC)
	}
	return t.UnixMicro()
}
