package cdctable

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// AppendKey appends a compact, unambiguous binary encoding of key values: a
// tag byte per value, fixed-width numbers, length-prefixed strings. Decimals
// of codecs and datafile encode alike, so keys read from the table match keys
// decoded from events.
func AppendKey(dst []byte, vals []any) ([]byte, error) {
	var err error
	for _, v := range vals {
		if dst, err = appendKeyValue(dst, v); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// appendKeyValue appends one value of a key.
func appendKeyValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		dst = append(dst, 0)
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		dst = append(dst, 1, b)
	case int8:
		dst = binary.BigEndian.AppendUint64(append(dst, 2), uint64(x))
	case int16:
		dst = binary.BigEndian.AppendUint64(append(dst, 2), uint64(x))
	case int32:
		dst = binary.BigEndian.AppendUint64(append(dst, 2), uint64(x))
	case int64:
		dst = binary.BigEndian.AppendUint64(append(dst, 2), uint64(x))
	case float32:
		dst = binary.BigEndian.AppendUint64(append(dst, 3), math.Float64bits(float64(x)))
	case float64:
		dst = binary.BigEndian.AppendUint64(append(dst, 3), math.Float64bits(x))
	case string:
		dst = binary.AppendUvarint(append(dst, 4), uint64(len(x)))
		dst = append(dst, x...)
	case []byte:
		dst = binary.AppendUvarint(append(dst, 5), uint64(len(x)))
		dst = append(dst, x...)
	case decimal128.Num:
		dst = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(append(dst, 6), uint64(x.Hi)), x.Lo)
	default:
		return dst, fmt.Errorf("cdctable: unsupported key value type %T", v)
	}
	return dst, nil
}

// AppendFlatKey appends row's value of c as AppendKey appends the value
// Read returns for it: integers of every width alike, strings and binary
// length-prefixed, null as its tag.
func AppendFlatKey(dst []byte, c datafile.FlatColumn, row int) []byte {
	if c.Null != nil && c.Null[row] {
		return append(dst, 0)
	}
	switch c.Kind {
	case datafile.FlatInt:
		return binary.BigEndian.AppendUint64(append(dst, 2), uint64(c.Ints[row]))
	case datafile.FlatString:
		dst = binary.AppendUvarint(append(dst, 4), uint64(len(c.Bytes[row])))
	default:
		dst = binary.AppendUvarint(append(dst, 5), uint64(len(c.Bytes[row])))
	}
	return append(dst, c.Bytes[row]...)
}
