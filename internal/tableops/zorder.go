package tableops

import (
	"bytes"
	"slices"
)

// maxRangeIDs is the number of ranges a Z-order column's values fall into, Delta's
// spark.databricks.io.skipping.mdc.rangeId.max default.
const maxRangeIDs = 1000

// zOrderRows sorts rows along Delta's Z-order curve over the fields at the given
// indexes: each field's values map to range ids (0..maxRangeIDs-1, nulls first, equal
// values one id) as range_partition_id does, and rows sort by the ids' bits interleaved
// from the most significant, as interleave_bits does. Delta draws its range bounds from
// a sample; these are exact quantiles of the rows.
func zOrderRows(rows [][]any, fields []int) {
	n := len(rows)
	if n == 0 || len(fields) == 0 {
		return
	}
	ranges := min(maxRangeIDs, n)
	ids := make([][]uint32, len(fields)) // by field, by row
	idx := make([]int, n)
	for fi, f := range fields {
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return compareValues(rows[a][f], rows[b][f]) })
		ids[fi] = make([]uint32, n)
		for rank, i := range idx {
			if rank > 0 && compareValues(rows[i][f], rows[idx[rank-1]][f]) == 0 {
				ids[fi][i] = ids[fi][idx[rank-1]]
				continue
			}
			ids[fi][i] = uint32(rank * ranges / n)
		}
	}
	keys := make([][]byte, n)
	for i := range keys {
		col := make([]uint32, len(fields))
		for fi := range fields {
			col[fi] = ids[fi][i]
		}
		keys[i] = interleaveBits(col)
	}
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	sorted := make([][]any, n)
	for i, j := range idx {
		sorted[i] = rows[j]
	}
	copy(rows, sorted)
}

// interleaveBits interleaves the bits of the values, most significant first: bit 31 of
// each value in turn, then bit 30, and so on, into 4 bytes per value.
func interleaveBits(vals []uint32) []byte {
	out := make([]byte, 4*len(vals))
	pos := 0
	for bit := 31; bit >= 0; bit-- {
		for _, v := range vals {
			if v>>uint(bit)&1 == 1 {
				out[pos/8] |= 0x80 >> uint(pos%8)
			}
			pos++
		}
	}
	return out
}
