package deltalog

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog/deltatext"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// parsedNode is a compiled add.stats_parsed or add.partitionValues_parsed subtree. Those
// columns carry typed values (under column mapping, with physical field names); reading a
// checkpoint whose stats JSON string is null re-encodes them into the JSON the rest of
// deltalog parses, following the brief §2.9 encodings.
type parsedNode struct {
	name     string
	present  groupRef
	col      int // leaf column; -1 for groups
	kind     parsedKind
	scale    int           // decimals
	unit     time.Duration // timestamps stored as INT64
	children []*parsedNode
}

type parsedKind uint8

const (
	parsedGroup parsedKind = iota
	parsedSkip             // a type stats never hold (list, map, unknown): ignored
	parsedString
	parsedBool
	parsedInt
	parsedFloat
	parsedDate
	parsedTimestamp    // UTC-adjusted INT64
	parsedTimestampNTZ // local INT64
	parsedInt96        // legacy UTC timestamp
	parsedDecimal
)

// compileParsed compiles a _parsed struct column; nil when the file lacks it.
func compileParsed(n *colNode) *parsedNode {
	if n == nil || n.leaf() || n.rep != 0 {
		return nil
	}
	return compileParsedNode("", n)
}

func compileParsedNode(name string, n *colNode) *parsedNode {
	p := &parsedNode{name: name, present: groupRef{col: n.first, def: n.def}, col: -1}
	if n.first == n.end || n.rep != 0 {
		p.kind = parsedSkip
		return p
	}
	if !n.leaf() {
		if n.repeatedChild() != nil {
			p.kind = parsedSkip
			return p
		}
		p.kind = parsedGroup
		for _, c := range n.children {
			p.children = append(p.children, compileParsedNode(c.name, c))
		}
		return p
	}
	p.col = n.first
	p.kind, p.scale, p.unit = parsedKindOf(n.node.Type())
	return p
}

func parsedKindOf(t parquet.Type) (parsedKind, int, time.Duration) {
	if lt := t.LogicalType(); lt != nil {
		switch v := lt.Value.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			if t.Kind() == parquet.ByteArray {
				return parsedString, 0, 0
			}
		case *format.DateType:
			if t.Kind() == parquet.Int32 {
				return parsedDate, 0, 0
			}
		case *format.DecimalType:
			return parsedDecimal, int(v.Scale), 0
		case *format.TimestampType:
			if t.Kind() != parquet.Int64 {
				return parsedSkip, 0, 0
			}
			unit := time.Microsecond
			switch v.Unit.Value.(type) {
			case *format.MilliSeconds:
				unit = time.Millisecond
			case *format.NanoSeconds:
				unit = time.Nanosecond
			}
			if v.IsAdjustedToUTC {
				return parsedTimestamp, 0, unit
			}
			return parsedTimestampNTZ, 0, unit
		case *format.IntType:
			if t.Kind() == parquet.Int32 || t.Kind() == parquet.Int64 {
				return parsedInt, 0, 0
			}
		}
	}
	switch t.Kind() {
	case parquet.Boolean:
		return parsedBool, 0, 0
	case parquet.Int32, parquet.Int64:
		return parsedInt, 0, 0
	case parquet.Float, parquet.Double:
		return parsedFloat, 0, 0
	case parquet.Int96:
		return parsedInt96, 0, 0
	case parquet.ByteArray:
		return parsedString, 0, 0
	}
	return parsedSkip, 0, 0
}

// statsJSON re-encodes a stats_parsed struct as the add.stats JSON string.
func (p *parsedNode) statsJSON(rc rowCols) (string, error) {
	b, err := p.appendGroup(nil, rc)
	return string(b), err
}

func (p *parsedNode) appendGroup(b []byte, rc rowCols) ([]byte, error) {
	b = append(b, '{')
	first := true
	for _, c := range p.children {
		if c.kind == parsedSkip || !c.present.present(rc) {
			continue
		}
		mark := len(b)
		if !first {
			b = append(b, ',')
		}
		key, err := MarshalPlain(c.name)
		if err != nil {
			return nil, err
		}
		b = append(b, key...)
		b = append(b, ':')
		var ok bool
		if c.kind == parsedGroup {
			b, err = c.appendGroup(b, rc)
			ok = err == nil
		} else {
			b, ok, err = c.appendLeafJSON(b, rc)
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			b = b[:mark]
			continue
		}
		first = false
	}
	return append(b, '}'), nil
}

