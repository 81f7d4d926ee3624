package deltatext_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/deltatext"
)

func TestPartitionFloatGolden(t *testing.T) {
	for _, c := range []struct {
		f    float64
		bits int
		want string
	}{
		{1, 64, "1.0"},
		{-0.5, 64, "-0.5"},
		{0, 64, "0.0"},
		{1e21, 64, "1e+21"},
		{float64(float32(0.1)), 32, "0.1"},
		{math.NaN(), 64, "NaN"},
		{math.Inf(1), 64, "Infinity"},
		{math.Inf(-1), 32, "-Infinity"},
	} {
		got := deltatext.PartitionFloat(c.f, c.bits)
		require.Equal(t, c.want, got)
		back, err := strconv.ParseFloat(got, c.bits)
		require.NoError(t, err, "readers parse %q", got)
		if !math.IsNaN(c.f) {
			require.Equal(t, c.f, back)
		}
	}
}
