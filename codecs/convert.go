package codecs

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"
	"unsafe"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// conv selects how a goavro-decoded value becomes a row value. A switch on
// a small enum keeps the per-value path free of indirect calls.
type conv uint8

const (
	convPass           conv = iota // value already has its final Go type
	convShort                      // int32 → int16
	convByte                       // int32 → int8
	convBytes                      // []byte copied
	convDecimalBytes               // two's-complement bytes → decimal128.Num
	convDecimalText                // plain decimal string → decimal128.Num
	convDecimalDouble              // decimal.handling.mode=double: kept as float64
	convBase64                     // base64 string → []byte
	convBase64URL                  // URL-safe base64 string → []byte
	convHex                        // hex string → []byte
	convDate                       // int32 days, range-checked
	convTimeMillis                 // int32 ms of day → int64 µs
	convTimeMicros                 // int64 µs of day
	convTimeNanos                  // int64 ns of day → µs
	convTsMillis                   // int64 ms → µs
	convTsMicros                   // int64 µs
	convTsNanos                    // int64 ns → µs (floor)
	convZoned                      // ISO-8601 with offset → UTC µs
	convString                     // string (checked for the placeholder)
	convDurationMicros             // int64 µs of a MySQL TIME: a duration, any sign
)

// Connect and Debezium semantic type names (connect.name).
const (
	nameDecimal       = "org.apache.kafka.connect.data.Decimal"
	nameConnectDate   = "org.apache.kafka.connect.data.Date"
	nameConnectTime   = "org.apache.kafka.connect.data.Time"
	nameConnectTs     = "org.apache.kafka.connect.data.Timestamp"
	nameDate          = "io.debezium.time.Date"
	nameTime          = "io.debezium.time.Time"
	nameMicroTime     = "io.debezium.time.MicroTime"
	nameNanoTime      = "io.debezium.time.NanoTime"
	nameTimestamp     = "io.debezium.time.Timestamp"
	nameMicroTs       = "io.debezium.time.MicroTimestamp"
	nameNanoTs        = "io.debezium.time.NanoTimestamp"
	nameZonedTs       = "io.debezium.time.ZonedTimestamp"
	connectTypeInt16  = "int16"
	connectTypeInt8   = "int8"
	logicalDecimal    = "decimal"
	logicalDate       = "date"
	logicalTimeMillis = "time-millis"
	logicalTimeMicros = "time-micros"
	logicalTsMillis   = "timestamp-millis"
	logicalTsMicros   = "timestamp-micros"
)

// refusedTypes are Debezium semantic types with no faithful Delta column,
// refused by name with what to configure instead. Other PostgreSQL and
// MySQL names keep their physical type: io.debezium.data.Json, Uuid, Enum,
// EnumSet, Xml and io.debezium.time.ZonedTime as strings, Bits as binary,
// MicroDuration as a long of microseconds, Year as an integer.
var refusedTypes = map[string]string{
	"io.debezium.data.VariableScaleDecimal": "a numeric without a declared precision has no Delta decimal; " +
		"declare a precision or set decimal.handling.mode=string",
	"io.debezium.data.geometry.Geometry":  "spatial types are not supported; exclude the column with column.exclude.list",
	"io.debezium.data.geometry.Geography": "spatial types are not supported; exclude the column with column.exclude.list",
	"io.debezium.data.geometry.Point":     "spatial types are not supported; exclude the column with column.exclude.list",
}

