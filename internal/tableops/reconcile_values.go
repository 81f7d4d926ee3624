package tableops

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/deltatext"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// cell is one value in the canonical text of its column's type: two values
// of a type are equal exactly when their cells are (decimals at the
// column's scale, timestamps in UTC microseconds, floats in shortest form).
type cell struct {
	null bool
	text string
}

func (c cell) String() string {
	if c.null {
		return "NULL"
	}
	return c.text
}

// canonical renders v, a value of type t as datafile.Read returns it.
func canonical(t deltalog.Type, v any) (cell, error) {
	if v == nil {
		return cell{null: true}, nil
	}
	if d, ok := t.(deltalog.DecimalType); ok {
		n, ok := v.(decimal128.Num)
		if !ok {
			return cell{}, fmt.Errorf("decimal value %T", v)
		}
		return cell{text: n.String(d.Scale)}, nil
	}
	switch x := v.(type) {
	case bool:
		return cell{text: strconv.FormatBool(x)}, nil
	case int8, int16, int64:
		if p, _ := t.(deltalog.PrimitiveType); p == deltalog.TypeTimestamp || p == deltalog.TypeTimestampNTZ {
			us := x.(int64)
			return cell{text: time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.000000Z07:00")}, nil
		}
		return cell{text: fmt.Sprint(x)}, nil
	case int32:
		if p, _ := t.(deltalog.PrimitiveType); p == deltalog.TypeDate {
			if s, ok := deltatext.Date(int64(x)); ok {
				return cell{text: s}, nil
			}
		}
		return cell{text: strconv.FormatInt(int64(x), 10)}, nil
	case float32:
		return cell{text: floatText(float64(x), 32)}, nil
	case float64:
		return cell{text: floatText(x, 64)}, nil
	case string:
		return cell{text: x}, nil
	case []byte:
		return cell{text: hex.EncodeToString(x)}, nil
	}
	return cell{}, fmt.Errorf("%w: cannot compare values of type %s", ErrFileType, t)
}

func floatText(f float64, bits int) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// parseText parses a CSV field as a value of t: empty is NULL, as Spark's
// CSV reader has it; numbers, booleans, dates and decimals as Delta's
// partition values are written; timestamps as "2024-01-02 03:04:05[.ffffff]"
// or RFC 3339.
func parseText(t deltalog.Type, s string) (any, error) {
	if s == "" {
		return nil, nil
	}
	if p, _ := t.(deltalog.PrimitiveType); p == deltalog.TypeTimestamp || p == deltalog.TypeTimestampNTZ {
		if ts, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s)); err == nil {
			return ts.UnixMicro(), nil
		}
	}
	return datafile.ParsePartitionValue(t, &s)
}
