package datafile

import (
	"fmt"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// leafKind says how a Go value becomes a Parquet value.
type leafKind uint8

const (
	leafBool leafKind = iota
	leafInt8
	leafInt16
	leafInt32
	leafInt64
	leafFloat
	leafDouble
	leafString
	leafBinary
	leafDate
	leafTimestamp
	leafTimestampNTZ
	leafDecimal32
	leafDecimal64
	leafDecimalFixed
)

// nodeKind distinguishes leaves from the three nested shapes.
type nodeKind uint8

const (
	nodeLeaf nodeKind = iota
	nodeStruct
	nodeList
	nodeMap
)

// wnode is the write plan of one schema node: its Dremel levels, its leaf column and,
// for the columns that get statistics, the collector.
type wnode struct {
	kind     nodeKind
	leaf     leafKind
	path     string // logical dotted path, for errors
	optional bool
	def      uint8 // definition level when this node is non-null
	repDef   uint8 // list/map: definition level when an element exists
	rep      uint8 // list/map: repetition level of the repeated group
	col      int   // leaf: Parquet column index
	children []*wnode
	typ      deltalog.Type

	// decimal parameters
	scale     int
	precision int
	fixedLen  int

	stats *colStats // nil unless the column is indexed for data skipping
}

// planOptions select which columns collect statistics.
type planOptions struct {
	mode        mappingMode
	numIndexed  int             // -1 means all
	statsPaths  map[string]bool // logical dotted paths; overrides numIndexed when non-nil
	statsLeaves *[]*colStats
}

// buildPlan builds the plan for the data fields; the returned root is a required struct.
func buildPlan(fields []deltalog.StructField, o planOptions) (*wnode, int, error) {
	b := planBuilder{opts: o}
	root := &wnode{kind: nodeStruct}
	for i := range fields {
		f := &fields[i]
		c, err := b.node(f.Type, f.Nullable, 0, 0, f.Name, []string{physicalName(f, o.mode)}, false)
		if err != nil {
			return nil, 0, err
		}
		root.children = append(root.children, c)
	}
	return root, b.cols, nil
}

type planBuilder struct {
	opts  planOptions
	cols  int
	units int // stats-eligible units seen so far, in schema order
}

// node builds the plan for one field. parentDef and parentRep are the levels of the
// enclosing node; repeated is true below a list or map, where no statistics are kept.
func (b *planBuilder) node(t deltalog.Type, nullable bool, parentDef, parentRep uint8, path string, phys []string, repeated bool) (*wnode, error) {
	n := &wnode{path: path, optional: nullable, def: parentDef, typ: t}
	if nullable {
		n.def++
	}
	switch t := t.(type) {
	case *deltalog.StructType:
		n.kind = nodeStruct
		for i := range t.Fields {
			f := &t.Fields[i]
			c, err := b.node(f.Type, f.Nullable, n.def, parentRep, path+"."+f.Name, append(phys[:len(phys):len(phys)], physicalName(f, b.opts.mode)), repeated)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, c)
		}
		return n, nil
	case *deltalog.ArrayType:
		n.kind = nodeList
		b.collect(n, phys, path, repeated)
		n.repDef, n.rep = n.def+1, parentRep+1
		e, err := b.node(t.ElementType, t.ContainsNull, n.repDef, n.rep, path+".element", nil, true)
		if err != nil {
			return nil, err
		}
		n.children = []*wnode{e}
		return n, nil
	case *deltalog.MapType:
		n.kind = nodeMap
		b.collect(n, phys, path, repeated)
		n.repDef, n.rep = n.def+1, parentRep+1
		k, err := b.node(t.KeyType, false, n.repDef, n.rep, path+".key", nil, true)
		if err != nil {
			return nil, err
		}
		v, err := b.node(t.ValueType, t.ValueContainsNull, n.repDef, n.rep, path+".value", nil, true)
		if err != nil {
			return nil, err
		}
		n.children = []*wnode{k, v}
		return n, nil
	case deltalog.DecimalType:
		n.kind, n.scale, n.precision = nodeLeaf, t.Scale, t.Precision
		switch {
		case t.Precision <= 9:
			n.leaf = leafDecimal32
		case t.Precision <= 18:
			n.leaf = leafDecimal64
		default:
			n.leaf, n.fixedLen = leafDecimalFixed, decimalBytes(t.Precision)
		}
	case deltalog.PrimitiveType:
		n.kind = nodeLeaf
		k, ok := primitiveLeaf(t)
		if !ok {
			return nil, fmt.Errorf("datafile: column %s: unsupported type %q", path, string(t))
		}
		n.leaf = k
	default:
		return nil, fmt.Errorf("datafile: column %s: unsupported type %v", path, t)
	}
	n.col = b.cols
	b.cols++
	b.collect(n, phys, path, repeated)
	return n, nil
}

// primitiveLeaf maps a Delta primitive type to its leaf kind.
func primitiveLeaf(t deltalog.PrimitiveType) (leafKind, bool) {
	switch t {
	case deltalog.TypeBoolean:
		return leafBool, true
	case deltalog.TypeByte:
		return leafInt8, true
	case deltalog.TypeShort:
		return leafInt16, true
	case deltalog.TypeInteger:
		return leafInt32, true
	case deltalog.TypeLong:
		return leafInt64, true
	case deltalog.TypeFloat:
		return leafFloat, true
	case deltalog.TypeDouble:
		return leafDouble, true
	case deltalog.TypeString:
		return leafString, true
	case deltalog.TypeBinary:
		return leafBinary, true
	case deltalog.TypeDate:
		return leafDate, true
	case deltalog.TypeTimestamp:
		return leafTimestamp, true
	case deltalog.TypeTimestampNTZ:
		return leafTimestampNTZ, true
	}
	return 0, false
}

// collect attaches a statistics collector to a stats unit (a primitive leaf, or a whole
// array or map, outside any repeated group) if it is among the indexed columns.
func (b *planBuilder) collect(n *wnode, phys []string, path string, repeated bool) {
	if repeated {
		return
	}
	idx := b.units
	b.units++
	if b.opts.statsPaths != nil {
		if !pathSelected(b.opts.statsPaths, path) {
			return
		}
	} else if b.opts.numIndexed >= 0 && idx >= b.opts.numIndexed {
		return
	}
	n.stats = &colStats{path: phys, leaf: n.leaf, scale: n.scale, minmax: n.kind == nodeLeaf && minMaxEligible(n.leaf)}
	*b.opts.statsLeaves = append(*b.opts.statsLeaves, n.stats)
}

// pathSelected reports whether path or one of its parent structs is listed.
func pathSelected(paths map[string]bool, path string) bool {
	for {
		if paths[path] {
			return true
		}
		i := lastDot(path)
		if i < 0 {
			return false
		}
		path = path[:i]
	}
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}
