package sqlexpr

import (
	"fmt"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Kind is the kind of a SQL type.
type Kind uint8

// Type kinds, in Spark's numeric precedence order for the numeric ones.
const (
	KNull Kind = iota
	KBool
	KByte
	KShort
	KInt
	KLong
	KDecimal
	KFloat
	KDouble
	KString
	KBinary
	KDate
	KTimestamp
	KTimestampNTZ
	// KOther is a nested type (array, map, struct): only IS [NOT] NULL and
	// assignment of the column itself apply.
	KOther
)

// Type is a SQL type; P and S are a decimal's precision and scale.
type Type struct {
	Kind Kind
	P, S int
}

var (
	tNull   = Type{Kind: KNull}
	tBool   = Type{Kind: KBool}
	tInt    = Type{Kind: KInt}
	tLong   = Type{Kind: KLong}
	tDouble = Type{Kind: KDouble}
	tString = Type{Kind: KString}
)

// String renders the type as Spark SQL writes it.
func (t Type) String() string {
	switch t.Kind {
	case KNull:
		return "VOID"
	case KBool:
		return "BOOLEAN"
	case KByte:
		return "TINYINT"
	case KShort:
		return "SMALLINT"
	case KInt:
		return "INT"
	case KLong:
		return "BIGINT"
	case KDecimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.P, t.S)
	case KFloat:
		return "FLOAT"
	case KDouble:
		return "DOUBLE"
	case KString:
		return "STRING"
	case KBinary:
		return "BINARY"
	case KDate:
		return "DATE"
	case KTimestamp:
		return "TIMESTAMP"
	case KTimestampNTZ:
		return "TIMESTAMP_NTZ"
	}
	return "nested type"
}

func (t Type) integral() bool { return t.Kind >= KByte && t.Kind <= KLong }
func (t Type) numeric() bool  { return t.Kind >= KByte && t.Kind <= KDouble }
func (t Type) fractional() bool {
	return t.Kind == KFloat || t.Kind == KDouble
}
func (t Type) datetime() bool {
	return t.Kind == KDate || t.Kind == KTimestamp || t.Kind == KTimestampNTZ
}

// fromDelta maps a Delta column type.
func fromDelta(dt deltalog.Type) Type {
	switch t := dt.(type) {
	case deltalog.DecimalType:
		return Type{Kind: KDecimal, P: t.Precision, S: t.Scale}
	case deltalog.PrimitiveType:
		switch t {
		case deltalog.TypeBoolean:
			return tBool
		case deltalog.TypeByte:
			return Type{Kind: KByte}
		case deltalog.TypeShort:
			return Type{Kind: KShort}
		case deltalog.TypeInteger:
			return tInt
		case deltalog.TypeLong:
			return tLong
		case deltalog.TypeFloat:
			return Type{Kind: KFloat}
		case deltalog.TypeDouble:
			return tDouble
		case deltalog.TypeString:
			return tString
		case deltalog.TypeBinary:
			return Type{Kind: KBinary}
		case deltalog.TypeDate:
			return Type{Kind: KDate}
		case deltalog.TypeTimestamp:
			return Type{Kind: KTimestamp}
		case deltalog.TypeTimestampNTZ:
			return Type{Kind: KTimestampNTZ}
		}
	}
	return Type{Kind: KOther}
}

// integralDecimal is the decimal type that holds every value of an integral type.
func integralDecimal(t Type) Type {
	switch t.Kind {
	case KByte:
		return Type{Kind: KDecimal, P: 3}
	case KShort:
		return Type{Kind: KDecimal, P: 5}
	case KInt:
		return Type{Kind: KDecimal, P: 10}
	}
	return Type{Kind: KDecimal, P: 20}
}

// boundedDecimal caps a decimal type at precision 38 as Spark does with
// spark.sql.decimalOperations.allowPrecisionLoss (the default): integral digits are
// kept and the scale shrinks, to no less than 6 (or the scale itself if smaller).
func boundedDecimal(p, s int) Type {
	if p <= 38 {
		return Type{Kind: KDecimal, P: p, S: s}
	}
	intDigits := p - s
	minScale := min(s, 6)
	return Type{Kind: KDecimal, P: 38, S: max(38-intDigits, minScale)}
}

// widerDecimal is the decimal type both are compared or combined as: Spark's
// widerDecimalType, which past precision 38 keeps every integral digit and drops
// fraction digits, down to none (DECIMAL(38,0) with DECIMAL(38,10) is DECIMAL(38,0),
// so 0.6 compares as 1), unlike arithmetic's boundedDecimal.
func widerDecimal(a, b Type) Type {
	s := max(a.S, b.S)
	p := max(a.P-a.S, b.P-b.S) + s
	if p <= 38 {
		return Type{Kind: KDecimal, P: p, S: s}
	}
	return Type{Kind: KDecimal, P: 38, S: max(0, s-(p-38))}
}

// parseTypeName parses a CAST target as Spark writes types.
func parseTypeName(name string, args []int) (Type, bool) {
	switch strings.ToUpper(name) {
	case "BOOLEAN":
		return tBool, len(args) == 0
	case "TINYINT", "BYTE":
		return Type{Kind: KByte}, len(args) == 0
	case "SMALLINT", "SHORT":
		return Type{Kind: KShort}, len(args) == 0
	case "INT", "INTEGER":
		return tInt, len(args) == 0
	case "BIGINT", "LONG":
		return tLong, len(args) == 0
	case "FLOAT", "REAL":
		return Type{Kind: KFloat}, len(args) == 0
	case "DOUBLE":
		return tDouble, len(args) == 0
	case "STRING":
		return tString, len(args) == 0
	case "BINARY":
		return Type{Kind: KBinary}, len(args) == 0
	case "DATE":
		return Type{Kind: KDate}, len(args) == 0
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		return Type{Kind: KTimestamp}, len(args) == 0
	case "TIMESTAMP_NTZ":
		return Type{Kind: KTimestampNTZ}, len(args) == 0
	case "DECIMAL", "DEC", "NUMERIC":
		switch len(args) {
		case 0:
			return Type{Kind: KDecimal, P: 10}, true
		case 1:
			return Type{Kind: KDecimal, P: args[0]}, args[0] >= 1 && args[0] <= 38
		case 2:
			return Type{Kind: KDecimal, P: args[0], S: args[1]}, args[0] >= 1 && args[0] <= 38 && args[1] >= 0 && args[1] <= args[0]
		}
	}
	return Type{}, false
}
