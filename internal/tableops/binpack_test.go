package tableops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestBins(t *testing.T) {
	f := func(p string, size int64, dv bool) sized {
		a := deltalog.Add{Path: p, Size: size}
		if dv {
			a.DeletionVector = &deltalog.DeletionVector{StorageType: "i"}
		}
		return sized{Add: a}
	}
	r := func(p string, size, rows int64) sized {
		return sized{Add: deltalog.Add{Path: p, Size: size}, rows: rows}
	}
	paths := func(bs []bin) [][]string {
		var out [][]string
		for _, b := range bs {
			var ps []string
			for _, a := range b.files {
				ps = append(ps, a.Path)
			}
			out = append(out, ps)
		}
		return out
	}
	tests := []struct {
		name       string
		files      []sized
		targetRows int64
		want       [][]string
	}{
		{"one small file alone is left", []sized{f("a", 10, false)}, 0, nil},
		{"one file with a DV is purged", []sized{f("a", 10, true)}, 0, [][]string{{"a"}}},
		{"smallest first, bins bounded", []sized{f("c", 60, false), f("a", 30, false), f("b", 40, false), f("d", 90, false)}, 0,
			[][]string{{"a", "b"}}},
		{"two bins", []sized{f("a", 50, false), f("b", 50, false), f("c", 30, false), f("d", 40, false), f("e", 45, false)}, 0,
			[][]string{{"c", "d"}, {"e", "a"}}},
		{"rows close a bin before bytes do", []sized{r("a", 10, 400), r("b", 11, 400), r("c", 12, 400), r("d", 13, 400), r("e", 14, 400)}, 1000,
			[][]string{{"a", "b"}, {"c", "d"}}},
		{"a bin may reach the row target", []sized{r("a", 10, 500), r("b", 11, 500), r("c", 12, 500)}, 1000,
			[][]string{{"a", "b"}}},
		{"no row target: bytes only", []sized{r("a", 10, 400), r("b", 11, 400), r("c", 12, 400)}, 0,
			[][]string{{"a", "b", "c"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, paths(bins(tt.files, 100, tt.targetRows, func(a *deltalog.Add) bool { return a.DeletionVector != nil })))
		})
	}
}
