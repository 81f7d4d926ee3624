package codecs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// Kind is the logical kind of a column, one per Delta primitive type.
type Kind uint8

// Column kinds. Each maps 1:1 to a Delta primitive type (see [Type.DeltaName]).
// The Go value a [Change] row holds for each kind is given in brackets; nil
// is SQL NULL for every kind.
const (
	KindInvalid      Kind = iota
	KindBoolean           // [bool]
	KindByte              // [int8]; SQL Server has no signed 8-bit type, kept for completeness
	KindShort             // [int16]; smallint and tinyint (0..255 does not fit Delta's signed byte)
	KindInteger           // [int32]
	KindLong              // [int64]
	KindFloat             // [float32]
	KindDouble            // [float64]
	KindDecimal           // [decimal128.Num], precision and scale in the Type
	KindString            // [string]
	KindBinary            // [[]byte], never aliasing the record buffer
	KindDate              // [int32] days since 1970-01-01
	KindTimestamp         // [int64] microseconds since the Unix epoch, an instant (UTC)
	KindTimestampNTZ      // [int64] microseconds since 1970-01-01T00:00, a wall-clock reading
	// KindTime is a SQL Server time(p): Delta has no time-of-day type, so it
	// is stored as a Delta long counting microseconds since midnight
	// [int64]; see ADR 0002.
	KindTime
)

var kindNames = [...]string{
	KindInvalid:      "invalid",
	KindBoolean:      "boolean",
	KindByte:         "byte",
	KindShort:        "short",
	KindInteger:      "integer",
	KindLong:         "long",
	KindFloat:        "float",
	KindDouble:       "double",
	KindDecimal:      "decimal",
	KindString:       "string",
	KindBinary:       "binary",
	KindDate:         "date",
	KindTimestamp:    "timestamp",
	KindTimestampNTZ: "timestamp_ntz",
	KindTime:         "time",
}

// String returns the kind's Delta name ("time" for KindTime).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Type is a column's logical type. Precision and Scale are set only for
// KindDecimal.
type Type struct {
	Kind      Kind
	Precision int
	Scale     int
}

// DecimalType returns decimal(p,s).
func DecimalType(p, s int) Type { return Type{Kind: KindDecimal, Precision: p, Scale: s} }

// DeltaName returns the type as written in a Delta schema string:
// "long", "decimal(19,4)", "timestamp_ntz", ... A time of day is a "long".
func (t Type) DeltaName() string {
	switch t.Kind {
	case KindDecimal:
		return "decimal(" + strconv.Itoa(t.Precision) + "," + strconv.Itoa(t.Scale) + ")"
	case KindTime:
		return "long"
	}
	return t.Kind.String()
}

// String is DeltaName, except that a time of day prints as "time".
func (t Type) String() string {
	if t.Kind == KindTime {
		return "time"
	}
	return t.DeltaName()
}

// Widens reports whether every value of type from is exactly representable
// in t, so a column of type from can be changed to t without rewriting data
// in a way that loses information.
func (t Type) Widens(from Type) bool {
	if t == from {
		return true
	}
	switch from.Kind {
	case KindByte:
		return t.Kind == KindShort || t.Kind == KindInteger || t.Kind == KindLong
	case KindShort:
		return t.Kind == KindInteger || t.Kind == KindLong
	case KindInteger:
		return t.Kind == KindLong
	case KindFloat:
		return t.Kind == KindDouble
	case KindDecimal:
		// Same scale, more integer digits: every old value still fits.
		return t.Kind == KindDecimal && t.Scale >= from.Scale &&
			t.Precision-t.Scale >= from.Precision-from.Scale
	}
	return false
}

// ParseDeltaType parses a Delta schema primitive type name ("long",
// "decimal(10,2)", "timestamp_ntz", ...) into a Type, for comparing an
// existing table with a new schema. A "long" is KindLong; a time-of-day
// column read back from Delta is therefore a long, which [Evolve] accepts
// as unchanged.
func ParseDeltaType(name string) (Type, error) {
	if rest, ok := strings.CutPrefix(name, "decimal("); ok {
		ps, ok := strings.CutSuffix(rest, ")")
		p, s, ok2 := strings.Cut(ps, ",")
		pi, err1 := strconv.Atoi(strings.TrimSpace(p))
		si, err2 := strconv.Atoi(strings.TrimSpace(s))
		if !ok || !ok2 || err1 != nil || err2 != nil || pi < 1 || pi > decimal128.MaxPrecision || si < 0 || si > pi {
			return Type{}, fmt.Errorf("codecs: bad decimal type %q", name)
		}
		return DecimalType(pi, si), nil
	}
	if name == "decimal" { // Delta's shorthand for decimal(10,0)
		return DecimalType(10, 0), nil
	}
	for k := KindBoolean; k <= KindTimestampNTZ; k++ {
		if k != KindDecimal && kindNames[k] == name {
			return Type{Kind: k}, nil
		}
	}
	return Type{}, fmt.Errorf("codecs: unknown Delta type %q", name)
}
