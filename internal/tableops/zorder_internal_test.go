package tableops

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInterleaveBits(t *testing.T) {
	for _, tc := range []struct {
		vals []uint32
		want []byte
	}{
		{[]uint32{1 << 31, 0}, []byte{0x80, 0, 0, 0, 0, 0, 0, 0}},
		{[]uint32{0, 1 << 31}, []byte{0x40, 0, 0, 0, 0, 0, 0, 0}},
		{[]uint32{1, 1}, []byte{0, 0, 0, 0, 0, 0, 0, 0x03}},
		{[]uint32{3, 0}, []byte{0, 0, 0, 0, 0, 0, 0, 0x0a}},
		{[]uint32{5}, []byte{0, 0, 0, 5}},
	} {
		require.Equal(t, tc.want, interleaveBits(tc.vals), "%v", tc.vals)
	}
}

// TestRangeIDs: ids follow value order, equal values share one, nulls come first (here
// in the range of the smallest value: the bounds are 10, 20, 30), and a column of few
// distinct values gets as many ids as values.
func TestRangeIDs(t *testing.T) {
	rows := [][]any{{int64(30)}, {nil}, {int64(10)}, {int64(20)}, {int64(10)}, {int64(30)}}
	require.Equal(t, []uint32{2, 0, 0, 1, 0, 2}, rangeIDs(rows, 0))

	var many [][]any
	for i := range 5000 {
		many = append(many, []any{int64(i % 7)})
	}
	ids := rangeIDs(many, 0)
	distinct := map[uint32]bool{}
	for _, id := range ids {
		distinct[id] = true
	}
	require.Len(t, distinct, 7)
	require.Less(t, ids[6], uint32(7))
}
