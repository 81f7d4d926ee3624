package tableops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestBins(t *testing.T) {
	f := func(p string, size int64, dv bool) deltalog.Add {
		a := deltalog.Add{Path: p, Size: size}
		if dv {
			a.DeletionVector = &deltalog.DeletionVector{StorageType: "i"}
		}
		return a
	}
	paths := func(bs [][]deltalog.Add) [][]string {
		var out [][]string
		for _, b := range bs {
			var ps []string
			for _, a := range b {
				ps = append(ps, a.Path)
			}
			out = append(out, ps)
		}
		return out
	}
	tests := []struct {
		name  string
		files []deltalog.Add
		want  [][]string
	}{
		{"one small file alone is left", []deltalog.Add{f("a", 10, false)}, nil},
		{"one file with a DV is purged", []deltalog.Add{f("a", 10, true)}, [][]string{{"a"}}},
		{"smallest first, bins bounded", []deltalog.Add{f("c", 60, false), f("a", 30, false), f("b", 40, false), f("d", 90, false)},
			[][]string{{"a", "b"}}},
		{"two bins", []deltalog.Add{f("a", 50, false), f("b", 50, false), f("c", 30, false), f("d", 40, false), f("e", 45, false)},
			[][]string{{"c", "d"}, {"e", "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, paths(bins(tt.files, 100, func(a *deltalog.Add) bool { return a.DeletionVector != nil })))
		})
	}
}
