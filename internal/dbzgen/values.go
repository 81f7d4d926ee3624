package dbzgen

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/google/uuid"
)

// ErrBadValue is wrapped by the errors Encode returns for a row value that
// does not fit its column.
var ErrBadValue = errors.New("dbzgen: value does not fit column")

// errNullInstead marks a value Debezium turns into null with a warning (a
// datetime2(7) outside NanoTimestamp's range, since Debezium 3.6).
var errNullInstead = errors.New("dbzgen: value out of range for the Debezium type")

// Placeholder is Debezium's unavailable.value.placeholder: a value the
// update did not carry (unchanged LOB columns, Debezium 3.6+). It encodes as
// "__debezium_unavailable_value" in string columns and as those bytes in
// binary ones.
type Placeholder struct{}

// PlaceholderText is the default unavailable.value.placeholder.
const PlaceholderText = "__debezium_unavailable_value"

func badValue(v any, want string) error {
	return fmt.Errorf("%w: %T %v is not %s", ErrBadValue, v, v, want)
}

func toInt(v any, lo, hi int64) (int64, error) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int8:
		n = int64(x)
	case int16:
		n = int64(x)
	case int32:
		n = int64(x)
	case int64:
		n = x
	case uint8:
		n = int64(x)
	case uint16:
		n = int64(x)
	case uint32:
		n = int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return 0, badValue(v, "in range")
		}
		n = int64(x)
	default:
		return 0, badValue(v, "an integer")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%w: %d outside %d..%d", ErrBadValue, n, lo, hi)
	}
	return n, nil
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	}
	n, err := toInt(v, math.MinInt64, math.MaxInt64)
	if err != nil {
		return 0, badValue(v, "a number")
	}
	return float64(n), nil
}

// toDecimal returns v as an exact rational that fits decimal(p,s): a decimal
// string ("123.45"), *big.Rat, big.Rat or Go integer.
func toDecimal(v any, t sqlType) (*big.Rat, error) {
	p, s := t.precision, t.scale
	r := new(big.Rat)
	switch x := v.(type) {
	case string:
		if _, ok := r.SetString(x); !ok {
			return nil, badValue(v, "a decimal")
		}
	case *big.Rat:
		r.Set(x)
	case big.Rat:
		r.Set(&x)
	default:
		n, err := toInt(v, math.MinInt64, math.MaxInt64)
		if err != nil {
			return nil, badValue(v, "a decimal string, *big.Rat or integer")
		}
		r.SetInt64(n)
	}
	unscaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(pow10(s)))
	if !unscaled.IsInt() {
		return nil, fmt.Errorf("%w: %s has more than %d fraction digits", ErrBadValue, r.FloatString(s+4), s)
	}
	if new(big.Int).Abs(unscaled.Num()).Cmp(pow10(p)) >= 0 {
		return nil, fmt.Errorf("%w: %s exceeds decimal(%d,%d)", ErrBadValue, r.FloatString(s), p, s)
	}
	// money and smallmoney are 64- and 32-bit counts of 1/10000.
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if t.name == "smallmoney" {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	if (t.name == "money" || t.name == "smallmoney") && (!unscaled.Num().IsInt64() || unscaled.Num().Int64() < lo || unscaled.Num().Int64() > hi) {
		return nil, fmt.Errorf("%w: %s outside the range of %s", ErrBadValue, r.FloatString(s), t.name)
	}
	return r, nil
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

func toString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case Placeholder:
		return PlaceholderText, nil
	}
	return "", badValue(v, "a string")
}

func toBytes(v any) ([]byte, error) {
	switch x := v.(type) {
	case []byte:
		return x, nil
	case Placeholder:
		return []byte(PlaceholderText), nil
	}
	return nil, badValue(v, "[]byte")
}

func toUUIDString(v any) (string, error) {
	switch x := v.(type) {
	case uuid.UUID:
		return upperUUID(x), nil
	case [16]byte:
		return upperUUID(uuid.UUID(x)), nil
	case string:
		u, err := uuid.Parse(x)
		if err != nil {
			return "", fmt.Errorf("%w: %q is not a uniqueidentifier", ErrBadValue, x)
		}
		return upperUUID(u), nil
	}
	return "", badValue(v, "a uuid")
}

// upperUUID formats like the SQL Server JDBC driver: upper-case hex.
func upperUUID(u uuid.UUID) string {
	const hexDigits = "0123456789ABCDEF"
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hexDigits[c>>4], hexDigits[c&0xf]
		j += 2
	}
	return string(b[:])
}

func toTime(v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	return time.Time{}, badValue(v, "a time.Time")
}

// toTimeOfDay returns nanoseconds past midnight of a time.Duration or of the
// clock part of a time.Time.
func toTimeOfDay(v any) (int64, error) {
	switch x := v.(type) {
	case time.Duration:
		if x < 0 || x >= 24*time.Hour {
			return 0, fmt.Errorf("%w: time of day %v outside 0..24h", ErrBadValue, x)
		}
		return int64(x), nil
	case time.Time:
		h, m, s := x.Clock()
		return int64(h)*int64(time.Hour) + int64(m)*int64(time.Minute) + int64(s)*int64(time.Second) + int64(x.Nanosecond()), nil
	}
	return 0, badValue(v, "a time.Duration or time.Time")
}

// wallClock reads t's calendar fields as if they were UTC, as Debezium does
// for SQL Server's zone-less types.
func wallClock(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// roundFraction rounds t to p fractional-second digits, half up, as SQL
// Server stores a datetime2(p), time(p) or datetimeoffset(p).
func roundFraction(t time.Time, p int) time.Time {
	return t.Round(time.Duration(pow10(9 - p).Int64()))
}

// roundDatetime rounds to SQL Server datetime's 1/300 s ticks and returns the
// millisecond value the driver reports (.000, .003, .007).
func roundDatetime(t time.Time) time.Time {
	sec := t.Truncate(time.Second)
	ticks := (int64(t.Nanosecond())*300 + 5e8) / 1e9
	ms := (ticks*10 + 1) / 3
	return sec.Add(time.Duration(ms) * time.Millisecond)
}

// inNanoRange reports whether t fits io.debezium.time.NanoTimestamp (int64
// ns since the epoch, about 1677-09-21 to 2262-04-11).
func inNanoRange(t time.Time) bool {
	return !t.Before(time.Unix(0, math.MinInt64)) && !t.After(time.Unix(0, math.MaxInt64))
}

// epochDays is the number of days since 1970-01-01 of a UTC midnight.
func epochDays(t time.Time) int64 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d--
	}
	return d
}

// isoOffset formats a datetimeoffset as Debezium's ZonedTimestamp: ISO-8601
// with the original offset, minimal fraction digits, "Z" for +00:00.
func isoOffset(t time.Time) string { return t.Format("2006-01-02T15:04:05.999999999Z07:00") }
