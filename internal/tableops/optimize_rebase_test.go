package tableops_test

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// markDeleted commits new deletion vectors on files of the latest version, as
// a writer's MERGE does: rows[path] are the physical rows deleted, on top of
// the file's vector.
func (f *fixture) markDeleted(t *testing.T, rows map[string][]uint64) {
	t.Helper()
	ctx := t.Context()
	snap := f.snapshot(t, -1)
	var actions []deltalog.Action
	for _, a := range snap.Files() {
		del, ok := rows[a.Path]
		if !ok {
			continue
		}
		bm := roaring64.New()
		if a.DeletionVector != nil {
			var err error
			bm, err = deltalog.ReadDeletionVector(ctx, f.store, a.DeletionVector)
			require.NoError(t, err)
		}
		bm.AddMany(del)
		dvs, err := deltalog.WriteDeletionVectors(ctx, f.store, "", []*roaring64.Bitmap{bm})
		require.NoError(t, err)
		withDV := a
		withDV.DeletionVector = &dvs[0]
		actions = append(actions, deltalog.Action{Remove: a.Remove(true)}, deltalog.Action{Add: &withDV})
	}
	require.Len(t, actions, 2*len(rows))
	_, err := f.table.Commit(ctx, snap, actions, deltalog.Operation{Name: deltalog.OpDelete})
	require.NoError(t, err)
}

// TestOptimizeRebasesPastDeletionVectors plans a compaction, lets a writer
// delete rows of its inputs before it commits, and requires the compaction
// to land anyway with exactly the writer's rows: the rows deleted meanwhile
// are marked deleted in the compacted file, not brought back.
func TestOptimizeRebasesPastDeletionVectors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		orderBy []string
		// deleted picks rows of eu's A (ids 3, 1, 2; row 2 already
		// deleted) and B (ids 5, 4) by their physical index.
		deleted func(a, b string) map[string][]uint64
		// before, if set, deletes rows before the compaction is planned.
		before   func(a, b string) map[string][]uint64
		rebases  int
		wantIDs  []int64
		giveWay  bool
		wantDVed bool
		wantRows int64 // rows written; 0 means 4
	}{
		{name: "rows of both inputs", deleted: func(a, b string) map[string][]uint64 { return map[string][]uint64{a: {0}, b: {0}} },
			rebases: 1, wantIDs: []int64{1, 4, 6}, wantDVed: true},
		{name: "every row of one input", deleted: func(a, b string) map[string][]uint64 { return map[string][]uint64{b: {0, 1}} },
			rebases: 1, wantIDs: []int64{1, 3, 6}, wantDVed: true},
		{name: "a row after rows deleted before", before: func(a, b string) map[string][]uint64 { return map[string][]uint64{a: {0}} },
			deleted: func(a, b string) map[string][]uint64 { return map[string][]uint64{a: {1}} },
			rebases: 1, wantIDs: []int64{4, 5, 6}, wantDVed: true, wantRows: 3},
		{name: "sorted rows give way", orderBy: []string{"id"},
			deleted: func(a, b string) map[string][]uint64 { return map[string][]uint64{a: {0}} }, wantIDs: []int64{1, 4, 5, 6}, giveWay: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			eu := f.files(t)["eu"]
			a, b := eu[0], eu[1]
			if a.DeletionVector == nil {
				a, b = b, a
			}
			if tc.before != nil {
				f.markDeleted(t, tc.before(a.Path, b.Path))
				a = f.files(t)["eu"][0]
				if a.Path != eu[0].Path && a.Path != eu[1].Path || a.DeletionVector == nil {
					a = f.files(t)["eu"][1]
				}
			}
			planned := f.snapshot(t, -1)
			f.markDeleted(t, tc.deleted(a.Path, b.Path))
			want := f.ids(t, -1)
			require.Equal(t, tc.wantIDs, want)

			m, err := tableops.Optimize(t.Context(), f.table, planned, tableops.OptimizeOptions{TargetSize: 1 << 20, OrderBy: tc.orderBy})
			if tc.giveWay {
				var ce *deltalog.ConflictError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, want, f.ids(t, -1))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.rebases, m.Rebases)
			require.Equal(t, tc.orderBy == nil, len(m.Moved) > 0, "unsorted rows are moved, sorted ones not")
			// The moves map the rows as read; the rows deleted since are
			// deleted in the output.
			requireMovedRows(t, f, planned, f.snapshot(t, -1), m.Moved)
			require.EqualValues(t, planned.Version()+2, m.Version)
			require.Equal(t, want, f.ids(t, -1), "the compaction holds the writer's rows, no more")
			out := f.files(t)["eu"]
			require.Len(t, out, 1)
			require.Equal(t, tc.wantDVed, out[0].DeletionVector != nil)
			st, ok, err := deltalog.ParseStats(out[0].Stats)
			require.NoError(t, err)
			require.True(t, ok)
			require.EqualValues(t, cmp.Or(tc.wantRows, 4), st.NumRecords, "the rows read, some marked deleted")
			require.NotNil(t, st.TightBounds)
			require.False(t, *st.TightBounds)
			prev := map[string]string{}
			for _, a := range f.snapshot(t, m.Version-1).Files() {
				prev[a.Path] = dvID(a.DeletionVector)
			}
			for _, act := range f.commit(t, m.Version) {
				if act.Remove != nil {
					require.False(t, act.Remove.DataChange)
					require.Equal(t, prev[act.Remove.Path], dvID(act.Remove.DeletionVector), "removes name the vectors the writer added")
				}
			}
		})
	}
}

