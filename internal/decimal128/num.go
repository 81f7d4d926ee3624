package decimal128

import (
	"encoding/binary"
	"math/big"
	"math/bits"
	"strings"
)

// MaxPrecision is the most decimal digits a Num holds, Delta's and Spark's widest
// decimal: 10^38 < 2^127.
const MaxPrecision = 38

// Num is an unscaled 128-bit two's-complement integer: Hi holds the sign and the upper
// 64 bits, Lo the lower 64. The zero Num is 0.
type Num struct {
	Hi int64
	Lo uint64
}

// FromInt64 returns v as a Num.
func FromInt64(v int64) Num {
	return Num{Hi: v >> 63, Lo: uint64(v)}
}

// FromBig converts a big integer; it reports false when the integer needs more than 128
// bits.
func FromBig(b *big.Int) (Num, bool) {
	if b.BitLen() > 127 {
		// -2^127 would fit, but it is no decimal(38) value, so refusing it is harmless.
		return Num{}, false
	}
	var buf [16]byte
	new(big.Int).Abs(b).FillBytes(buf[:])
	n := Num{Hi: int64(binary.BigEndian.Uint64(buf[:8])), Lo: binary.BigEndian.Uint64(buf[8:])}
	if b.Sign() < 0 {
		n = n.neg()
	}
	return n, true
}

// FromBytes reads a big-endian two's-complement integer of any length (Java's
// BigInteger.toByteArray, Avro's decimal encoding and Parquet's BYTE_ARRAY and
// FIXED_LEN_BYTE_ARRAY decimals). Bytes beyond 16 must be pure sign extension, which
// lenient writers pad with; FromBytes reports false when the integer needs more than
// 128 bits. No bytes are 0.
func FromBytes(b []byte) (Num, bool) {
	if len(b) > 16 {
		ext, rest := b[:len(b)-16], b[len(b)-16:]
		fill := byte(0)
		if rest[0]&0x80 != 0 {
			fill = 0xff
		}
		for _, c := range ext {
			if c != fill {
				return Num{}, false
			}
		}
		b = rest
	}
	var buf [16]byte
	if len(b) > 0 && b[0]&0x80 != 0 {
		buf = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	copy(buf[16-len(b):], b)
	return Num{Hi: int64(binary.BigEndian.Uint64(buf[:8])), Lo: binary.BigEndian.Uint64(buf[8:])}, true
}

// AppendBytes appends n as size big-endian two's-complement bytes (Parquet's
// FIXED_LEN_BYTE_ARRAY layout). size is 1..16 and must hold the value, which a
// precision check guarantees.
func (n Num) AppendBytes(dst []byte, size int) []byte {
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(n.Hi))
	binary.BigEndian.PutUint64(buf[8:], n.Lo)
	return append(dst, buf[16-size:]...)
}

// neg returns -n, wrapping for -2^127 as two's complement does.
func (n Num) neg() Num {
	lo, borrow := bits.Sub64(0, n.Lo, 0)
	hi, _ := bits.Sub64(0, uint64(n.Hi), borrow)
	return Num{Hi: int64(hi), Lo: lo}
}

// abs returns |n| as an unsigned 128-bit (hi, lo) pair; -2^127 has no positive twin,
// but its magnitude is right as an unsigned number.
func (n Num) abs() (hi, lo uint64) {
	if n.Hi < 0 {
		n = n.neg()
	}
	return uint64(n.Hi), n.Lo
}

// Cmp compares two values of one scale: -1, 0 or +1.
func (n Num) Cmp(o Num) int {
	switch {
	case n.Hi < o.Hi:
		return -1
	case n.Hi > o.Hi:
		return 1
	case n.Lo < o.Lo:
		return -1
	case n.Lo > o.Lo:
		return 1
	}
	return 0
}

// pow10 holds 10^0 .. 10^38 as unsigned 128-bit (hi, lo) pairs.
var pow10 = func() (t [MaxPrecision + 1][2]uint64) {
	t[0] = [2]uint64{0, 1}
	for i := 1; i < len(t); i++ {
		hi, lo := t[i-1][0], t[i-1][1]
		h1, l := bits.Mul64(lo, 10)
		t[i] = [2]uint64{hi*10 + h1, l}
	}
	return t
}()

// FitsPrecision reports whether n has at most p digits (|n| < 10^p), that is whether
// it is a value of decimal(p, s) for any scale; p outside 0..38 gives false. It does not
// allocate: writers check every value with it.
func (n Num) FitsPrecision(p int) bool {
	if p < 0 || p > MaxPrecision {
		return false
	}
	hi, lo := n.abs()
	lim := pow10[p]
	return hi < lim[0] || (hi == lim[0] && lo < lim[1])
}

// Big returns n as a big integer.
func (n Num) Big() *big.Int {
	var buf [16]byte
	hi, lo := n.abs()
	binary.BigEndian.PutUint64(buf[:8], hi)
	binary.BigEndian.PutUint64(buf[8:], lo)
	b := new(big.Int).SetBytes(buf[:])
	if n.Hi < 0 {
		b.Neg(b)
	}
	return b
}

// String formats n × 10^-scale exactly in plain notation with scale fractional digits
// ("12.30", "-0.005"), as Delta statistics, partition values and Debezium's string mode
// write decimals.
func (n Num) String(scale int) string { return FormatBig(n.Big(), scale) }

// FormatBig formats v × 10^-scale as [Num.String] does, for values of any size.
func FormatBig(v *big.Int, scale int) string {
	s := v.String()
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
