package tableops

import (
	"bytes"
	"slices"
)

// maxRangeIDs is the number of ranges a Z-order column's values fall into, Delta's
// spark.databricks.io.skipping.mdc.rangeId.max default.
const maxRangeIDs = 1000

// zOrderRows sorts rows along Delta's Z-order curve over the fields at the given
// indexes: each field's values map to range ids as range_partition_id does, and rows
// sort by the ids' bits interleaved from the most significant, as interleave_bits does.
func zOrderRows(rows [][]any, fields []int) {
	n := len(rows)
	if n == 0 || len(fields) == 0 {
		return
	}
	ids := make([][]uint32, len(fields)) // by field, by row
	for fi, f := range fields {
		ids[fi] = rangeIDs(rows, f)
	}
	keys := make([][]byte, n)
	for i := range keys {
		col := make([]uint32, len(fields))
		for fi := range fields {
			col[fi] = ids[fi][i]
		}
		keys[i] = interleaveBits(col)
	}
	idx := make([]int, n)
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

// rangeIDs is range_partition_id(field, maxRangeIDs) of each row: Spark's
// RangePartitioner cuts the sorted values (nulls first) at up to maxRangeIDs-1
// bounds of equal row counts, drops repeated bounds, and a value's id is the index
// of the first bound at or above it. A column with few distinct values so gets few
// ids, and the other columns of the curve the more bits. Spark draws the bounds
// from a sample; these are exact.
func rangeIDs(rows [][]any, f int) []uint32 {
	n := len(rows)
	sorted := make([]any, n)
	for i, r := range rows {
		sorted[i] = r[f]
	}
	slices.SortStableFunc(sorted, compareValues)
	ranges := min(maxRangeIDs, n)
	var bounds []any
	for i := 1; i < ranges; i++ {
		b := sorted[i*n/ranges]
		if len(bounds) > 0 && compareValues(bounds[len(bounds)-1], b) == 0 {
			continue
		}
		bounds = append(bounds, b)
	}
	ids := make([]uint32, n)
	for i, r := range rows {
		id, _ := slices.BinarySearchFunc(bounds, r[f], compareValues)
		ids[i] = uint32(id)
	}
	return ids
}
