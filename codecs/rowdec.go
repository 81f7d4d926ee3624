package codecs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// rowDecoder reads a row or key record from Avro binary straight into its
// layout's column slots, as the Go values goavro would give (ADR 0033),
// without goavro's map of the record and of every union. It covers records
// whose fields are primitives or [null, primitive] unions: every Debezium
// SQL Server row and key. Other shapes keep goavro.
type rowDecoder struct {
	// image: the bytes are a [null, record] union (an envelope's before or
	// after), whose null branch is nullAt; else a bare record (a key).
	image  bool
	nullAt int64
	fields []fieldDecoder
}

type fieldDecoder struct {
	prim   primKind
	nullAt int64 // the null branch of a nullable field's union; -1: not a union
}

type primKind uint8

const (
	primBoolean primKind = iota
	primInt
	primLong
	primFloat
	primDouble
	primBytes
	primString
)

var primKinds = map[string]primKind{
	"boolean": primBoolean, "int": primInt, "long": primLong, "float": primFloat,
	"double": primDouble, "bytes": primBytes, "string": primString,
}

// newRowDecoder compiles the decoder of node, a record or a [null, record]
// union, whose fields must be l's columns in order. The error says why a
// shape is not covered; the caller then keeps goavro.
func newRowDecoder(node any, ns string, names map[string]map[string]any, l *Layout) (*rowDecoder, error) {
	rd := &rowDecoder{nullAt: -1}
	if u, ok := node.([]any); ok {
		branch, nullAt, err := nullUnion(u)
		if err != nil {
			return nil, err
		}
		rd.image, rd.nullAt, node = true, nullAt, branch
	}
	rec := resolveRecord(node, ns, names)
	if rec == nil {
		return nil, fmt.Errorf("%v is not a record", node)
	}
	fields, _ := rec["fields"].([]any)
	if len(fields) != len(l.Columns) {
		return nil, fmt.Errorf("record has %d fields, the layout %d columns", len(fields), len(l.Columns))
	}
	for i, f := range fields {
		fm, _ := f.(map[string]any)
		if name, _ := fm["name"].(string); name != l.Columns[i].AvroName {
			return nil, fmt.Errorf("field %d is %q, column %q", i, name, l.Columns[i].AvroName)
		}
		fd := fieldDecoder{nullAt: -1}
		t := fm["type"]
		if u, ok := t.([]any); ok {
			var err error
			if t, fd.nullAt, err = nullUnion(u); err != nil {
				return nil, fmt.Errorf("field %q: %w", l.Columns[i].AvroName, err)
			}
		}
		if m, ok := t.(map[string]any); ok {
			t = m["type"]
		}
		name, _ := t.(string)
		k, ok := primKinds[name]
		if !ok {
			return nil, fmt.Errorf("field %q: type %v is not a primitive", l.Columns[i].AvroName, t)
		}
		fd.prim = k
		rd.fields = append(rd.fields, fd)
	}
	return rd, nil
}

// nullUnion returns the other branch of a two-branch union with null, and
// the null branch's index.
func nullUnion(u []any) (branch any, nullAt int64, err error) {
	if len(u) == 2 {
		switch {
		case u[0] == "null" && u[1] != "null":
			return u[1], 0, nil
		case u[1] == "null" && u[0] != "null":
			return u[0], 1, nil
		}
	}
	return nil, 0, fmt.Errorf("union %v is not [null, T]", u)
}

// resolveRecord returns the record node names, inline or by (full or short) name.
func resolveRecord(node any, ns string, names map[string]map[string]any) map[string]any {
	switch n := node.(type) {
	case map[string]any:
		if n["type"] == "record" {
			return n
		}
	case string:
		if !strings.Contains(n, ".") && ns != "" {
			if r := names[ns+"."+n]; r != nil && r["type"] == "record" {
				return r
			}
		}
		if r := names[n]; r != nil && r["type"] == "record" {
			return r
		}
	}
	return nil
}

// errNullImage reports an image union on its null branch.
var errNullImage = errors.New("null row image")

// rawValue is one field as its wire bytes gave it, unboxed: a boolean,
// int or long in n, a float's or double's bits in n, bytes or a string's
// bytes in b (aliasing the record). null marks a union's null branch.
type rawValue struct {
	null bool
	n    int64
	b    []byte
}

// rawStack is the row width whose raw values live on the stack.
const rawStack = 32

// rawScratch returns n raw values, in stack when they fit.
func rawScratch(stack *[rawStack]rawValue, n int) []rawValue {
	if n <= rawStack {
		return stack[:n]
	}
	return make([]rawValue, n)
}

// decodeRaw reads one record from b, which it must consume exactly, into
// raw (len(fields)): every field's wire value, valid while b is, for
// convertRaw. Malformed bytes fail as goavro fails on them.
func (rd *rowDecoder) decodeRaw(b []byte, raw []rawValue) error {
	var err error
	if rd.image {
		var i int64
		if i, b, err = readLong(b); err != nil {
			return err
		}
		switch {
		case i < 0 || i > 1:
			return fmt.Errorf("union index %d of 2", i)
		case i == rd.nullAt:
			if len(b) != 0 {
				return fmt.Errorf("%d trailing bytes", len(b))
			}
			return errNullImage
		}
	}
	for i := range rd.fields {
		f := &rd.fields[i]
		if f.nullAt >= 0 {
			var u int64
			if u, b, err = readLong(b); err != nil {
				return err
			}
			if u < 0 || u > 1 {
				return fmt.Errorf("union index %d of 2", u)
			}
			if u == f.nullAt {
				raw[i] = rawValue{null: true}
				continue
			}
		}
		if b, err = f.read(b, &raw[i]); err != nil {
			return err
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("%d trailing bytes", len(b))
	}
	return nil
}

// read reads one value of the field's primitive type into r.
func (f *fieldDecoder) read(b []byte, r *rawValue) ([]byte, error) {
	*r = rawValue{}
	switch f.prim {
	case primBoolean:
		if len(b) < 1 {
			return nil, errShort
		}
		if b[0] > 1 {
			return nil, fmt.Errorf("boolean byte %d", b[0])
		}
		r.n = int64(b[0])
		return b[1:], nil
	case primInt:
		v, rest, err := readInt(b)
		if err != nil {
			return nil, err
		}
		r.n = int64(v)
		return rest, nil
	case primLong:
		v, rest, err := readLong(b)
		if err != nil {
			return nil, err
		}
		r.n = v
		return rest, nil
	case primFloat:
		if len(b) < 4 {
			return nil, errShort
		}
		r.n = int64(binary.LittleEndian.Uint32(b))
		return b[4:], nil
	case primDouble:
		if len(b) < 8 {
			return nil, errShort
		}
		r.n = int64(binary.LittleEndian.Uint64(b))
		return b[8:], nil
	default: // primBytes, primString
		v, rest, err := readBytes(b)
		if err != nil {
			return nil, err
		}
		r.b = v
		return rest, nil
	}
}

// box returns a non-null raw value as the Go value goavro gives: bytes
// alias the record, as goavro's do; a string is copied.
func (f *fieldDecoder) box(r *rawValue) any {
	switch f.prim {
	case primBoolean:
		return r.n == 1
	case primInt:
		return int32(r.n)
	case primLong:
		return r.n
	case primFloat:
		return math.Float32frombits(uint32(r.n))
	case primDouble:
		return math.Float64frombits(uint64(r.n))
	case primBytes:
		return r.b
	default: // primString
		return string(r.b)
	}
}
