package decimal128_test

import (
	"encoding/hex"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

func mustBig(t *testing.T, s string) decimal128.Num {
	t.Helper()
	b, ok := new(big.Int).SetString(s, 10)
	require.True(t, ok, s)
	n, ok := decimal128.FromBig(b)
	require.True(t, ok, s)
	return n
}

// minimalBytes is the shortest big-endian two's-complement form of b.
func minimalBytes(t *testing.T, b *big.Int) []byte {
	t.Helper()
	for size := 1; size <= 16; size++ {
		lim := new(big.Int).Lsh(big.NewInt(1), uint(8*size-1))
		if b.Cmp(lim) < 0 && b.Cmp(new(big.Int).Neg(lim)) >= 0 {
			n, ok := decimal128.FromBig(b)
			require.True(t, ok)
			return n.AppendBytes(nil, size)
		}
	}
	t.Fatalf("%s needs more than 16 bytes", b)
	return nil
}

func TestFromBytes(t *testing.T) {
	tests := []struct {
		name  string
		bytes string // hex two's complement
		scale int
		want  string
		fits  int // smallest precision it fits
	}{
		{name: "zero", bytes: "", scale: 2, want: "0.00", fits: 0},
		{name: "123.45", bytes: "3039", scale: 2, want: "123.45", fits: 5},
		{name: "-1.00", bytes: "9c", scale: 2, want: "-1.00", fits: 3},
		{name: "-0.01", bytes: "ff", scale: 2, want: "-0.01", fits: 1},
		{name: "money max", bytes: "7fffffffffffffff", scale: 4, want: "922337203685477.5807", fits: 19},
		{name: "money min", bytes: "8000000000000000", scale: 4, want: "-922337203685477.5808", fits: 19},
		{name: "2^63 needs 9 bytes", bytes: "008000000000000000", scale: 0, want: "9223372036854775808", fits: 19},
		{name: "38 nines", bytes: "4b3b4ca85a86c47a098a223fffffffff", scale: 0, want: "99999999999999999999999999999999999999", fits: 38},
		{name: "-38 nines scale 38", bytes: "b4c4b357a5793b85f675ddc000000001", scale: 38, want: "-0.99999999999999999999999999999999999999", fits: 38},
		{name: "sign-padded beyond 16 bytes", bytes: "004b3b4ca85a86c47a098a223fffffffff", scale: 0, want: "99999999999999999999999999999999999999", fits: 38},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, ok := decimal128.FromBytes(mustHex(t, tc.bytes))
			require.True(t, ok)
			require.Equal(t, tc.want, n.String(tc.scale))
			require.True(t, n.FitsPrecision(max(tc.fits, 1)))
			if tc.fits > 1 {
				require.False(t, n.FitsPrecision(tc.fits-1))
			}
			parsed, err := decimal128.Parse(tc.want, decimal128.MaxPrecision, tc.scale)
			require.NoError(t, err)
			require.Equal(t, n, parsed)
			// Big and AppendBytes agree with the input.
			b, ok := new(big.Int).SetString(strings.Replace(tc.want, ".", "", 1), 10)
			require.True(t, ok)
			require.Zero(t, b.Cmp(n.Big()))
			back, ok := decimal128.FromBytes(n.AppendBytes(nil, 16))
			require.True(t, ok)
			require.Equal(t, n, back)
		})
	}
	for _, tc := range []struct {
		name  string
		bytes string
		ok    bool
	}{
		{"2^128 does not fit", "0100000000000000000000000000000000", false},
		{"-2^127 fits", "80000000000000000000000000000000", true},
		{"+2^127 does not fit", "0080000000000000000000000000000000", false},
		{"17 significant bytes do not fit", "0100000000000000000000000000000000", false},
		{"padding that is no sign extension", "ff7fffffffffffffffffffffffffffffff", false},
	} {
		_, ok := decimal128.FromBytes(mustHex(t, tc.bytes))
		require.Equal(t, tc.ok, ok, tc.name)
	}
}

func TestAppendBytes(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "127", "-128", "128", strings.Repeat("9", 38), "-" + strings.Repeat("9", 38)} {
		n := mustBig(t, s)
		back, ok := decimal128.FromBytes(n.AppendBytes(nil, 16))
		require.True(t, ok)
		require.Equal(t, n, back, s)
		// The minimal two's-complement encoding decodes the same.
		back, ok = decimal128.FromBytes(minimalBytes(t, n.Big()))
		require.True(t, ok)
		require.Equal(t, n, back, s)
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		unscaled string
		scale    int
		want     string
	}{
		{"0", 0, "0"},
		{"0", 2, "0.00"},
		{"1230", 2, "12.30"},
		{"-5", 3, "-0.005"},
		{strings.Repeat("9", 38), 18, strings.Repeat("9", 20) + "." + strings.Repeat("9", 18)},
		{"-" + strings.Repeat("9", 38), 38, "-0." + strings.Repeat("9", 38)},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			n := mustBig(t, tc.unscaled)
			require.Equal(t, tc.want, n.String(tc.scale))
			back, err := decimal128.Parse(tc.want, 38, tc.scale)
			require.NoError(t, err)
			require.Equal(t, n, back)
			require.Equal(t, tc.unscaled, n.Big().String())
		})
	}
}

func TestFitsPrecision(t *testing.T) {
	tests := []struct {
		name string
		n    decimal128.Num
		p    int
		want bool
	}{
		{"999 has 3 digits", decimal128.FromInt64(999), 3, true},
		{"-1000 has 4", decimal128.FromInt64(-1000), 3, false},
		{"zero fits precision 0", decimal128.Num{}, 0, true},
		{"-2^127 has 39 digits", decimal128.Num{Hi: -1 << 63}, 38, false},
		{"precision above 38", decimal128.FromInt64(1), 39, false},
		{"negative precision", decimal128.FromInt64(0), -1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.n.FitsPrecision(tc.p))
		})
	}
}

func TestCmp(t *testing.T) {
	tests := []struct {
		a, b decimal128.Num
		want int
	}{
		{decimal128.FromInt64(-3), decimal128.FromInt64(2), -1},
		{decimal128.FromInt64(2), decimal128.FromInt64(-3), 1},
		{decimal128.FromInt64(7), decimal128.FromInt64(7), 0},
		{decimal128.Num{Lo: 1 << 63}, decimal128.FromInt64(1), 1}, // the low word is unsigned
		{decimal128.Num{Hi: -1 << 63}, decimal128.FromInt64(-1), -1},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, tc.a.Cmp(tc.b), "%v vs %v", tc.a, tc.b)
	}
}
