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
func decimalString(v *big.Int, s int) string { return decimal128.FormatBig(v, s) }

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
