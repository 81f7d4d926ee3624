package codecs

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"strings"
)

// Decimal is an exact decimal number: a 128-bit two's-complement unscaled
// integer (Hi holds the sign and upper 64 bits, Lo the lower 64) times
// 10^-Scale. 128 bits hold every decimal(38,s) value, so no value needs a
// heap allocation, and values compare with ==.
type Decimal struct {
	Hi    int64
	Lo    uint64
	Scale int32
}

// DecimalFromInt64 returns unscaled × 10^-scale.
func DecimalFromInt64(unscaled int64, scale int) Decimal {
	return Decimal{Hi: unscaled >> 63, Lo: uint64(unscaled), Scale: int32(scale)}
}

// DecimalFromBytes reads a big-endian two's-complement unscaled integer
// (Java BigInteger.toByteArray, Avro's decimal encoding). It reports false
// when the number needs more than 128 bits.
func DecimalFromBytes(b []byte, scale int) (Decimal, bool) {
	d := Decimal{Scale: int32(scale)}
	if len(b) == 0 {
		return d, true
	}
	neg := b[0]&0x80 != 0
	// Drop redundant sign-extension bytes (a lenient writer may pad).
	pad := byte(0)
	if neg {
		pad = 0xff
	}
	for len(b) > 16 && b[0] == pad {
		b = b[1:]
	}
	if len(b) > 16 || (len(b) == 16 && (b[0]&0x80 != 0) != neg) {
		return d, false
	}
	var buf [16]byte
	if neg {
		buf = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	copy(buf[16-len(b):], b)
	d.Hi = int64(binary.BigEndian.Uint64(buf[:8]))
	d.Lo = binary.BigEndian.Uint64(buf[8:])
	return d, true
}

// Negative reports whether d < 0.
func (d Decimal) Negative() bool { return d.Hi < 0 }

// magnitude returns |unscaled| as an unsigned 128-bit (hi, lo) pair.
// The most negative 128-bit value has no positive twin; its magnitude is
// still correct as an unsigned number.
func (d Decimal) magnitude() (hi, lo uint64) {
	hi, lo = uint64(d.Hi), d.Lo
	if d.Hi < 0 {
		lo, borrow := bits.Sub64(0, lo, 0)
		hi, _ = bits.Sub64(0, hi, borrow)
		return hi, lo
	}
	return hi, lo
}

// pow10 holds 10^0 .. 10^38 as unsigned 128-bit (hi, lo) pairs.
var pow10 = func() (t [MaxDecimalPrecision + 1][2]uint64) {
	t[0] = [2]uint64{0, 1}
	for i := 1; i < len(t); i++ {
		hi, lo := t[i-1][0], t[i-1][1]
		h1, l := bits.Mul64(lo, 10)
		t[i] = [2]uint64{hi*10 + h1, l}
	}
	return t
}()

// FitsPrecision reports whether |unscaled| < 10^p, i.e. d has at most p
// digits; p must be within 0..38.
func (d Decimal) FitsPrecision(p int) bool {
	if p < 0 || p > MaxDecimalPrecision {
		return false
	}
	hi, lo := d.magnitude()
	lim := pow10[p]
	return hi < lim[0] || (hi == lim[0] && lo < lim[1])
}

// Big returns the unscaled integer as a big.Int.
func (d Decimal) Big() *big.Int {
	var buf [16]byte
	hi, lo := d.magnitude()
	binary.BigEndian.PutUint64(buf[:8], hi)
	binary.BigEndian.PutUint64(buf[8:], lo)
	n := new(big.Int).SetBytes(buf[:])
	if d.Negative() {
		n.Neg(n)
	}
	return n
}

// AppendBytes appends the unscaled integer as size big-endian two's-complement
// bytes (Parquet's FIXED_LEN_BYTE_ARRAY decimal layout); size is 1..16 and
// must be large enough for the value.
func (d Decimal) AppendBytes(dst []byte, size int) []byte {
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(d.Hi))
	binary.BigEndian.PutUint64(buf[8:], d.Lo)
	return append(dst, buf[16-size:]...)
}

// Int64 returns the unscaled integer when it fits in an int64 (always true
// for precision ≤ 18), for Parquet's INT64 decimal layout.
func (d Decimal) Int64() (int64, bool) {
	v := int64(d.Lo)
	return v, d.Hi == v>>63
}

// String renders d exactly in plain notation, e.g. "-0.0100".
func (d Decimal) String() string {
	s := d.Big().String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if sc := int(d.Scale); sc > 0 {
		if len(s) <= sc {
			s = strings.Repeat("0", sc-len(s)+1) + s
		}
		s = s[:len(s)-sc] + "." + s[len(s)-sc:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// ParseDecimal parses plain decimal text ("-12.5", "3", "1E+2" is refused)
// into a Decimal with the given scale. Text with more fractional digits than
// scale is refused rather than rounded.
func ParseDecimal(s string, scale int) (Decimal, error) {
	body := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	intPart, frac, _ := strings.Cut(body, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return Decimal{}, fmt.Errorf("parsing decimal %q: not a plain decimal", s)
	}
	if len(frac) > scale {
		if strings.TrimRight(frac[scale:], "0") != "" {
			return Decimal{}, fmt.Errorf("parsing decimal %q: more than %d fractional digits", s, scale)
		}
		frac = frac[:scale]
	}
	digits := intPart + frac + strings.Repeat("0", scale-len(frac))
	n, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return Decimal{}, fmt.Errorf("parsing decimal %q: not a plain decimal", s)
	}
	if strings.HasPrefix(s, "-") {
		n.Neg(n)
	}
	return decimalFromBig(n, scale)
}

func decimalFromBig(n *big.Int, scale int) (Decimal, error) {
	if n.BitLen() > 127 {
		return Decimal{}, fmt.Errorf("decimal %s exceeds 128 bits", n)
	}
	var mag [16]byte
	new(big.Int).Abs(n).FillBytes(mag[:])
	d := Decimal{Hi: int64(binary.BigEndian.Uint64(mag[:8])), Lo: binary.BigEndian.Uint64(mag[8:]), Scale: int32(scale)}
	if n.Sign() < 0 {
		lo, borrow := bits.Sub64(0, d.Lo, 0)
		hi, _ := bits.Sub64(0, uint64(d.Hi), borrow)
		d.Hi, d.Lo = int64(hi), lo
	}
	return d, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
