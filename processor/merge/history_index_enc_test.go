package merge

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// TestHistoryIndexEncoding: a newest version comes back from the index as
// it went in, value types included; one with a value of another type is
// kept as it is.
func TestHistoryIndexEncoding(t *testing.T) {
	end := histBenchPos(1<<40, 3)
	cases := map[string]*hVersion{
		"every type": {vals: []any{nil, "", "é", []byte{}, []byte(nil), []byte{0, 1}, false, true, int8(-8), int16(300), int32(-70000),
			int64(math.MinInt64), float32(-1.5), math.NaN(), math.Inf(1), decimal128.Num{Hi: -1, Lo: 42}, decimal128.FromInt64(1 << 62)},
			start: histBenchPos(7, 1), startAt: int64(-5), end: &end, endAt: int64(1 << 50), last: histBenchPos(9, 2), lastAt: int64(77), fromRow: 1 << 33},
		"open, times shared": {vals: []any{int32(1)}, start: histBenchPos(7, 0), startAt: int64(5), last: histBenchPos(7, 0), lastAt: int64(5)},
		"no times":           {vals: []any{}, start: histBenchPos(0, 0), last: histBenchPos(1, 0)},
		"last time only":     {vals: []any{"x"}, start: histBenchPos(3, 1), last: histBenchPos(3, 1), lastAt: int64(0)},
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			x := newHIndex()
			id := x.file("part-0.parquet")
			x.addRow("k", id, 0)
			v.fromFile = "part-0.parquet"
			x.setNewest(0, v)
			require.Empty(t, x.wide)
			got := x.newestOf("k")
			require.Len(t, got.vals, len(v.vals))
			for i := range v.vals {
				if f, ok := v.vals[i].(float64); ok && math.IsNaN(f) {
					require.True(t, math.IsNaN(got.vals[i].(float64)))
					continue
				}
				require.IsType(t, v.vals[i], got.vals[i], "value %d", i)
				require.Equal(t, v.vals[i], got.vals[i], "value %d", i)
			}
			want := *v
			want.vals, got.vals = nil, nil
			require.Equal(t, &want, got)
			require.Equal(t, v.start, x.newestStart(0))
			f, row, ok := x.newestFrom(0)
			require.True(t, ok)
			require.Equal(t, id, f)
			require.Equal(t, v.fromRow, row)
		})
	}
	t.Run("another type", func(t *testing.T) {
		x := newHIndex()
		id := x.file("p")
		x.addRow("k", id, 3)
		v := &hVersion{vals: []any{[]any{int32(1)}}, start: histBenchPos(1, 1), last: histBenchPos(1, 1), fromFile: "p", fromRow: 3}
		x.setNewest(0, v)
		require.Len(t, x.wide, 1)
		require.Equal(t, v, x.newestOf("k"))
		f, row, ok := x.newestFrom(0)
		require.True(t, ok && f == id && row == 3)
		x.forget(0)
		require.Empty(t, x.wide)
		require.Nil(t, x.newestOf("k"))
	})
}
