package tableops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

func TestCompareValues(t *testing.T) {
	tests := []struct {
		a, b any
		want int
	}{
		{nil, nil, 0}, {nil, int64(1), -1}, {int64(1), nil, 1},
		{int64(1), int64(2), -1}, {int32(5), int32(5), 0}, {"b", "a", 1},
		{[]byte{1}, []byte{1, 0}, -1}, {false, true, -1},
		{decimal128.FromInt64(-3), decimal128.FromInt64(2), -1},
		{int64(1), "x", 0}, // mismatched types never panic
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, compareValues(tt.a, tt.b), "%v vs %v", tt.a, tt.b)
	}
}

func TestSortRows(t *testing.T) {
	rows := [][]any{{int64(2), "b"}, {int64(1), "z"}, {nil, "n"}, {int64(1), "a"}}
	sortRows(rows, []int{0})
	require.Equal(t, [][]any{{nil, "n"}, {int64(1), "z"}, {int64(1), "a"}, {int64(2), "b"}}, rows, "nulls first, stable")
	sortRows(rows, nil)
	require.Equal(t, [][]any{{nil, "n"}, {int64(1), "z"}, {int64(1), "a"}, {int64(2), "b"}}, rows, "no fields: unchanged")
}
