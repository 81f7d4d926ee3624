package sqlexpr

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// Values during evaluation: nil (NULL), bool, int64 (every integral type, dates as
// days, timestamps as microseconds), float64 (a float's value rounded to float32),
// *big.Int (a decimal's unscaled value; the scale is the node's type), string, []byte,
// and the reader's value for nested types.

const microsPerDay = 86400 * 1_000_000

// fromRow converts a value of the datafile package's conventions.
func fromRow(t Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case bool, string, []byte:
		return x, nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case decimal128.Num:
		return x.Big(), nil
	case time.Time:
		if t.Kind == KTimestampNTZ {
			y, m, d := x.Date()
			x = time.Date(y, m, d, x.Hour(), x.Minute(), x.Second(), x.Nanosecond(), time.UTC)
		}
		return x.UnixMicro(), nil
	}
	if t.Kind == KOther {
		return v, nil
	}
	return nil, fmt.Errorf("sqlexpr: unexpected %T for a %s column", v, t)
}

// toRow converts an evaluated value of type t to the datafile package's conventions.
func toRow(t Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case KByte:
		return int8(v.(int64)), nil
	case KShort:
		return int16(v.(int64)), nil
	case KInt, KDate:
		return int32(v.(int64)), nil
	case KFloat:
		return float32(v.(float64)), nil
	case KDecimal:
		n, ok := decimal128.FromBig(v.(*big.Int))
		if !ok || !n.FitsPrecision(t.P) {
			return nil, fmt.Errorf("sqlexpr: %s does not fit %s", v, t)
		}
		return n, nil
	}
	return v, nil
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// rescale returns v (at scale from) at scale to, rounding half away from zero (Spark's
// HALF_UP) when digits are dropped.
func rescale(v *big.Int, from, to int) *big.Int {
	switch {
	case to == from:
		return v
	case to > from:
		return new(big.Int).Mul(v, pow10(to-from))
	}
	return divHalfUp(v, pow10(from-to))
}

