package dbzgen

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// columnType is how one column is written under the generator's options: its
// Avro type and the conversion of a Go value to goavro's native form.
type columnType struct {
	connect connectType
	encode  func(v any) (any, error)
}

// newColumnType maps a SQL Server type to its Debezium/AvroConverter form
// (brief §4). sql_variant reports ok=false: Debezium drops the column.
func newColumnType(t sqlType, o Options) (ct columnType, ok bool, err error) {
	prim := func(avro string, enc func(any) (any, error)) columnType {
		return columnType{connect: connectType{avro: avro}, encode: enc}
	}
	intType := func(avro string, lo, hi int64) columnType {
		return prim(avro, func(v any) (any, error) {
			n, err := toInt(v, lo, hi)
			if avro == "long" {
				return n, err
			}
			return int32(n), err
		})
	}
	switch t.name {
	case "sql_variant":
		return columnType{}, false, nil
	case "bit":
		return prim("boolean", func(v any) (any, error) {
			b, ok := v.(bool)
			if !ok {
				return nil, badValue(v, "a bool")
			}
			return b, nil
		}), true, nil
	case "tinyint", "smallint":
		lo, hi := int64(math.MinInt16), int64(math.MaxInt16)
		if t.name == "tinyint" {
			lo, hi = 0, 255
		}
		ct = intType("int", lo, hi)
		ct.connect.connectType = "int16"
		return ct, true, nil
	case "int":
		return intType("int", math.MinInt32, math.MaxInt32), true, nil
	case "bigint":
		return intType("long", math.MinInt64, math.MaxInt64), true, nil
	case "real":
		return floatType("float"), true, nil
	case "float":
		if t.precision <= 24 {
			return floatType("float"), true, nil
		}
		return floatType("double"), true, nil
	case "decimal", "numeric", "money", "smallmoney":
		return decimalType(t, o.DecimalHandling), true, nil
	case "char", "nchar", "varchar", "nvarchar", "text", "ntext", "xml":
		return stringType(t), true, nil
	case "uniqueidentifier":
		return prim("string", func(v any) (any, error) { return toUUIDString(v) }), true, nil
	case "binary", "varbinary", "image", "rowversion", "geometry", "geography", "hierarchyid":
		return binaryType(t, o.BinaryHandling), true, nil
	case "datetimeoffset":
		return columnType{
			connect: connectType{avro: "string", version: 1, name: nameZonedTimestamp},
			encode: func(v any) (any, error) {
				ts, err := toTime(v)
				if err != nil {
					return nil, err
				}
				return isoOffset(roundFraction(ts, t.scale)), nil
			},
		}, true, nil
	case "date":
		return dateType(o.TimePrecision), true, nil
	case "time":
		return timeType(t.scale, o.TimePrecision), true, nil
	case "datetime", "smalldatetime", "datetime2":
		return timestampType(t, o.TimePrecision), true, nil
	}
	return columnType{}, false, fmt.Errorf("%w: no mapping for %q", ErrBadTable, t.name)
}

func floatType(avro string) columnType {
	return columnType{connect: connectType{avro: avro}, encode: func(v any) (any, error) {
		f, err := toFloat(v)
		if avro == "float" {
			return float32(f), err
		}
		return f, err
	}}
}

func decimalType(t sqlType, mode DecimalHandling) columnType {
	p, s := t.precision, t.scale
	switch mode {
	case DecimalDouble:
		return columnType{connect: connectType{avro: "double"}, encode: func(v any) (any, error) {
			r, err := toDecimal(v, t)
			if err != nil {
				return nil, err
			}
			f, _ := r.Float64() // nearest double, as BigDecimal.doubleValue
			return f, nil
		}}
	case DecimalString:
		return columnType{connect: connectType{avro: "string"}, encode: func(v any) (any, error) {
			r, err := toDecimal(v, t)
			if err != nil {
				return nil, err
			}
			return r.FloatString(s), nil // the column's scale, as toPlainString
		}}
	}
	return columnType{
		connect: connectType{
			avro:    "bytes",
			extra:   object{}.set("scale", s).set("precision", p),
			version: 1,
			params:  object{}.set("scale", strconv.Itoa(s)).set("connect.decimal.precision", strconv.Itoa(p)),
			name:    nameDecimal,
			logical: "decimal",
		},
		encode: func(v any) (any, error) {
			r, err := toDecimal(v, t)
			if err != nil {
				return nil, err
			}
			return r, nil
		},
	}
}

