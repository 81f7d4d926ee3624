package datafile

import (
	"fmt"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// nodeNull and nodeConst extend nodeKind for the reader: a column absent from the file
// (always null) and a partition column (one value for the whole file).
const (
	nodeNull nodeKind = iota + 100
	nodeConst
)

// rnode is the read plan of one requested field, resolved against the file schema.
type rnode struct {
	kind     nodeKind
	def      int // definition level at which the node is non-null
	repDef   int // list/map: definition level at which an element exists
	rep      int // list/map: repetition level of the repeated group
	leaf     int // leaf: index into reader.leaves
	probe    int // struct/list/map: a leaf whose levels say whether the node is null
	subtree  []int
	children []*rnode
	constVal any
}

// leafReader holds the decoded values of one Parquet column for the whole file.
type leafReader struct {
	col    *parquet.Column
	conv   func(parquet.Value) (any, error) // nil for probes, whose values are never used
	maxDef int
	vals   []any
	def    []uint8
	rep    []uint8
	starts []int // index of each row's first value; nil when the column is not repeated
}

// planner resolves Delta fields against the columns of one file.
type planner struct {
	mode   mappingMode
	leaves []*leafReader
	byCol  map[int]int
}

func (p *planner) leafFor(c *parquet.Column, conv func(parquet.Value) (any, error)) int {
	if i, ok := p.byCol[c.Index()]; ok {
		if conv != nil && p.leaves[i].conv == nil {
			p.leaves[i].conv = conv
		}
		return i
	}
	p.leaves = append(p.leaves, &leafReader{col: c, conv: conv, maxDef: c.MaxDefinitionLevel()})
	p.byCol[c.Index()] = len(p.leaves) - 1
	return len(p.leaves) - 1
}

// findColumn locates a field among the children of a file group: by field id in id mode,
// else by physical name.
func (p *planner) findColumn(parent *parquet.Column, f *deltalog.StructField) *parquet.Column {
	if p.mode == mappingID {
		id, ok := fieldID(f)
		if !ok {
			return nil
		}
		for _, c := range parent.Columns() {
			if c.ID() == id {
				return c
			}
		}
		return nil
	}
	return parent.Column(physicalName(f, p.mode))
}

// firstLeaf returns the first leaf column below c.
func firstLeaf(c *parquet.Column) *parquet.Column {
	for !c.Leaf() {
		cs := c.Columns()
		if len(cs) == 0 {
			return nil
		}
		c = cs[0]
	}
	return c
}

// field plans a field of type t stored as file column c. For a legacy list whose
// repeated node is the element itself, c is that repeated node.
func (p *planner) field(t deltalog.Type, c *parquet.Column) (*rnode, error) {
	n := &rnode{def: c.MaxDefinitionLevel()}
	start := len(p.leaves)
	defer func() { n.subtree = leafRange(start, len(p.leaves)) }()
	switch t := t.(type) {
	case *deltalog.StructType:
		if c.Leaf() {
			return nil, fmt.Errorf("%w: column %s is not a group", ErrSchema, c.Name())
		}
		n.kind = nodeStruct
		for i := range t.Fields {
			f := &t.Fields[i]
			fc := p.findColumn(c, f)
			if fc == nil {
				n.children = append(n.children, &rnode{kind: nodeNull})
				continue
			}
			child, err := p.field(f.Type, fc)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, child)
		}
		return n, p.setProbe(n, c)
	case *deltalog.ArrayType:
		n.kind = nodeList
		repeated, elem, err := listShape(c)
		if err != nil {
			return nil, err
		}
		n.repDef, n.rep = repeated.MaxDefinitionLevel(), repeated.MaxRepetitionLevel()
		if c.Repeated() {
			// A bare repeated field is a list that is never null.
			n.def = n.repDef - 1
		}
		e, err := p.field(t.ElementType, elem)
		if err != nil {
			return nil, err
		}
		n.children = []*rnode{e}
		return n, p.setProbe(n, c)
	case *deltalog.MapType:
		n.kind = nodeMap
		kv := c.Columns()
		if c.Leaf() || len(kv) != 1 || !kv[0].Repeated() || len(kv[0].Columns()) != 2 {
			return nil, fmt.Errorf("%w: column %s is not a map", ErrSchema, c.Name())
		}
		r := kv[0]
		n.repDef, n.rep = r.MaxDefinitionLevel(), r.MaxRepetitionLevel()
		kc, vc := r.Column("key"), r.Column("value")
		if kc == nil || vc == nil {
			kc, vc = r.Columns()[0], r.Columns()[1]
		}
		k, err := p.field(t.KeyType, kc)
		if err != nil {
			return nil, err
		}
		v, err := p.field(t.ValueType, vc)
		if err != nil {
			return nil, err
		}
		n.children = []*rnode{k, v}
		return n, p.setProbe(n, c)
	}
	if !c.Leaf() {
		return nil, fmt.Errorf("%w: column %s is a group, table type %s", ErrSchema, c.Name(), t)
	}
	conv, err := converter(t, c.Type())
	if err != nil {
		return nil, fmt.Errorf("column %s: %w", c.Name(), err)
	}
	n.kind = nodeLeaf
	n.leaf = p.leafFor(c, conv)
	return n, nil
}

func (p *planner) setProbe(n *rnode, c *parquet.Column) error {
	l := firstLeaf(c)
	if l == nil {
		return fmt.Errorf("%w: group %s has no columns", ErrSchema, c.Name())
	}
	// The probe lies below c, so it falls inside n's subtree range.
	n.probe = p.leafFor(l, nil)
	return nil
}