// divHalfUp divides rounding half away from zero.
func divHalfUp(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	if r.Sign() == 0 {
		return q
	}
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if r2.Cmp(new(big.Int).Abs(b)) >= 0 {
		if (a.Sign() < 0) != (b.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// fitsPrecision reports whether |v| < 10^p.
func fitsPrecision(v *big.Int, p int) bool {
	return new(big.Int).Abs(v).Cmp(pow10(p)) < 0
}

// digits counts the decimal digits of |v| (1 for 0).
func digits(v *big.Int) int {
	return len(new(big.Int).Abs(v).String())
}

// decimalString renders v at scale s in plain notation.
func decimalString(v *big.Int, s int) string {
	neg := v.Sign() < 0
	d := new(big.Int).Abs(v).String()
	if s > 0 {
		if len(d) <= s {
			d = strings.Repeat("0", s-len(d)+1) + d
		}
		d = d[:len(d)-s] + "." + d[len(d)-s:]
	}
	if neg {
		d = "-" + d
	}
	return d
}

// parseDecimalText reads decimal text (plain or with an exponent) as an exact
// rational; ok is false when it is not a number.
func parseDecimalText(s string) (*big.Rat, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "/_xXpPiInN") {
		return nil, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		// A huge exponent would make a huge number: no decimal(38) value needs one.
		if exp, err := strconv.Atoi(s[i+1:]); err != nil || exp > 400 || exp < -400 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// ratToDecimal rounds r half up to scale s and checks precision p.
func ratToDecimal(r *big.Rat, p, s int) (*big.Int, bool) {
	num := new(big.Int).Mul(r.Num(), pow10(s))
	v := divHalfUp(num, r.Denom())
	return v, fitsPrecision(v, p)
}

// floatToDecimal converts as Spark does: from the shortest decimal text of the value.
func floatToDecimal(f float64, bits, p, s int) (*big.Int, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, bits))
	return ratToDecimal(r, p, s)
}

func decimalToFloat(v *big.Int, s int) float64 {
	f, _ := strconv.ParseFloat(decimalString(v, s), 64)
	return f
}

// intRange returns the bounds of an integral kind.
func intRange(k Kind) (int64, int64) {
	switch k {
	case KByte:
		return math.MinInt8, math.MaxInt8
	case KShort:
		return math.MinInt16, math.MaxInt16
	case KInt:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// parseDate reads Spark's date forms: yyyy, yyyy-[m]m, yyyy-[m]m-[d]d, optionally
// followed by ' ' or 'T' and anything.
func parseDate(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " T"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, "-")
	if len(parts) > 3 || len(parts[0]) != 4 {
		return 0, false
	}
	nums := []int{0, 1, 1}
	for i, p := range parts {
		if p == "" || len(p) > 4 || i > 0 && len(p) > 2 {
			return 0, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || p[0] == '+' || p[0] == '-' {
			return 0, false
		}
		nums[i] = n
	}
	y, m, d := nums[0], nums[1], nums[2]
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if m < 1 || m > 12 || t.Day() != d || y < 1 {
		return 0, false
	}
	return t.Unix() / 86400, true
}

// parseTimestamp reads Spark's timestamp forms: a date, then optionally ' ' or 'T',
// [h]h:[m]m[:[s]s[.fraction]], then a zone (Z, UTC, GMT, +hh:mm, +hhmm, +hh or a region
// id). Without a zone the time is UTC, the session time zone cdc2delta assumes; ntz
// ignores a valid zone. The fraction is cut to microseconds.
func parseTimestamp(s string, ntz bool) (int64, bool) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, " T")
	if i < 0 {
		days, ok := parseDate(s)
		return days * microsPerDay, ok
	}
	days, ok := parseDate(s[:i])
	if !ok {
		return 0, false
	}
	rest := s[i+1:]
	j := 0
	for j < len(rest) && (rest[j] >= '0' && rest[j] <= '9' || rest[j] == ':' || rest[j] == '.') {
		j++
	}
	clock, zone := rest[:j], strings.TrimSpace(rest[j:])
	frac := ""
	if k := strings.IndexByte(clock, '.'); k >= 0 {
		clock, frac = clock[:k], clock[k+1:]
		if frac == "" || len(frac) > 9 || strings.ContainsAny(frac, ":.") {
			return 0, false
		}
	}
	hms := strings.Split(clock, ":")
	if len(hms) < 2 || len(hms) > 3 {
		return 0, false
	}
	var vals [3]int
	for k, p := range hms {
		n, err := strconv.Atoi(p)
		if p == "" || len(p) > 2 || err != nil {
			return 0, false
		}
		vals[k] = n
	}
	if vals[0] > 23 || vals[1] > 59 || vals[2] > 59 {
		return 0, false
	}
	micros := int64(0)
	if frac != "" {
		f := (frac + "000000")[:6]
		n, err := strconv.Atoi(f)
		if err != nil {
			return 0, false
		}
		micros = int64(n)
	}
	ts := days*microsPerDay + int64(vals[0]*3600+vals[1]*60+vals[2])*1_000_000 + micros
	if zone == "" {
		return ts, true
	}
	offset, ok := zoneOffset(zone, ts)
	if ntz {
		// Spark checks the zone of a TIMESTAMP_NTZ text and ignores it:
		// '2024-07-04 12:00:00+02:00' is 12:00.
		return ts, ok
	}
	return ts - offset*1_000_000, ok
}

// zoneOffset returns the zone's offset in seconds east of UTC at the wall time ts.
func zoneOffset(z string, ts int64) (int64, bool) {
	switch strings.ToUpper(z) {
	case "Z", "UTC", "GMT", "UT":
		return 0, true
	}
	if z[0] == '+' || z[0] == '-' {
		sign := int64(1)
		if z[0] == '-' {
			sign = -1
		}
		d := strings.ReplaceAll(z[1:], ":", "")
		if len(d) != 2 && len(d) != 4 && len(d) != 1 {
			return 0, false
		}
		h, err := strconv.Atoi(d[:min(2, len(d))])
		if err != nil || h > 18 {
			return 0, false
		}
		m := 0
		if len(d) == 4 {
			if m, err = strconv.Atoi(d[2:]); err != nil || m > 59 {
				return 0, false
			}
		}
		return sign * int64(h*3600+m*60), true
	}
	loc, err := time.LoadLocation(z)
	if err != nil {
		return 0, false
	}
	wall := time.UnixMicro(ts).UTC()
	_, off := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, loc).Zone()
	return int64(off), true
}

// formatDate renders days as yyyy-MM-dd; ok is false outside years 1..9999.
func formatDate(days int64) (string, bool) {
	t := time.Unix(days*86400, 0).UTC()
	return t.Format("2006-01-02"), t.Year() >= 1 && t.Year() <= 9999
}

// formatTimestamp renders microseconds as Spark casts a timestamp to a string in UTC:
// yyyy-MM-dd HH:mm:ss and the fraction without trailing zeros.
func formatTimestamp(us int64) (string, bool) {
	t := time.UnixMicro(us).UTC()
	s := t.Format("2006-01-02 15:04:05")
	if f := t.Nanosecond() / 1000; f != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%06d", f), "0")
	}
	return s, t.Year() >= 1 && t.Year() <= 9999
}
