package datafile

import (
	"encoding/binary"
	"errors"
	"math/big"
	"strings"
)

// Decimal is an unscaled 128-bit two's complement integer: Hi holds the high 64 bits
// (with the sign), Lo the low 64 bits. Its scale comes from the column's decimal type.
type Decimal struct {
	Hi int64
	Lo uint64
}

// errDecimalRange reports a value that does not fit its decimal type.
var errDecimalRange = errors.New("datafile: decimal out of range")

// DecimalFromInt64 returns v as an unscaled Decimal.
func DecimalFromInt64(v int64) Decimal {
	return Decimal{Hi: v >> 63, Lo: uint64(v)}
}

// DecimalFromBig converts an unscaled big integer; ok is false if it needs more than 128 bits.
func DecimalFromBig(b *big.Int) (d Decimal, ok bool) {
	if b.BitLen() > 127 {
		// -2^127 is representable but never a valid decimal(38) value, so rejecting it is fine.
		return Decimal{}, false
	}
	var buf [16]byte
	abs := new(big.Int).Abs(b)
	abs.FillBytes(buf[:])
	d = Decimal{Hi: int64(binary.BigEndian.Uint64(buf[:8])), Lo: binary.BigEndian.Uint64(buf[8:])}
	if b.Sign() < 0 {
		d = d.neg()
	}
	return d, true
}

func (d Decimal) neg() Decimal {
	lo := ^d.Lo + 1
	hi := ^d.Hi
	if lo == 0 {
		hi++
	}
	return Decimal{Hi: hi, Lo: lo}
}

// Big returns the unscaled value as a big integer.
func (d Decimal) Big() *big.Int {
	neg := d.Hi < 0
	if neg {
		d = d.neg()
	}
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(d.Hi))
	binary.BigEndian.PutUint64(buf[8:], d.Lo)
	b := new(big.Int).SetBytes(buf[:])
	if neg {
		b.Neg(b)
	}
	return b
}

// Cmp compares two unscaled values of the same scale: -1, 0 or +1.
func (d Decimal) Cmp(o Decimal) int {
	switch {
	case d.Hi < o.Hi:
		return -1
	case d.Hi > o.Hi:
		return 1
	case d.Lo < o.Lo:
		return -1
	case d.Lo > o.Lo:
		return 1
	}
	return 0
}

// String formats the value with scale digits after the point, without exponent
// ("12.30"), as Delta stats and partition values require.
func (d Decimal) String(scale int) string {
	s := d.Big().String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// ParseDecimal parses a plain decimal string ("-12.3") into an unscaled value at scale,
// rejecting strings with more fractional digits than scale or too many digits overall.
func ParseDecimal(s string, precision, scale int) (Decimal, error) {
	t := strings.TrimSpace(s)
	neg := false
	if rest, ok := strings.CutPrefix(t, "-"); ok {
		neg, t = true, rest
	} else {
		t = strings.TrimPrefix(t, "+")
	}
	intPart, frac, _ := strings.Cut(t, ".")
	if intPart == "" && frac == "" {
		return Decimal{}, errors.New("datafile: empty decimal")
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > scale {
		return Decimal{}, errDecimalRange
	}
	digits := intPart + frac + strings.Repeat("0", scale-len(frac))
	for _, c := range digits {
		if c < '0' || c > '9' {
			return Decimal{}, errors.New("datafile: bad decimal " + s)
		}
	}
	if len(strings.TrimLeft(digits, "0")) > precision {
		return Decimal{}, errDecimalRange
	}
	b, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return Decimal{}, errors.New("datafile: bad decimal " + s)
	}
	if neg {
		b.Neg(b)
	}
	d, ok := DecimalFromBig(b)
	if !ok {
		return Decimal{}, errDecimalRange
	}
	return d, nil
}

// appendBigEndian appends the low n bytes of the two's complement value, as Parquet's
// FIXED_LEN_BYTE_ARRAY decimals store them.
func (d Decimal) appendBigEndian(dst []byte, n int) []byte {
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(d.Hi))
	binary.BigEndian.PutUint64(buf[8:], d.Lo)
	return append(dst, buf[16-n:]...)
}

// decimalFromBigEndian sign-extends a big-endian two's complement value of up to 16 bytes.
func decimalFromBigEndian(b []byte) (Decimal, bool) {
	if len(b) > 16 {
		// Leading sign bytes beyond 16 are legal only as pure sign extension.
		ext := b[:len(b)-16]
		fill := byte(0)
		if b[len(b)-16]&0x80 != 0 {
			fill = 0xff
		}
		for _, c := range ext {
			if c != fill {
				return Decimal{}, false
			}
		}
		b = b[len(b)-16:]
	}
	var buf [16]byte
	if len(b) > 0 && b[0]&0x80 != 0 {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	copy(buf[16-len(b):], b)
	return Decimal{Hi: int64(binary.BigEndian.Uint64(buf[:8])), Lo: binary.BigEndian.Uint64(buf[8:])}, true
}

// fitsBytes reports whether the value fits in n bytes of two's complement.
func (d Decimal) fitsBytes(n int) bool {
	if n >= 16 {
		return true
	}
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(d.Hi))
	binary.BigEndian.PutUint64(buf[8:], d.Lo)
	fill := byte(0)
	if d.Hi < 0 {
		fill = 0xff
	}
	for _, c := range buf[:16-n] {
		if c != fill {
			return false
		}
	}
	return buf[16-n]&0x80 == fill&0x80
}

// decimalBytes is the FIXED_LEN_BYTE_ARRAY length Spark uses for a precision: the
// smallest n with 2^(8n-1) > 10^precision.
func decimalBytes(precision int) int {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil)
	for n := 1; ; n++ {
		if new(big.Int).Lsh(big.NewInt(1), uint(8*n-1)).Cmp(limit) >= 0 {
			return n
		}
	}
}

// decimalLimit returns 10^precision, the exclusive bound of a decimal(precision) value.
func decimalLimit(precision int) Decimal {
	d, _ := DecimalFromBig(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil))
	return d
}

// absLess reports whether |d| < limit without allocating; limit must be positive.
func (d Decimal) absLess(limit Decimal) bool {
	if d.Hi < 0 {
		if d == (Decimal{Hi: -1 << 63}) {
			return false
		}
		d = d.neg()
	}
	return d.Cmp(limit) < 0
}
