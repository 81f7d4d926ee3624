package tableops

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// sortRows sorts datafile rows by the fields at the given indexes, stably, so rows
// equal on them keep their order; no indexes leave the rows as they are.
func sortRows(rows [][]any, fields []int) {
	if len(fields) == 0 {
		return
	}
	slices.SortStableFunc(rows, func(a, b []any) int {
		for _, i := range fields {
			if c := compareValues(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	})
}

// compareValues orders datafile values of one column; nulls first. Values of one column
// share a Go type; a mismatch (which datafile.Read never produces) compares equal rather
// than panicking.
func compareValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch x := a.(type) {
	case int8:
		return cmpAs(x, b)
	case int16:
		return cmpAs(x, b)
	case int32:
		return cmpAs(x, b)
	case int64:
		return cmpAs(x, b)
	case float32:
		return cmpAs(x, b)
	case float64:
		return cmpAs(x, b)
	case string:
		return cmpAs(x, b)
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y)
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmp.Compare(boolInt(x), boolInt(y))
		}
	case decimal128.Num:
		if y, ok := b.(decimal128.Num); ok {
			return x.Cmp(y)
		}
	}
	return 0
}

func cmpAs[T cmp.Ordered](x T, b any) int {
	if y, ok := b.(T); ok {
		return cmp.Compare(x, y)
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
