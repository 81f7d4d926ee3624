package datafile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Column mapping metadata keys and table properties (protocol §3.2).
const (
	metaPhysicalName  = "delta.columnMapping.physicalName"
	metaColumnID      = "delta.columnMapping.id"
	propMappingMode   = "delta.columnMapping.mode"
	parquetSchemaName = "spark_schema"
)

// mappingMode is the table's delta.columnMapping.mode.
type mappingMode int

const (
	mappingNone mappingMode = iota
	mappingName
	mappingID
)

func parseMappingMode(props map[string]string) (mappingMode, error) {
	switch v := props[propMappingMode]; v {
	case "", "none":
		return mappingNone, nil
	case "name":
		return mappingName, nil
	case "id":
		return mappingID, nil
	default:
		return 0, fmt.Errorf("datafile: unknown %s %q", propMappingMode, v)
	}
}

// physicalName is the name a field has in Parquet files and in stats and partition
// values: its mapped physical name when column mapping is on, else its logical name.
func physicalName(f *deltalog.StructField, mode mappingMode) string {
	if mode == mappingNone {
		return f.Name
	}
	if s, ok := f.Metadata[metaPhysicalName].(string); ok && s != "" {
		return s
	}
	return f.Name
}

// fieldID returns delta.columnMapping.id; metadata numbers may arrive as json.Number,
// float64 or a Go integer depending on who built the schema.
func fieldID(f *deltalog.StructField) (int, bool) {
	switch v := f.Metadata[metaColumnID].(type) {
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 32)
		return int(n), err == nil
	case float64:
		return int(v), v == float64(int32(v))
	case int:
		return v, true
	case int32:
		return int(v), true
	case int64:
		return int(v), v == int64(int32(v))
	}
	return 0, false
}

// nodeOptions say how Delta types become Parquet nodes.
type nodeOptions struct {
	mode mappingMode
	// delta encodes byte arrays DELTA_BYTE_ARRAY and integers
	// DELTA_BINARY_PACKED (Options.DeltaEncodings).
	delta bool
}

// parquetSchema builds the Parquet schema of the data fields (partition columns
// excluded), in schema order, with physical names and field ids under column mapping.
func parquetSchema(fields []deltalog.StructField, o nodeOptions) (*parquet.Schema, error) {
	root, err := structNode(fields, o)
	if err != nil {
		return nil, err
	}
	return parquet.NewSchema(parquetSchemaName, root), nil
}

func structNode(fields []deltalog.StructField, o nodeOptions) (parquet.Node, error) {
	mode := o.mode
	g := &orderedGroup{Group: parquet.Group{}}
	for i := range fields {
		f := &fields[i]
		n, err := typeNode(f.Type, o)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		n = repetition(n, f.Nullable)
		if mode != mappingNone {
			if id, ok := fieldID(f); ok {
				n = parquet.FieldID(n, id)
			}
		}
		name := physicalName(f, mode)
		if _, dup := g.Group[name]; dup {
			return nil, fmt.Errorf("datafile: duplicate column %q", name)
		}
		g.Group[name] = n
		g.fields = append(g.fields, &namedField{Node: n, name: name})
	}
	return g, nil
}

func repetition(n parquet.Node, nullable bool) parquet.Node {
	if nullable {
		return parquet.Optional(n)
	}
	return parquet.Required(n)
}

// typeNode maps a Delta type to a Parquet node per protocol §3.3.
func typeNode(t deltalog.Type, o nodeOptions) (parquet.Node, error) {
	switch t := t.(type) {
	case deltalog.PrimitiveType:
		n, err := primitiveNode(t)
		if err != nil || !o.delta {
			return n, err
		}
		switch n.Type().Kind() {
		case parquet.ByteArray:
			return parquet.Encoded(n, &parquet.DeltaByteArray), nil
		case parquet.Int32, parquet.Int64:
			return parquet.Encoded(n, &parquet.DeltaBinaryPacked), nil
		}
		return n, nil
	case deltalog.DecimalType:
		if t.Precision < 1 || t.Precision > 38 || t.Scale < 0 || t.Scale > t.Precision {
			return nil, fmt.Errorf("datafile: invalid decimal(%d,%d)", t.Precision, t.Scale)
		}
		switch {
		case t.Precision <= 9:
			return parquet.Decimal(t.Scale, t.Precision, parquet.Int32Type), nil
		case t.Precision <= 18:
			return parquet.Decimal(t.Scale, t.Precision, parquet.Int64Type), nil
		default:
			return parquet.Decimal(t.Scale, t.Precision, parquet.FixedLenByteArrayType(decimalBytes(t.Precision))), nil
		}
	case *deltalog.StructType:
		if len(t.Fields) == 0 {
			return nil, fmt.Errorf("datafile: empty struct")
		}
		return structNode(t.Fields, o)
	case *deltalog.ArrayType:
		elem, err := typeNode(t.ElementType, o)
		if err != nil {
			return nil, err
		}
		return parquet.List(repetition(elem, t.ContainsNull)), nil
	case *deltalog.MapType:
		k, err := typeNode(t.KeyType, o)
		if err != nil {
			return nil, err
		}
		v, err := typeNode(t.ValueType, o)
		if err != nil {
			return nil, err
		}
		return parquet.Map(k, repetition(v, t.ValueContainsNull)), nil
	}
	return nil, fmt.Errorf("datafile: unsupported type %v", t)
}

// primitiveNode is a primitive type's Parquet node, in the default encoding.
func primitiveNode(t deltalog.PrimitiveType) (parquet.Node, error) {
	switch t {
	case deltalog.TypeBoolean:
		return parquet.Leaf(parquet.BooleanType), nil
	case deltalog.TypeByte:
		return parquet.Int(8), nil
	case deltalog.TypeShort:
		return parquet.Int(16), nil
	case deltalog.TypeInteger:
		return parquet.Int(32), nil
	case deltalog.TypeLong:
		return parquet.Int(64), nil
	case deltalog.TypeFloat:
		return parquet.Leaf(parquet.FloatType), nil
	case deltalog.TypeDouble:
		return parquet.Leaf(parquet.DoubleType), nil
	case deltalog.TypeString:
		return parquet.String(), nil
	case deltalog.TypeBinary:
		return parquet.Leaf(parquet.ByteArrayType), nil
	case deltalog.TypeDate:
		return parquet.Date(), nil
	case deltalog.TypeTimestamp:
		return parquet.TimestampAdjusted(parquet.Microsecond, true), nil
	case deltalog.TypeTimestampNTZ:
		return parquet.TimestampAdjusted(parquet.Microsecond, false), nil
	}
	return nil, fmt.Errorf("datafile: unsupported type %q", string(t))
}

// orderedGroup is a Parquet group that keeps the Delta field order; parquet.Group sorts
// fields by name, which would reorder columns against the table schema.
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

func (g *orderedGroup) Fields() []parquet.Field { return g.fields }

// namedField names a node inside an orderedGroup. Value is only used by parquet-go's
// reflection paths, which this package never takes.
type namedField struct {
	parquet.Node
	name string
}

func (f *namedField) Name() string                          { return f.name }
func (f *namedField) Value(reflect.Value) (v reflect.Value) { return v }
