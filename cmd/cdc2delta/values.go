package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// displayValue turns a datafile value of type t into a JSON-friendly Go value: decimals
// as exact number literals (json.Number, never float64), NaN and infinities of float and
// double as the strings "NaN", "Infinity" and "-Infinity" (JSON has no such numbers;
// Spark's to_json writes them so), timestamps and dates in ISO 8601, binary as []byte
// (base64 in JSON, hex in text), structs as objects in field order and maps as lists of
// key/value objects (map keys need not be strings).
func displayValue(t deltalog.Type, v any) any {
	if v == nil {
		return nil
	}
	switch t := t.(type) {
	case deltalog.DecimalType:
		if d, ok := v.(decimal128.Num); ok {
			return json.Number(d.String(t.Scale))
		}
	case deltalog.PrimitiveType:
		switch t {
		case deltalog.TypeFloat, deltalog.TypeDouble:
			if s, ok := nonFinite(v); ok {
				return s
			}
		case deltalog.TypeTimestamp:
			if us, ok := v.(int64); ok {
				return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.999999Z")
			}
		case deltalog.TypeTimestampNTZ:
			if us, ok := v.(int64); ok {
				return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.999999")
			}
		case deltalog.TypeDate:
			if d, ok := v.(int32); ok {
				return time.Unix(int64(d)*86400, 0).UTC().Format(time.DateOnly)
			}
		}
	case *deltalog.StructType:
		if vals, ok := v.([]any); ok && len(vals) == len(t.Fields) {
			obj := make(orderedRow, len(vals))
			for i, f := range t.Fields {
				obj[i] = namedValue{f.Name, displayValue(f.Type, vals[i])}
			}
			return obj
		}
	case *deltalog.ArrayType:
		if vals, ok := v.([]any); ok {
			out := make([]any, len(vals))
			for i, e := range vals {
				out[i] = displayValue(t.ElementType, e)
			}
			return out
		}
	case *deltalog.MapType:
		if kvs, ok := v.([]datafile.KV); ok {
			out := make([]any, len(kvs))
			for i, kv := range kvs {
				out[i] = map[string]any{"key": displayValue(t.KeyType, kv.Key), "value": displayValue(t.ValueType, kv.Value)}
			}
			return out
		}
	}
	return v
}

// nonFinite spells a NaN or infinite float32/float64 as Spark does.
func nonFinite(v any) (string, bool) {
	var f float64
	switch v := v.(type) {
	case float32:
		f = float64(v)
	case float64:
		f = v
	default:
		return "", false
	}
	switch {
	case math.IsNaN(f):
		return "NaN", true
	case math.IsInf(f, 1):
		return "Infinity", true
	case math.IsInf(f, -1):
		return "-Infinity", true
	}
	return "", false
}

// textValue renders a display value as one text cell; null is "" (the caller decides
// how to show null).
func textValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return string(v)
	case []byte:
		return "0x" + hex.EncodeToString(v)
	case bool:
		return strconv.FormatBool(v)
	case int8, int16, int32, int64, int:
		return fmt.Sprint(v)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	b, err := deltalog.MarshalPlain(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