// commitHook runs before, once, ahead of the first commit file put whose
// version is at least from: a writer that wins that version.
type commitHook struct {
	deltalog.Store
	from   int64
	before func()
}

func (h *commitHook) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	if v, ok := strings.CutSuffix(strings.TrimPrefix(p, "_delta_log/"), ".json"); ok && h.before != nil {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= h.from {
			before := h.before
			h.before = nil
			before()
		}
	}
	return h.Store.PutIfAbsent(ctx, p, data)
}

// TestOptimizeRebasesTwice has a writer delete rows of an input before the
// compaction commits and again before its rebased commit: the second rebase
// must place rows by the vector the input was read with, not by the one the
// first rebase accounted for.
func TestOptimizeRebasesTwice(t *testing.T) {
	f := newFixture(t)
	eu := f.files(t)["eu"]
	a := eu[0]
	if a.DeletionVector == nil {
		a = eu[1]
	}
	planned := f.snapshot(t, -1)
	f.markDeleted(t, map[string][]uint64{a.Path: {0}}) // id 3, v3
	hook := &commitHook{Store: f.store, from: 4, before: func() {
		f.markDeleted(t, map[string][]uint64{a.Path: {1}}) // id 1, v4
	}}
	tbl, err := deltalog.Open(t.Context(), hook, deltalog.WithClock(f.clock), deltalog.DisableCheckpoints())
	require.NoError(t, err)
	m, err := tableops.Optimize(t.Context(), tbl, planned, tableops.OptimizeOptions{TargetSize: 1 << 20})
	require.NoError(t, err)
	require.Equal(t, 2, m.Rebases)
	require.EqualValues(t, 5, m.Version)
	require.Equal(t, []int64{4, 5, 6}, f.ids(t, -1))
}