// mapType picks the logical type and converter for an Avro primitive with
// its properties (props may be nil for a bare primitive name).
func mapType(prim string, props map[string]any, src sourceType, opts *Options) (Type, conv, error) {
	name, _ := props["connect.name"].(string)
	logical, _ := props["logicalType"].(string)
	if why, ok := refusedTypes[name]; ok {
		return Type{}, 0, fmt.Errorf("%w: %s: %s", ErrUnsupportedSchema, name, why)
	}
	switch prim {
	case "boolean":
		return Type{Kind: KindBoolean}, convPass, nil
	case "int":
		switch {
		case props["connect.type"] == connectTypeInt16:
			return Type{Kind: KindShort}, convShort, nil
		case props["connect.type"] == connectTypeInt8:
			return Type{Kind: KindByte}, convByte, nil
		case name == nameDate || name == nameConnectDate || logical == logicalDate:
			return Type{Kind: KindDate}, convDate, nil
		case name == nameTime || name == nameConnectTime || logical == logicalTimeMillis:
			return Type{Kind: KindTime}, convTimeMillis, nil
		}
		return Type{Kind: KindInteger}, convPass, nil
	case "long":
		switch {
		case name == nameTimestamp || name == nameConnectTs || logical == logicalTsMillis:
			return Type{Kind: KindTimestampNTZ}, convTsMillis, nil
		case name == nameMicroTs || logical == logicalTsMicros:
			return Type{Kind: KindTimestampNTZ}, convTsMicros, nil
		case name == nameNanoTs:
			return Type{Kind: KindTimestampNTZ}, convTsNanos, nil
		case name == nameMicroTime || logical == logicalTimeMicros:
			return Type{Kind: KindTime}, convTimeMicros, nil
		case name == nameNanoTime:
			return Type{Kind: KindTime}, convTimeNanos, nil
		}
		return Type{Kind: KindLong}, convPass, nil
	case "float":
		return Type{Kind: KindFloat}, convPass, nil
	case "double":
		if src.isDecimal() {
			// decimal.handling.mode=double: the exact value is already gone.
			return Type{Kind: KindDouble}, convDecimalDouble, nil
		}
		return Type{Kind: KindDouble}, convPass, nil
	case "bytes":
		if name == nameDecimal || logical == logicalDecimal {
			p, s, err := decimalShape(props)
			if err != nil {
				return Type{}, 0, err
			}
			return DecimalType(p, s), convDecimalBytes, nil
		}
		return Type{Kind: KindBinary}, convBytes, nil
	case "string":
		switch {
		case name == nameZonedTs:
			return Type{Kind: KindTimestamp}, convZoned, nil
		case src.isDecimal():
			p, s := src.decimalShape()
			if p < 1 || p > decimal128.MaxPrecision || s < 0 || s > p {
				return Type{}, 0, fmt.Errorf("%w: decimal(%d,%d)", ErrUnsupportedSchema, p, s)
			}
			return DecimalType(p, s), convDecimalText, nil
		case src.isBinary() && opts.BinaryHandling != BinaryBytes:
			switch opts.BinaryHandling {
			case BinaryBase64:
				return Type{Kind: KindBinary}, convBase64, nil
			case BinaryBase64URL:
				return Type{Kind: KindBinary}, convBase64URL, nil
			case BinaryHex:
				return Type{Kind: KindBinary}, convHex, nil
			}
		}
		return Type{Kind: KindString}, convString, nil
	case "enum":
		return Type{}, 0, fmt.Errorf("%w: avro enum", ErrUnsupportedSchema)
	case "array", "map":
		return Type{}, 0, fmt.Errorf("%w: avro %s (a source array column; exclude it with column.exclude.list)", ErrUnsupportedSchema, prim)
	}
	return Type{}, 0, fmt.Errorf("%w: avro type %q", ErrUnsupportedSchema, prim)
}

// decimalShape reads precision and scale of a Connect decimal. A missing
// precision (AvroData then assumes 64) becomes 38, Delta's maximum; values
// wider than that fail per value with a RangeError.
func decimalShape(props map[string]any) (p, s int, err error) {
	params, _ := props["connect.parameters"].(map[string]any)
	s, okS := intProp(props["scale"])
	if !okS {
		if v, ok := params["scale"].(string); ok {
			s, _ = atoi(v) // a scale that does not parse stays 0, as AvroData reads it
		}
	}
	p, okP := intProp(props["precision"])
	if !okP {
		if v, ok := params["connect.decimal.precision"].(string); ok {
			p, okP = atoi(v)
		}
	}
	if !okP || p > decimal128.MaxPrecision {
		p = decimal128.MaxPrecision
	}
	if s < 0 || s > p || p < 1 {
		return 0, 0, fmt.Errorf("%w: decimal(%d,%d)", ErrUnsupportedSchema, p, s)
	}
	return p, s, nil
}