func stringType(t sqlType) columnType {
	return columnType{connect: connectType{avro: "string"}, encode: func(v any) (any, error) {
		if _, ok := v.(Placeholder); ok {
			return PlaceholderText, nil
		}
		s, err := toString(v)
		if err != nil {
			return nil, err
		}
		n := utf8.RuneCountInString(s)
		if t.length > 0 && n > t.length {
			return nil, fmt.Errorf("%w: %d characters in %s(%d)", ErrBadValue, n, t.name, t.length)
		}
		if t.name == "char" || t.name == "nchar" {
			s += strings.Repeat(" ", t.length-n) // SQL Server pads fixed-length strings
		}
		return s, nil
	}}
}

func binaryType(t sqlType, mode BinaryHandling) columnType {
	size := t.length
	if t.name == "rowversion" {
		size = 8
	}
	fixed := t.name == "binary" || t.name == "rowversion"
	raw := func(v any) ([]byte, error) {
		if _, ok := v.(Placeholder); ok {
			return []byte(PlaceholderText), nil
		}
		b, err := toBytes(v)
		if err != nil {
			return nil, err
		}
		if size > 0 && len(b) > size {
			return nil, fmt.Errorf("%w: %d bytes in %s(%d)", ErrBadValue, len(b), t.name, size)
		}
		if fixed && len(b) < size {
			b = append(append(make([]byte, 0, size), b...), make([]byte, size-len(b))...) // SQL Server zero-pads binary(n)
		}
		return b, nil
	}
	switch mode {
	case BinaryBase64, BinaryBase64URLSafe, BinaryHex:
		enc := hex.EncodeToString
		if mode == BinaryBase64 {
			enc = base64.StdEncoding.EncodeToString
		} else if mode == BinaryBase64URLSafe {
			enc = base64.URLEncoding.EncodeToString
		}
		return columnType{connect: connectType{avro: "string"}, encode: func(v any) (any, error) {
			b, err := raw(v)
			if err != nil {
				return nil, err
			}
			return enc(b), nil
		}}
	}
	return columnType{connect: connectType{avro: "bytes"}, encode: func(v any) (any, error) { return raw(v) }}
}

func dateType(mode TimePrecision) columnType {
	c := connectType{avro: "int", version: 1, name: nameDate}
	if mode == TimeConnect {
		c = connectType{avro: "int", version: 1, name: nameConnectDate, logical: "date"}
	}
	return columnType{connect: c, encode: func(v any) (any, error) {
		ts, err := toTime(v)
		if err != nil {
			return nil, err
		}
		y, m, d := ts.Date()
		return int32(epochDays(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))), nil
	}}
}

func timeType(p int, mode TimePrecision) columnType {
	unit := int64(time.Millisecond)
	c := connectType{avro: "int", version: 1, name: nameTime}
	switch {
	case mode == TimeConnect:
		c = connectType{avro: "int", version: 1, name: nameConnectTime, logical: "time-millis"}
	case mode == TimeAdaptiveMicroseconds || p > 3 && p <= 6:
		unit, c = int64(time.Microsecond), connectType{avro: "long", version: 1, name: nameMicroTime}
	case p == 7:
		unit, c = 1, connectType{avro: "long", version: 1, name: nameNanoTime}
	}
	step := pow10(9 - p).Int64()
	return columnType{connect: c, encode: func(v any) (any, error) {
		ns, err := toTimeOfDay(v)
		if err != nil {
			return nil, err
		}
		ns = (ns + step/2) / step * step // SQL Server rounds to time(p)
		if ns >= int64(24*time.Hour) {
			ns = int64(24*time.Hour) - step
		}
		if c.avro == "int" {
			return int32(ns / unit), nil
		}
		return ns / unit, nil
	}}
}

func timestampType(t sqlType, mode TimePrecision) columnType {
	unit := time.Millisecond
	c := connectType{avro: "long", version: 1, name: nameTimestamp}
	switch {
	case mode == TimeConnect:
		c = connectType{avro: "long", version: 1, name: nameConnectTS, logical: "timestamp-millis"}
	case t.name == "datetime2" && t.scale > 3 && t.scale <= 6:
		unit, c = time.Microsecond, connectType{avro: "long", version: 1, name: nameMicroTimestamp}
	case t.name == "datetime2" && t.scale == 7:
		unit, c = time.Nanosecond, connectType{avro: "long", version: 1, name: nameNanoTimestamp}
	}
	return columnType{connect: c, encode: func(v any) (any, error) {
		ts, err := toTime(v)
		if err != nil {
			return nil, err
		}
		w := wallClock(ts)
		switch t.name {
		case "datetime":
			w = roundDatetime(w)
		case "smalldatetime":
			w = w.Round(time.Minute)
		default:
			w = roundFraction(w, t.scale)
		}
		switch unit {
		case time.Nanosecond:
			if !inNanoRange(w) {
				return nil, fmt.Errorf("%w: %s as NanoTimestamp", errNullInstead, w)
			}
			return w.UnixNano(), nil
		case time.Microsecond:
			return w.UnixMicro(), nil
		}
		return w.UnixMilli(), nil
	}}
}
