package codecs

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecimal(t *testing.T) {
	tests := []struct {
		name    string
		bytes   string // hex two's complement
		scale   int
		want    string
		fits    int // smallest precision it fits
		wantI64 bool
	}{
		{name: "zero", bytes: "", scale: 2, want: "0.00", fits: 0, wantI64: true},
		{name: "123.45", bytes: "3039", scale: 2, want: "123.45", fits: 5, wantI64: true},
		{name: "-1.00", bytes: "9c", scale: 2, want: "-1.00", fits: 3, wantI64: true},
		{name: "-0.01", bytes: "ff", scale: 2, want: "-0.01", fits: 1, wantI64: true},
		{name: "money max", bytes: "7fffffffffffffff", scale: 4, want: "922337203685477.5807", fits: 19, wantI64: true},
		{name: "money min", bytes: "8000000000000000", scale: 4, want: "-922337203685477.5808", fits: 19, wantI64: true},
		{name: "2^63 needs 9 bytes", bytes: "008000000000000000", scale: 0, want: "9223372036854775808", fits: 19},
		{name: "38 nines", bytes: "4b3b4ca85a86c47a098a223fffffffff", scale: 0, want: "99999999999999999999999999999999999999", fits: 38},
		{name: "-38 nines scale 38", bytes: "b4c4b357a5793b85f675ddc000000001", scale: 38, want: "-0.99999999999999999999999999999999999999", fits: 38},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := DecimalFromBytes(mustHex(tc.bytes), tc.scale)
			require.True(t, ok)
			require.Equal(t, tc.want, d.String())
			require.True(t, d.FitsPrecision(tc.fits+boolInt(tc.fits == 0)))
			if tc.fits > 1 {
				require.False(t, d.FitsPrecision(tc.fits-1))
			}
			_, isI64 := d.Int64()
			require.Equal(t, tc.wantI64, isI64)
			parsed, err := ParseDecimal(tc.want, tc.scale)
			require.NoError(t, err)
			require.Equal(t, d, parsed)
			// Big and AppendBytes agree with the input.
			n := new(big.Int)
			n.SetString(removeDot(tc.want), 10)
			require.Zero(t, n.Cmp(d.Big()))
			back, ok := DecimalFromBytes(d.AppendBytes(nil, 16), tc.scale)
			require.True(t, ok)
			require.Equal(t, d, back)
		})
	}
	_, ok := DecimalFromBytes(mustHex("0100000000000000000000000000000000"), 0)
	require.False(t, ok, "2^128 does not fit")
	_, ok = DecimalFromBytes(mustHex("80000000000000000000000000000000"), 0)
	require.True(t, ok, "-2^127 fits")
	_, ok = DecimalFromBytes(mustHex("0080000000000000000000000000000000"), 0)
	require.False(t, ok, "+2^127 does not fit")
}

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in      string
		scale   int
		want    Decimal
		wantErr bool
	}{
		{in: "1.5", scale: 3, want: DecimalFromInt64(1500, 3)},
		{in: "+7", scale: 0, want: DecimalFromInt64(7, 0)},
		{in: ".5", scale: 1, want: DecimalFromInt64(5, 1)},
		{in: "1.2300", scale: 2, want: DecimalFromInt64(123, 2)},
		{in: "1.234", scale: 2, wantErr: true},
		{in: "1e3", scale: 0, wantErr: true},
		{in: "", scale: 0, wantErr: true},
		{in: "-", scale: 0, wantErr: true},
		{in: "1.2.3", scale: 3, wantErr: true},
		{in: "999999999999999999999999999999999999999999", scale: 0, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDecimal(tc.in, tc.scale)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func removeDot(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '.' {
			out = append(out, s[i])
		}
	}
	return string(out)
}
