package deltalog

// Type is a Delta data type: a PrimitiveType, DecimalType, *StructType, *ArrayType or *MapType.
type Type interface {
	// String returns the type as written in schema JSON for primitives ("long",
	// "decimal(10,2)") and the kind name for complex types ("struct", "array", "map").
	String() string
	isType()
}

// PrimitiveType is a Delta primitive type other than decimal.
type PrimitiveType string

// The Delta primitive types.
const (
	TypeString       PrimitiveType = "string"
	TypeLong         PrimitiveType = "long"
	TypeInteger      PrimitiveType = "integer"
	TypeShort        PrimitiveType = "short"
	TypeByte         PrimitiveType = "byte"
	TypeFloat        PrimitiveType = "float"
	TypeDouble       PrimitiveType = "double"
	TypeBoolean      PrimitiveType = "boolean"
	TypeBinary       PrimitiveType = "binary"
	TypeDate         PrimitiveType = "date"
	TypeTimestamp    PrimitiveType = "timestamp"
	TypeTimestampNTZ PrimitiveType = "timestamp_ntz"
)

func (p PrimitiveType) String() string { return string(p) }
func (PrimitiveType) isType()          {}

// DecimalType is decimal(Precision, Scale), Precision at most 38.
type DecimalType struct {
	Precision int
	Scale     int
}

func (DecimalType) isType() {}

// StructType is a record of named fields; a table schema is a StructType.
type StructType struct {
	Fields []StructField
}

func (*StructType) String() string { return "struct" }
func (*StructType) isType()        {}

// StructField is one named, possibly nullable field with free-form metadata (comments,
// column mapping ids and physical names). Metadata values are JSON values.
type StructField struct {
	Name     string
	Type     Type
	Nullable bool
	Metadata map[string]any
}

// ArrayType is a list of ElementType.
type ArrayType struct {
	ElementType  Type
	ContainsNull bool
}

func (*ArrayType) String() string { return "array" }
func (*ArrayType) isType()        {}

// MapType maps KeyType to ValueType.
type MapType struct {
	KeyType           Type
	ValueType         Type
	ValueContainsNull bool
}

func (*MapType) String() string { return "map" }
func (*MapType) isType()        {}
