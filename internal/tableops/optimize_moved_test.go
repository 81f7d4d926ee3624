package tableops_test

import (
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

func TestOptimizeMoved(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    tableops.OptimizeOptions
		wantTos int // outputs that moves name
	}{
		{name: "copied", opts: tableops.OptimizeOptions{TargetSize: 1 << 20}, wantTos: 1},
		{name: "sorted moves none", opts: tableops.OptimizeOptions{TargetSize: 1 << 20, OrderBy: []string{"id"}}},
		{name: "z-ordered moves none", opts: tableops.OptimizeOptions{TargetSize: 1 << 20, ZOrderBy: []string{"id", "amount"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			before := f.snapshot(t, -1)
			m, err := tableops.Optimize(t.Context(), f.table, before, tc.opts)
			require.NoError(t, err)
			tos := map[string]bool{}
			for _, mv := range m.Moved {
				tos[mv.To] = true
			}
			require.Len(t, tos, tc.wantTos)
			requireMovedRows(t, f, before, f.snapshot(t, -1), m.Moved)
		})
	}
}

// requireMovedRows checks moves against the files: the rows of each From
// live when it was read (at before, less Read) are, in order, the physical
// rows Offset on of To (at after), and every input the commit removed with
// live rows has a move when any does.
func requireMovedRows(t *testing.T, f *fixture, before, after *deltalog.Snapshot, moves []tableops.Moved) {
	t.Helper()
	files := func(s *deltalog.Snapshot) map[string]*deltalog.Add {
		out := map[string]*deltalog.Add{}
		for _, a := range s.Files() {
			out[a.Path] = &a
		}
		return out
	}
	was, now := files(before), files(after)
	physical := func(s *deltalog.Snapshot, add *deltalog.Add) [][]any {
		meta := s.Metadata()
		rows, err := datafile.Read(t.Context(), f.store, add, s.Schema(), datafile.ReadOptions{
			Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns, DeletedRows: roaring64.New(),
		})
		require.NoError(t, err)
		return rows
	}
	dvs := deltalog.NewDVReader(f.store)
	for _, mv := range moves {
		from, to := was[mv.From], now[mv.To]
		require.NotNil(t, from, "moved from a file of the compacted snapshot")
		require.Nil(t, now[mv.From], "the moved file is removed")
		require.NotNil(t, to, "moved to a file the compaction added")
		read := roaring64.New()
		if mv.Read != nil {
			var err error
			read, err = dvs.Read(t.Context(), mv.Read)
			require.NoError(t, err)
		}
		var live [][]any
		for r, row := range physical(before, from) {
			if !read.Contains(uint64(r)) {
				live = append(live, row)
			}
		}
		require.EqualValues(t, len(live), mv.Live)
		out := physical(after, to)
		require.LessOrEqual(t, mv.Offset+mv.Live, int64(len(out)))
		require.Equal(t, live, out[mv.Offset:mv.Offset+mv.Live], "rows of %s in %s", mv.From, mv.To)
	}
}