func intProp(v any) (int, bool) {
	f, ok := v.(float64) // encoding/json's number type
	if !ok || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// Delta's (Spark's) supported range: 0001-01-01 through 9999-12-31.
const (
	minDays   = -719162
	maxDays   = 2932896
	minMicros = -62135596800 * 1_000_000
	maxMicros = 253402300800*1_000_000 - 1
	dayMicros = 86400 * 1_000_000
)

// placeholders holds every rendering of the unavailable-value marker.
type placeholders struct {
	text    string
	raw     []byte
	encoded [3]string // base64, base64url, hex renderings of raw
}

func newPlaceholders(p string) placeholders {
	raw := []byte(p)
	return placeholders{
		text: p,
		raw:  raw,
		encoded: [3]string{
			base64.StdEncoding.EncodeToString(raw),
			base64.URLEncoding.EncodeToString(raw),
			hex.EncodeToString(raw),
		},
	}
}

func (p *placeholders) matchString(s string) bool {
	if len(s) < len(p.text) {
		return false
	}
	return s == p.text || s == p.encoded[0] || s == p.encoded[1] || s == p.encoded[2]
}

// errUnavailable is an internal signal, never returned to callers.
var errUnavailable = fmt.Errorf("unavailable")

// value converts one goavro-decoded, union-unwrapped, non-nil value.
// It returns errUnavailable for the placeholder.
func (c *Column) value(v any, ph *placeholders) (any, error) {
	switch c.conv {
	case convPass:
		if !sameGoType(c.Type.Kind, v) {
			return nil, c.typeErr(v)
		}
		return v, nil
	case convString:
		s, ok := v.(string)
		if !ok {
			return nil, c.typeErr(v)
		}
		if ph.matchString(s) {
			return nil, errUnavailable
		}
		return v, nil
	case convShort:
		n, ok := v.(int32)
		if !ok {
			return nil, c.typeErr(v)
		}
		if n < math.MinInt16 || n > math.MaxInt16 {
			return nil, c.rangeErr(strconv.Itoa(int(n)))
		}
		return int16(n), nil
	case convByte:
		n, ok := v.(int32)
		if !ok {
			return nil, c.typeErr(v)
		}
		if n < math.MinInt8 || n > math.MaxInt8 {
			return nil, c.rangeErr(strconv.Itoa(int(n)))
		}
		return int8(n), nil
	case convBytes:
		b, ok := v.([]byte)
		if !ok {
			return nil, c.typeErr(v)
		}
		if bytes.Equal(b, ph.raw) {
			return nil, errUnavailable
		}
		// goavro aliases the record buffer; a Change owns its data.
		return bytes.Clone(b), nil
	case convDecimalBytes:
		b, ok := v.([]byte)
		if !ok {
			return nil, c.typeErr(v)
		}
		d, ok := decimal128.FromBytes(b)
		if !ok || !d.FitsPrecision(c.Type.Precision) {
			return nil, c.rangeErr("0x" + hex.EncodeToString(b))
		}
		return d, nil
	case convDecimalText:
		s, ok := v.(string)
		if !ok {
			return nil, c.typeErr(v)
		}
		if ph.matchString(s) {
			return nil, errUnavailable
		}
		d, err := decimal128.Parse(s, c.Type.Precision, c.Type.Scale)
		if err != nil {
			return nil, c.rangeErr(strconv.Quote(s))
		}
		return d, nil
	case convDecimalDouble:
		if _, ok := v.(float64); !ok {
			return nil, c.typeErr(v)
		}
		return v, nil
	case convBase64, convBase64URL, convHex:
		s, ok := v.(string)
		if !ok {
			return nil, c.typeErr(v)
		}
		if ph.matchString(s) {
			return nil, errUnavailable
		}
		var b []byte
		var err error
		switch c.conv {
		case convBase64:
			b, err = base64.StdEncoding.DecodeString(s)
		case convBase64URL:
			b, err = base64.URLEncoding.DecodeString(s)
		default:
			b, err = hex.DecodeString(s)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %v", ErrBadBody, c.Name, err)
		}
		return b, nil
	case convDate:
		n, ok := v.(int32)
		if !ok {
			return nil, c.typeErr(v)
		}
		if n < minDays || n > maxDays {
			return nil, c.rangeErr(strconv.Itoa(int(n)) + " days")
		}
		return v, nil
	case convTimeMillis:
		n, ok := v.(int32)
		if !ok {
			return nil, c.typeErr(v)
		}
		return c.timeOfDay(int64(n)*1000, strconv.Itoa(int(n))+"ms")
	case convTimeMicros:
		n, ok := v.(int64)
		if !ok {
			return nil, c.typeErr(v)
		}
		return c.timeOfDay(n, strconv.FormatInt(n, 10)+"µs")
	case convDurationMicros:
		if _, ok := v.(int64); !ok {
			return nil, c.typeErr(v)
		}
		return v, nil
	case convTimeNanos:
		n, ok := v.(int64)
		if !ok {
			return nil, c.typeErr(v)
		}
		return c.timeOfDay(n/1000, strconv.FormatInt(n, 10)+"ns")
	case convTsMillis:
		n, ok := v.(int64)
		if !ok {
			return nil, c.typeErr(v)
		}
		if n < minMicros/1000 || n > maxMicros/1000 {
			return nil, c.rangeErr(strconv.FormatInt(n, 10) + "ms")
		}
		return n * 1000, nil
	case convTsMicros:
		n, ok := v.(int64)
		if !ok {
			return nil, c.typeErr(v)
		}
		if n < minMicros || n > maxMicros {
			return nil, c.rangeErr(strconv.FormatInt(n, 10) + "µs")
		}
		return v, nil
	case convTsNanos:
		n, ok := v.(int64)
		if !ok {
			return nil, c.typeErr(v)
		}
		// Floor, not round: truncating the 100 ns digit keeps the value in
		// the same second, minute and day (and never past 9999-12-31).
		us := n / 1000
		if n%1000 < 0 {
			us--
		}
		return us, nil // every int64 ns count is inside Delta's range
	case convZoned:
		s, ok := v.(string)
		if !ok {
			return nil, c.typeErr(v)
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: zoned timestamp %q: %v", ErrBadBody, c.Name, s, err)
		}
		us := t.UnixMicro()
		if us < minMicros || us > maxMicros {
			return nil, c.rangeErr(strconv.Quote(s))
		}
		return us, nil
	}
	return nil, fmt.Errorf("%w: column %q: no converter", ErrUnsupportedSchema, c.Name)
}

func (c *Column) timeOfDay(us int64, raw string) (any, error) {
	if us < 0 || us >= dayMicros {
		return nil, c.rangeErr(raw)
	}
	return us, nil
}

func (c *Column) rangeErr(raw string) error {
	return &RangeError{Column: c.Name, Type: c.Type, Value: raw}
}

func (c *Column) typeErr(v any) error {
	return fmt.Errorf("%w: column %q: decoded %T for %s", ErrBadBody, c.Name, v, c.Type)
}

func sameGoType(k Kind, v any) bool {
	switch v.(type) {
	case bool:
		return k == KindBoolean
	case int32:
		return k == KindInteger
	case int64:
		return k == KindLong
	case float32:
		return k == KindFloat
	case float64:
		return k == KindDouble
	}
	return false
}

// convertRaw is convertRow for a row a rowDecoder read unboxed (raw,
// aligned with l.Columns and fields): the same values and errors, without
// boxing each wire value before converting it.
func (d *Decoder) convertRaw(l *Layout, fields []fieldDecoder, raw []rawValue, vals []any) (unavailable []int, err error) {
	// The row's strings share one allocation: a string costs its box only.
	size := 0
	for i := range raw {
		if !raw[i].null && fields[i].prim == primString && l.Columns[i].conv == convString {
			size += len(raw[i].b)
		}
	}
	var text []byte
	if size > 0 {
		text = make([]byte, 0, size)
	}
	for i := range l.Columns {
		col := &l.Columns[i]
		r := &raw[i]
		if r.null {
			if !col.Nullable {
				return nil, fmt.Errorf("%w: required column %q is null", ErrBadBody, col.Name)
			}
			vals[i] = nil
			continue
		}
		out, err := col.fromRaw(&fields[i], r, &d.ph, &text)
		if err == errUnavailable {
			vals[i] = nil
			unavailable = append(unavailable, i)
			continue
		}
		if err != nil {
			return nil, err
		}
		vals[i] = out
	}
	return unavailable, nil
}

// fromRaw is value for a field's unboxed wire value. The conversions of
// the common wire types are done here, without the intermediate box; any
// other pairing boxes the value as goavro would and converts it through
// value, so both give the same results and errors.
//
// A string is copied into the end of text, which has room for it.
func (c *Column) fromRaw(f *fieldDecoder, r *rawValue, ph *placeholders, text *[]byte) (any, error) {
	switch f.prim {
	case primLong:
		switch c.conv {
		case convPass:
			if c.Type.Kind == KindLong {
				return r.n, nil
			}
		case convTsMicros:
			if r.n < minMicros || r.n > maxMicros {
				break // value builds the error
			}
			return r.n, nil
		case convTsNanos:
			n := r.n
			us := n / 1000
			if n%1000 < 0 {
				us--
			}
			return us, nil
		case convTsMillis:
			if r.n < minMicros/1000 || r.n > maxMicros/1000 {
				break
			}
			return r.n * 1000, nil
		}
	case primInt:
		switch c.conv {
		case convPass:
			if c.Type.Kind == KindInteger {
				return int32(r.n), nil
			}
		case convDate:
			if r.n < minDays || r.n > maxDays {
				break
			}
			return int32(r.n), nil
		case convShort:
			if r.n < math.MinInt16 || r.n > math.MaxInt16 {
				break
			}
			return int16(r.n), nil
		}
	case primString:
		switch c.conv {
		case convString:
			if ph.matchBytes(r.b) {
				return nil, errUnavailable
			}
			if len(r.b) == 0 {
				return "", nil
			}
			start := len(*text)
			*text = append(*text, r.b...)
			// The bytes are never written again: text only grows past them.
			return unsafe.String(&(*text)[start], len(r.b)), nil
		case convZoned:
			return c.zoned(r.b, ph)
		}
	case primBytes:
		switch c.conv {
		case convDecimalBytes:
			if d, ok := decimal128.FromBytes(r.b); ok && d.FitsPrecision(c.Type.Precision) {
				return d, nil
			}
		case convBytes:
			if bytes.Equal(r.b, ph.raw) {
				return nil, errUnavailable
			}
			return bytes.Clone(r.b), nil
		}
	}
	return c.value(f.box(r), ph)
}

// matchBytes is matchString for a string's bytes.
func (p *placeholders) matchBytes(b []byte) bool {
	if len(b) < len(p.text) {
		return false
	}
	return string(b) == p.text || string(b) == p.encoded[0] || string(b) == p.encoded[1] || string(b) == p.encoded[2]
}

// zoned converts a ZonedTimestamp's text as value does (time.Parse with
// RFC3339Nano, then microseconds since the epoch), through parseZoned
// when the text has RFC 3339's plain shape: no string, no time.Location
// per value. Anything else goes through value, errors included.
func (c *Column) zoned(b []byte, ph *placeholders) (any, error) {
	if us, ok := parseZoned(b); ok && us >= minMicros && us <= maxMicros {
		return us, nil
	}
	return c.value(string(b), ph)
}

// parseZoned reads "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)" into
// microseconds since the epoch with the checks of the standard library's
// RFC 3339 fast path (time.Parse tries it first for RFC3339Nano), so that
// whatever it accepts time.Parse accepts as the same instant. It reports
// false for anything else; the caller then asks time.Parse.
func parseZoned(s []byte) (int64, bool) {
	ok := true
	num := func(s []byte, lo, hi int) int {
		x := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				ok = false
				return lo
			}
			x = x*10 + int(c-'0')
		}
		if x < lo || x > hi {
			ok = false
			return lo
		}
		return x
	}
	if len(s) < len("2006-01-02T15:04:05") {
		return 0, false
	}
	year := num(s[0:4], 0, 9999)
	month := num(s[5:7], 1, 12)
	day := num(s[8:10], 1, daysIn(month, year))
	hour := num(s[11:13], 0, 23)
	minute := num(s[14:16], 0, 59)
	sec := num(s[17:19], 0, 59)
	if !ok || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	s = s[19:]
	var nsec int64
	if len(s) >= 2 && s[0] == '.' && s[1] >= '0' && s[1] <= '9' {
		n := 2
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		// As time's parseNanoseconds: at most nine digits count.
		digits := s[1:min(n, 10)]
		for _, c := range digits {
			nsec = nsec*10 + int64(c-'0')
		}
		for i := len(digits); i < 9; i++ {
			nsec *= 10
		}
		s = s[n:]
	}
	offset := 0
	if len(s) != 1 || s[0] != 'Z' {
		if len(s) != len("-07:00") {
			return 0, false
		}
		hr := num(s[1:3], 0, 23)
		mm := num(s[4:6], 0, 59)
		if !ok || (s[0] != '-' && s[0] != '+') || s[3] != ':' {
			return 0, false
		}
		offset = (hr*60 + mm) * 60
		if s[0] == '-' {
			offset = -offset
		}
	}
	days := daysFromCivil(int64(year), int64(month), int64(day))
	unix := days*86400 + int64(hour*3600+minute*60+sec) - int64(offset)
	return unix*1_000_000 + nsec/1000, true
}

// daysIn is the number of days in month of year (proleptic Gregorian).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d
// (proleptic Gregorian; Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