// TestOptimizeRebasesPastRemovedInputs has another commit remove inputs of a
// planned compaction, with their rows or with the live ones rewritten into a
// new file (copy-on-write), and requires the compaction to land with exactly
// that commit's rows: a removed input is not removed again, and its rows are
// marked deleted in the compacted file, neither lost nor doubled.
func TestOptimizeRebasesPastRemovedInputs(t *testing.T) {
	for _, tc := range []struct {
		name string
		// remove picks the eu files removed: a (ids 3, 1; id 2 deleted)
		// and b (ids 5, 4); rewrite, the rows written back.
		remove  func(a, b deltalog.Add) []deltalog.Add
		rewrite [][]any
		wantIDs []int64
		// dvRows is the rows the compacted file's vector hides; -1: no
		// file is committed, nothing is left to compact.
		dvRows int
	}{
		{name: "an input with its rows", remove: func(a, b deltalog.Add) []deltalog.Add { return []deltalog.Add{b} },
			wantIDs: []int64{1, 3, 6}, dvRows: 2},
		{name: "an input rewritten elsewhere", remove: func(a, b deltalog.Add) []deltalog.Add { return []deltalog.Add{a} },
			rewrite: [][]any{row(1, "eu", 1250)}, wantIDs: []int64{1, 4, 5, 6}, dvRows: 2},
		{name: "every input", remove: func(a, b deltalog.Add) []deltalog.Add { return []deltalog.Add{a, b} },
			wantIDs: []int64{6}, dvRows: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := t.Context()
			planned := f.snapshot(t, -1)
			eu := f.files(t)["eu"]
			a, b := eu[0], eu[1]
			if a.DeletionVector == nil {
				a, b = b, a
			}
			var actions []deltalog.Action
			for _, r := range tc.remove(a, b) {
				actions = append(actions, deltalog.Action{Remove: r.Remove(true)})
			}
			if tc.rewrite != nil {
				w, err := datafile.NewWriter(datafile.Options{Schema: planned.Schema(), PartitionColumns: planned.Metadata().PartitionColumns,
					Properties: planned.Metadata().Configuration})
				require.NoError(t, err)
				adds, err := w.Write(ctx, f.store, tc.rewrite)
				require.NoError(t, err)
				for i := range adds {
					actions = append(actions, deltalog.Action{Add: &adds[i]})
				}
			}
			_, err := f.table.Commit(ctx, planned, actions, deltalog.Operation{Name: deltalog.OpMerge})
			require.NoError(t, err)
			want := f.ids(t, -1)
			require.Equal(t, tc.wantIDs, want)

			m, err := tableops.Optimize(ctx, f.table, planned, tableops.OptimizeOptions{TargetSize: 1 << 20})
			require.NoError(t, err)
			require.Equal(t, want, f.ids(t, -1), "the compaction holds the other commit's rows, no more")
			if tc.dvRows < 0 {
				require.Zero(t, m, "nothing was left to compact")
				require.Equal(t, planned.Version()+1, f.snapshot(t, -1).Version())
				return
			}
			require.Equal(t, 1, m.Rebases)
			require.EqualValues(t, planned.Version()+2, m.Version)
			require.Equal(t, 2-len(tc.remove(a, b)), m.NumRemovedFiles)
			require.Len(t, m.Moved, m.NumRemovedFiles, "a removed input moves nothing; its rows still take theirs")
			requireMovedRows(t, f, planned, f.snapshot(t, -1), m.Moved)
			for _, act := range f.commit(t, m.Version) {
				if act.Remove != nil {
					for _, r := range tc.remove(a, b) {
						require.NotEqual(t, r.Path, act.Remove.Path, "a removed input is not removed again")
					}
				}
			}
			var compacted *deltalog.Add
			for _, out := range f.files(t)["eu"] {
				if st, ok, _ := deltalog.ParseStats(out.Stats); ok && st.NumRecords == 4 {
					compacted = &out
				}
			}
			require.NotNil(t, compacted, "the compacted file, of the 4 rows read")
			require.NotNil(t, compacted.DeletionVector)
			require.EqualValues(t, tc.dvRows, compacted.DeletionVector.Cardinality)
		})
	}
}

// TestOptimizeGivesWayWhenAVectorLosesRows checks that a compaction whose
// input another commit gave back deleted rows (a restore, say) gives way.
func TestOptimizeGivesWayWhenAVectorLosesRows(t *testing.T) {
	f := newFixture(t)
	planned := f.snapshot(t, -1)
	a := f.files(t)["eu"][0]
	if a.DeletionVector == nil {
		a = f.files(t)["eu"][1]
	}
	undeleted := a
	undeleted.DeletionVector = nil
	_, err := f.table.Commit(t.Context(), planned, []deltalog.Action{{Remove: a.Remove(true)}, {Add: &undeleted}},
		deltalog.Operation{Name: deltalog.OpRestore})
	require.NoError(t, err)
	want := f.ids(t, -1)
	_, err = tableops.Optimize(t.Context(), f.table, planned, tableops.OptimizeOptions{TargetSize: 1 << 20})
	var ce *deltalog.ConflictError
	require.ErrorAs(t, err, &ce)
	require.ErrorContains(t, err, "was dropped")
	require.Equal(t, want, f.ids(t, -1))
	require.EqualValues(t, 3, f.snapshot(t, -1).Version())
}

func dvID(dv *deltalog.DeletionVector) string {
	if dv == nil {
		return ""
	}
	return dv.UniqueID()
}
