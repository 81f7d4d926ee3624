package tableops

import (
	"cmp"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// bins groups files, smallest first, into bins of at most target bytes. A bin of one
// file is dropped unless purge says its deletion vector is worth purging: rewriting it
// alone would compact nothing.
func bins(files []deltalog.Add, target int64, purge func(*deltalog.Add) bool) [][]deltalog.Add {
	slices.SortFunc(files, func(a, b deltalog.Add) int {
		return cmp.Or(cmp.Compare(a.Size, b.Size), strings.Compare(a.Path, b.Path))
	})
	var out [][]deltalog.Add
	var cur []deltalog.Add
	var size int64
	flush := func() {
		if len(cur) > 1 || (len(cur) == 1 && purge(&cur[0])) {
			out = append(out, cur)
		}
		cur, size = nil, 0
	}
	for _, f := range files {
		if len(cur) > 0 && size+f.Size > target {
			flush()
		}
		cur = append(cur, f)
		size += f.Size
	}
	flush()
	return out
}
