package tableops

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestCompactedRowsAcrossOutputs places rows written across several output
// files, as a bin larger than the target size writes them.
func TestCompactedRowsAcrossOutputs(t *testing.T) {
	b := &compacted{}
	for _, n := range []int{3, 2, 4} {
		b.outputs = append(b.outputs, deltalog.Add{Path: fmt.Sprint(n), Stats: fmt.Sprintf(`{"numRecords":%d}`, n)})
	}
	for _, tc := range []struct {
		row, out, at int64
	}{{0, 0, 0}, {2, 0, 2}, {3, 1, 0}, {4, 1, 1}, {5, 2, 0}, {8, 2, 3}} {
		j, at, err := b.outputRow(tc.row)
		require.NoError(t, err)
		require.Equal(t, [2]int64{tc.out, tc.at}, [2]int64{int64(j), at}, "row %d", tc.row)
	}
	_, _, err := b.outputRow(9)
	require.ErrorIs(t, err, errNoRebase)

	require.NoError(t, b.markRange(2, 4)) // output 0's last row, all of 1, 2's first
	require.Equal(t, []uint64{2}, b.gone[0].ToArray())
	require.Equal(t, []uint64{0, 1}, b.gone[1].ToArray())
	require.Equal(t, []uint64{0}, b.gone[2].ToArray())
	require.Equal(t, []bool{false, true, false}, []bool{b.empty(0), b.empty(1), b.empty(2)})
}