// appendLeafJSON appends a leaf's JSON value; ok is false for values stats must not hold
// (NaN, infinities, unreadable decimals), which are left out: omitting a bound is safe.
func (p *parsedNode) appendLeafJSON(b []byte, rc rowCols) ([]byte, bool, error) {
	v := rc[p.col][0]
	switch p.kind {
	case parsedString:
		s, err := MarshalPlain(string(v.ByteArray()))
		return append(b, s...), err == nil, err
	case parsedBool:
		return strconv.AppendBool(b, v.Boolean()), true, nil
	case parsedInt:
		return strconv.AppendInt(b, ckptInt(v), 10), true, nil
	case parsedFloat:
		f, bits := ckptFloat(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, false, nil
		}
		return strconv.AppendFloat(b, f, 'g', -1, bits), true, nil
	case parsedDecimal:
		s, ok := ckptDecimal(v, p.scale)
		return append(b, s...), ok, nil
	}
	s, ok := p.temporalString(v, true)
	if !ok {
		return b, false, nil
	}
	q, err := MarshalPlain(s)
	return append(b, q...), err == nil, err
}

// partitionValues rebuilds add.partitionValues from partitionValues_parsed, as the brief
// §2.10 serializes each type. Used only when the string map is absent. A date or
// timestamp outside the years 0001 to 9999 is an error: it has no text, and
// reading it as null would move its rows to the null partition.
func (p *parsedNode) partitionValues(rc rowCols) (map[string]*string, error) {
	if !p.present.present(rc) {
		return nil, nil
	}
	out := make(map[string]*string, len(p.children))
	for _, c := range p.children {
		if c.kind == parsedGroup || c.kind == parsedSkip {
			continue
		}
		v := rc[c.col][0]
		if v.IsNull() {
			out[c.name] = nil
			continue
		}
		var s string
		ok := true
		switch c.kind {
		case parsedString:
			s = string(v.ByteArray())
		case parsedBool:
			s = strconv.FormatBool(v.Boolean())
		case parsedInt:
			s = strconv.FormatInt(ckptInt(v), 10)
		case parsedFloat:
			s = deltatext.PartitionFloat(ckptFloat(v))
		case parsedDecimal:
			s, ok = ckptDecimal(v, c.scale)
		default:
			if s, ok = c.temporalString(v, false); !ok {
				return nil, fmt.Errorf("partitionValues_parsed.%s: %w", c.name, deltatext.ErrRange)
			}
		}
		if ok {
			out[c.name] = &s
		} else {
			out[c.name] = nil
		}
	}
	return out, nil
}

// temporalString formats dates and timestamps as stats (milliseconds) or as
// partition values (microseconds); ok is false outside the years 0001 to 9999.
func (p *parsedNode) temporalString(v parquet.Value, stats bool) (string, bool) {
	var t time.Time
	ntz := false
	switch p.kind {
	case parsedDate:
		return deltatext.Date(int64(v.Int32()))
	case parsedTimestamp, parsedTimestampNTZ:
		// Split into seconds first: a time.Duration overflows past ±292 years.
		n, per := v.Int64(), int64(time.Second/p.unit)
		sec, frac := n/per, n%per
		if frac < 0 {
			sec, frac = sec-1, frac+per
		}
		t, ntz = time.Unix(sec, frac*int64(p.unit)), p.kind == parsedTimestampNTZ
	case parsedInt96:
		i := v.Int96()
		nanos := int64(uint64(i[0]) | uint64(i[1])<<32)
		const julianUnixEpoch = 2440588
		t = time.Unix((int64(i[2])-julianUnixEpoch)*86400, nanos)
	default:
		return "", false
	}
	if stats {
		return deltatext.StatsTimestamp(t, ntz)
	}
	return deltatext.PartitionTimestamp(t, ntz)
}

func ckptFloat(v parquet.Value) (float64, int) {
	if v.Kind() == parquet.Float {
		return float64(v.Float()), 32
	}
	return v.Double(), 64
}

// ckptDecimal renders an unscaled decimal (INT32, INT64 or big-endian two's complement
// bytes) with scale digits after the point, never with an exponent.
func ckptDecimal(v parquet.Value, scale int) (string, bool) {
	var u big.Int
	switch v.Kind() {
	case parquet.Int32, parquet.Int64:
		u.SetInt64(ckptInt(v))
	case parquet.ByteArray, parquet.FixedLenByteArray:
		raw := v.ByteArray()
		if len(raw) == 0 || len(raw) > 32 {
			return "", false
		}
		u.SetBytes(raw)
		if raw[0]&0x80 != 0 {
			var full big.Int
			full.Lsh(big.NewInt(1), uint(8*len(raw)))
			u.Sub(&u, &full)
		}
	default:
		return "", false
	}
	if scale < 0 || scale > 76 {
		return "", false
	}
	return decimal128.FormatBig(&u, scale), true
}
