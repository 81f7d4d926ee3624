package decimal128_test

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// FuzzParse checks that whatever Parse accepts fits its precision and formats back to
// text that parses to the same value.
//
//	go test -fuzz FuzzParse ./internal/decimal128/
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "-0.01", "123.45", "+7", ".5", "1.2300", "1e3", "99999999999999999999999999999999999999"} {
		f.Add(s, uint8(38), uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, precision, scale uint8) {
		if len(s) > 128 {
			return
		}
		p, sc := int(precision%(decimal128.MaxPrecision+1)), int(scale%(decimal128.MaxPrecision+1))
		n, err := decimal128.Parse(s, p, sc)
		if err != nil {
			return
		}
		require.True(t, n.FitsPrecision(p), "%q at (%d,%d)", s, p, sc)
		back, err := decimal128.Parse(n.String(sc), p, sc)
		require.NoError(t, err)
		require.Equal(t, n, back)
	})
}

// FuzzFromBytes checks FromBytes against math/big's reading of the same two's
// complement, and that AppendBytes round-trips.
//
//	go test -fuzz FuzzFromBytes ./internal/decimal128/
func FuzzFromBytes(f *testing.F) {
	for _, b := range [][]byte{{}, {0xff}, {0x30, 0x39}, {0x00, 0x80, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 17)} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64 {
			return
		}
		want := new(big.Int).SetBytes(b)
		if len(b) > 0 && b[0]&0x80 != 0 {
			want.Sub(want, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		n, ok := decimal128.FromBytes(b)
		fits := want.Cmp(new(big.Int).Lsh(big.NewInt(1), 127)) < 0 && want.Cmp(new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127))) >= 0
		require.Equal(t, fits, ok, "%x", b)
		if !ok {
			return
		}
		require.Zero(t, want.Cmp(n.Big()), "%x", b)
		back, ok := decimal128.FromBytes(n.AppendBytes(nil, 16))
		require.True(t, ok)
		require.Equal(t, n, back)
	})
}
