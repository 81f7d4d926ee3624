package datafile

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/deltatext"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// hiveDefaultPartition is the directory name of a null partition value.
const hiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// PartitionValue serializes a Go value of a partition column's type the way add.partitionValues
// stores it; nil gives nil (JSON null).
func PartitionValue(t deltalog.Type, v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s, err := partitionString(t, v)
	if err != nil || s == "" {
		// An empty string reads back as null in every engine, so write it as null.
		return nil, err
	}
	return &s, nil
}

func partitionString(t deltalog.Type, v any) (string, error) {
	// Made only when needed: every row of a partitioned write calls this.
	bad := func() error { return fmt.Errorf("%w: %s cannot hold %T", ErrValueType, t, v) }
	if d, ok := t.(deltalog.DecimalType); ok {
		x, ok := v.(decimal128.Num)
		if !ok {
			return "", bad()
		}
		if !x.FitsPrecision(d.Precision) {
			return "", ErrDecimalRange
		}
		return x.String(d.Scale), nil
	}
	p, ok := t.(deltalog.PrimitiveType)
	if !ok {
		return "", fmt.Errorf("%w: partition column of type %s", ErrSchema, t)
	}
	k, known := primitiveLeaf(p)
	if !known {
		return "", bad()
	}
	switch k {
	case leafBool:
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b), nil
		}
	case leafInt8, leafInt16, leafInt32:
		if i, ok := intValue(k, v); ok {
			return strconv.FormatInt(i, 10), nil
		}
	case leafInt64:
		switch x := v.(type) {
		case int64:
			return strconv.FormatInt(x, 10), nil
		case int:
			return strconv.Itoa(x), nil
		}
	case leafFloat:
		if f, ok := v.(float32); ok {
			return deltatext.PartitionFloat(float64(f), 32), nil
		}
	case leafDouble:
		if f, ok := v.(float64); ok {
			return deltatext.PartitionFloat(f, 64), nil
		}
	case leafString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case leafBinary:
		if b, ok := v.([]byte); ok {
			return string(b), nil
		}
	case leafDate:
		if i, ok := intValue(leafDate, v); ok {
			if s, ok := deltatext.Date(i); ok {
				return s, nil
			}
			return "", fmt.Errorf("%w: date %d days from 1970", deltatext.ErrRange, i)
		}
	case leafTimestamp, leafTimestampNTZ:
		var us int64
		switch x := v.(type) {
		case int64:
			us = x
		case time.Time:
			us = timeMicros(x, k == leafTimestampNTZ)
		default:
			return "", bad()
		}
		if s, ok := deltatext.PartitionTimestamp(time.UnixMicro(us), k == leafTimestampNTZ); ok {
			return s, nil
		}
		return "", fmt.Errorf("%w: timestamp %d µs from 1970", deltatext.ErrRange, us)
	}
	return "", bad()
}

// ParsePartitionValue parses a serialized partition value into the Go value of its type;
// nil or "" give nil, as the protocol says an empty string means null for every type.
func ParsePartitionValue(t deltalog.Type, s *string) (any, error) {
	if s == nil || *s == "" {
		return nil, nil
	}
	v := *s
	if d, ok := t.(deltalog.DecimalType); ok {
		// Spark trims the text it casts to a decimal.
		return decimal128.Parse(strings.TrimSpace(v), d.Precision, d.Scale)
	}
	p, _ := t.(deltalog.PrimitiveType)
	switch p {
	case deltalog.TypeString:
		return v, nil
	case deltalog.TypeBinary:
		return []byte(v), nil
	case deltalog.TypeBoolean:
		return strconv.ParseBool(strings.ToLower(v))
	case deltalog.TypeByte:
		i, err := strconv.ParseInt(v, 10, 8)
		return int8(i), err
	case deltalog.TypeShort:
		i, err := strconv.ParseInt(v, 10, 16)
		return int16(i), err
	case deltalog.TypeInteger:
		i, err := strconv.ParseInt(v, 10, 32)
		return int32(i), err
	case deltalog.TypeLong:
		return strconv.ParseInt(v, 10, 64)
	case deltalog.TypeFloat:
		f, err := strconv.ParseFloat(v, 32)
		return float32(f), err
	case deltalog.TypeDouble:
		return strconv.ParseFloat(v, 64)
	case deltalog.TypeDate:
		d, err := deltatext.ParseDate(v)
		return int32(d), err
	case deltalog.TypeTimestamp, deltalog.TypeTimestampNTZ:
		ts, err := deltatext.ParsePartitionTimestamp(v)
		if err != nil {
			return nil, err
		}
		return ts.UnixMicro(), nil
	}
	return nil, fmt.Errorf("%w: partition column of type %s", ErrSchema, t)
}

// hiveEscape escapes a partition directory name or value like Hive and Spark do
// (ExternalCatalogUtils.escapePathName): control characters and "#%'*/:=?\{[]^ become %XX.
func hiveEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// uriEscapePath percent-encodes a relative object path for add.path: every byte except
// unreserved characters, '/' and '=' (so "%" in an escaped directory becomes "%25").
func uriEscapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~/=", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// partitionDir is the Hive-style directory for one tuple of partition values.
func partitionDir(names []string, values []*string) string {
	var b strings.Builder
	for i, n := range names {
		b.WriteString(hiveEscape(n))
		b.WriteByte('=')
		if values[i] == nil || *values[i] == "" {
			b.WriteString(hiveDefaultPartition)
		} else {
			b.WriteString(hiveEscape(*values[i]))
		}
		b.WriteByte('/')
	}
	return b.String()
}
