package tableops

import (
	"cmp"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// sized is a file with the rows its statistics count (0 when it has none).
type sized struct {
	deltalog.Add
	rows int64
}

// bin is files compacted into about one file, and the rows they hold.
type bin struct {
	files []deltalog.Add
	rows  int64
}

// fileRows is the rows f's statistics count, ok false when it has none:
// such a file is weighed by its bytes only.
func fileRows(f *deltalog.Add) (int64, bool) {
	st, ok, err := deltalog.ParseStatsSummary(f.Stats)
	if err != nil || !ok {
		return 0, false
	}
	return st.NumRecords, true
}

// bins groups files, smallest first, into bins of at most target bytes and, when
// targetRows is positive, at most targetRows rows. A bin of one file is dropped
// unless purge says its deletion vector is worth purging: rewriting it alone would
// compact nothing.
func bins(files []sized, target, targetRows int64, purge func(*deltalog.Add) bool) []bin {
	slices.SortFunc(files, func(a, b sized) int {
		return cmp.Or(cmp.Compare(a.Size, b.Size), strings.Compare(a.Path, b.Path))
	})
	var out []bin
	var cur bin
	var size int64
	flush := func() {
		if len(cur.files) > 1 || (len(cur.files) == 1 && purge(&cur.files[0])) {
			out = append(out, cur)
		}
		cur, size = bin{}, 0
	}
	for _, f := range files {
		if len(cur.files) > 0 && (size+f.Size > target || targetRows > 0 && cur.rows+f.rows > targetRows) {
			flush()
		}
		cur.files = append(cur.files, f.Add)
		cur.rows += f.rows
		size += f.Size
	}
	flush()
	return out
}
