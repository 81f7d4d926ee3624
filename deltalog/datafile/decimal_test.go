package datafile

import (
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecimalString(t *testing.T) {
	cases := []struct {
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
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			d := mustBig(t, tc.unscaled)
			require.Equal(t, tc.want, d.String(tc.scale))
			back, err := ParseDecimal(tc.want, 38, tc.scale)
			require.NoError(t, err)
			require.Equal(t, d, back)
			require.Equal(t, tc.unscaled, d.Big().String())
		})
	}
}

func TestParseDecimalErrors(t *testing.T) {
	for _, s := range []string{"", "1.234", "abc", "1e5", "1234"} {
		_, err := ParseDecimal(s, 3, 2)
		require.Error(t, err, s)
	}
	d, err := ParseDecimal("1.50", 3, 1)
	require.NoError(t, err, "trailing zeros beyond the scale are fine")
	require.Equal(t, DecimalFromInt64(15), d)
}

func TestDecimalBytes(t *testing.T) {
	require.Equal(t, 1, decimalBytes(2))
	require.Equal(t, 5, decimalBytes(10))
	require.Equal(t, 9, decimalBytes(19))
	require.Equal(t, 16, decimalBytes(38))
	for _, s := range []string{"0", "1", "-1", "127", "-128", "128", strings.Repeat("9", 38), "-" + strings.Repeat("9", 38)} {
		d := mustBig(t, s)
		b := d.appendBigEndian(nil, 16)
		back, ok := decimalFromBigEndian(b)
		require.True(t, ok)
		require.Equal(t, d, back, s)
		// The minimal two's complement encoding decodes the same.
		min := minimalBytes(d.Big())
		back, ok = decimalFromBigEndian(min)
		require.True(t, ok)
		require.Equal(t, d, back, s)
		require.True(t, d.fitsBytes(len(min)), s)
	}
	_, ok := decimalFromBigEndian(append([]byte{0x01}, make([]byte, 16)...))
	require.False(t, ok, "17 significant bytes do not fit")
	require.True(t, DecimalFromInt64(999).absLess(decimalLimit(3)))
	require.False(t, DecimalFromInt64(-1000).absLess(decimalLimit(3)))
	require.False(t, Decimal{Hi: -1 << 63}.absLess(decimalLimit(38)))
}

// minimalBytes is the shortest big-endian two's complement form of b.
func minimalBytes(b *big.Int) []byte {
	for n := 1; n <= 16; n++ {
		lim := new(big.Int).Lsh(big.NewInt(1), uint(8*n-1))
		if b.Cmp(lim) < 0 && b.Cmp(new(big.Int).Neg(lim)) >= 0 {
			d, _ := DecimalFromBig(b)
			return d.appendBigEndian(nil, n)
		}
	}
	return nil
}