func leafRange(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// listShape finds the repeated group and the element of a list, accepting the 3-level
// standard layout and the legacy 2-level ones (parquet-format LogicalTypes.md rules).
func listShape(c *parquet.Column) (repeated, elem *parquet.Column, err error) {
	if c.Repeated() {
		return c, c, nil
	}
	cs := c.Columns()
	if c.Leaf() || len(cs) != 1 || !cs[0].Repeated() {
		return nil, nil, fmt.Errorf("%w: column %s is not a list", ErrSchema, c.Name())
	}
	r := cs[0]
	if r.Leaf() || len(r.Columns()) != 1 || r.Name() == "array" || r.Name() == c.Name()+"_tuple" {
		return r, r, nil
	}
	return r, r.Columns()[0], nil
}

// converter maps a Parquet value of the file's physical/logical type to the Go value of
// the Delta type, accepting every encoding Spark and delta-rs write.
func converter(t deltalog.Type, pt parquet.Type) (func(parquet.Value) (any, error), error) {
	kind := pt.Kind()
	mismatch := fmt.Errorf("%w: file type %s cannot be read as %s", ErrSchema, pt, t)
	if d, ok := t.(deltalog.DecimalType); ok {
		if lt := pt.LogicalType(); lt != nil {
			if fd, ok := lt.Value.(*format.DecimalType); ok && int(fd.Scale) != d.Scale {
				// Unscaled values at another scale would silently change magnitude.
				return nil, mismatch
			}
		}
		switch kind {
		case parquet.Int32:
			return func(v parquet.Value) (any, error) { return decimal128.FromInt64(int64(v.Int32())), nil }, nil
		case parquet.Int64:
			return func(v parquet.Value) (any, error) { return decimal128.FromInt64(v.Int64()), nil }, nil
		case parquet.FixedLenByteArray, parquet.ByteArray:
			return func(v parquet.Value) (any, error) {
				x, ok := decimal128.FromBytes(v.ByteArray())
				if !ok {
					return nil, ErrDecimalRange
				}
				return x, nil
			}, nil
		}
		return nil, mismatch
	}
	p, _ := t.(deltalog.PrimitiveType)
	switch p {
	case deltalog.TypeBoolean:
		if kind == parquet.Boolean {
			return func(v parquet.Value) (any, error) { return v.Boolean(), nil }, nil
		}
	case deltalog.TypeByte:
		if kind == parquet.Int32 {
			return func(v parquet.Value) (any, error) { return int8(v.Int32()), nil }, nil
		}
	case deltalog.TypeShort:
		if kind == parquet.Int32 {
			return func(v parquet.Value) (any, error) { return int16(v.Int32()), nil }, nil
		}
	case deltalog.TypeInteger, deltalog.TypeDate:
		if kind == parquet.Int32 {
			return func(v parquet.Value) (any, error) { return v.Int32(), nil }, nil
		}
	case deltalog.TypeLong:
		switch kind {
		case parquet.Int64:
			return func(v parquet.Value) (any, error) { return v.Int64(), nil }, nil
		case parquet.Int32:
			return func(v parquet.Value) (any, error) { return int64(v.Int32()), nil }, nil
		}
	case deltalog.TypeFloat:
		if kind == parquet.Float {
			return func(v parquet.Value) (any, error) { return v.Float(), nil }, nil
		}
	case deltalog.TypeDouble:
		switch kind {
		case parquet.Double:
			return func(v parquet.Value) (any, error) { return v.Double(), nil }, nil
		case parquet.Float:
			return func(v parquet.Value) (any, error) { return float64(v.Float()), nil }, nil
		}
	case deltalog.TypeString:
		if kind == parquet.ByteArray || kind == parquet.FixedLenByteArray {
			return func(v parquet.Value) (any, error) { return string(v.ByteArray()), nil }, nil
		}
	case deltalog.TypeBinary:
		if kind == parquet.ByteArray || kind == parquet.FixedLenByteArray {
			return func(v parquet.Value) (any, error) { return append([]byte{}, v.ByteArray()...), nil }, nil
		}
	case deltalog.TypeTimestamp, deltalog.TypeTimestampNTZ:
		switch kind {
		case parquet.Int96:
			return func(v parquet.Value) (any, error) { return int96Micros(v.Int96()), nil }, nil
		case parquet.Int64:
			switch timestampUnit(pt) {
			case time.Millisecond:
				return func(v parquet.Value) (any, error) { return v.Int64() * 1000, nil }, nil
			case time.Nanosecond:
				return func(v parquet.Value) (any, error) { return floorDiv(v.Int64(), 1000), nil }, nil
			}
			return func(v parquet.Value) (any, error) { return v.Int64(), nil }, nil
		}
	}
	return nil, mismatch
}

// timestampUnit reads the unit of an INT64 timestamp from its logical or converted type.
func timestampUnit(pt parquet.Type) time.Duration {
	if lt := pt.LogicalType(); lt != nil {
		if ts, ok := lt.Value.(*format.TimestampType); ok && ts.Unit.Value != nil {
			return ts.Unit.Value.Duration()
		}
	}
	if ct := pt.ConvertedType(); ct != nil && *ct == deprecated.TimestampMillis {
		return time.Millisecond
	}
	return time.Microsecond
}

// int96Micros converts Spark's legacy INT96 timestamp (nanoseconds of day, then the
// Julian day number) to microseconds since the epoch.
func int96Micros(v deprecated.Int96) int64 {
	const julianEpoch = 2440588
	nanos := int64(uint64(v[1])<<32 | uint64(v[0]))
	days := int64(v[2]) - julianEpoch
	return days*86400_000_000 + floorDiv(nanos, 1000)
}
