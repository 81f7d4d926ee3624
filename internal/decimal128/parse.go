package decimal128

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Errors of [Parse], wrapped with the text that failed.
var (
	// ErrSyntax: the text is no plain decimal number.
	ErrSyntax = errors.New("decimal128: not a plain decimal")
	// ErrRange: the number does not fit the precision and scale.
	ErrRange = errors.New("decimal128: out of range")
)

// Parse reads plain decimal text ("-12.5", "+3", ".5"; no exponent, no spaces) as a
// value of decimal(precision, scale), in units of 10^-scale. Fractional digits beyond
// the scale must be zeros: Parse refuses to round. Text with more than precision
// significant digits gives ErrRange, so a precision of at most 38 always fits; scale must
// not be negative.
func Parse(s string, precision, scale int) (Num, error) {
	t, neg := strings.CutPrefix(s, "-")
	if !neg {
		t = strings.TrimPrefix(t, "+")
	}
	intPart, frac, _ := strings.Cut(t, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return Num{}, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	if len(frac) > scale {
		if strings.TrimRight(frac[scale:], "0") != "" {
			return Num{}, fmt.Errorf("%w: %q has more than %d fractional digits", ErrRange, s, scale)
		}
		frac = frac[:scale]
	}
	digits := intPart + frac + strings.Repeat("0", scale-len(frac))
	if len(strings.TrimLeft(digits, "0")) > precision {
		return Num{}, fmt.Errorf("%w: %q has more than %d digits", ErrRange, s, precision)
	}
	b, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return Num{}, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	if neg {
		b.Neg(b)
	}
	n, ok := FromBig(b)
	if !ok {
		return Num{}, fmt.Errorf("%w: %q exceeds 128 bits", ErrRange, s)
	}
	return n, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
