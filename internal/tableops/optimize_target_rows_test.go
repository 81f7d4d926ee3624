package tableops_test

import (
	"fmt"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// narrowTable is an unpartitioned table loaded as files files of perFile
// rows each, one commit each, as a bulk load writes them.
func narrowTable(t *testing.T, files, perFile int) (deltalog.Store, *deltalog.Table) {
	t.Helper()
	ctx := t.Context()
	store := memstore.New(memstore.Options{})
	tbl, err := deltalog.Open(ctx, store, deltalog.DisableCheckpoints())
	require.NoError(t, err)
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong}, {Name: "name", Type: deltalog.TypeString, Nullable: true},
	}}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	conf := map[string]string{deltalog.PropEnableDeletionVectors: "true"}
	proto := deltalog.MinimalProtocol(schema, conf)
	w, err := datafile.NewWriter(datafile.Options{Schema: schema, Properties: conf})
	require.NoError(t, err)
	actions := []deltalog.Action{{Protocol: &proto}, {Metadata: &deltalog.Metadata{ID: "narrow",
		Format: deltalog.Format{Provider: "parquet"}, SchemaString: ss, Configuration: conf}}}
	var snap *deltalog.Snapshot
	for i := range files {
		rows := make([][]any, perFile)
		for j := range rows {
			id := int64(i*perFile + j)
			rows[j] = []any{id, fmt.Sprint("n", id)}
		}
		adds, err := w.Write(ctx, store, rows)
		require.NoError(t, err)
		require.Len(t, adds, 1)
		actions = append(actions, deltalog.Action{Add: &adds[0]})
		op := deltalog.OpWrite
		if i == 0 {
			op = deltalog.OpCreateTable
		}
		res, err := tbl.Commit(ctx, snap, actions, deltalog.Operation{Name: op})
		require.NoError(t, err)
		snap, actions = res.Snapshot, nil
	}
	return store, tbl
}

// liveIDs reads the ids of snap's live rows.
func liveIDs(t *testing.T, store deltalog.Store, snap *deltalog.Snapshot) []int64 {
	t.Helper()
	var ids []int64
	for _, a := range snap.Files() {
		rows, err := datafile.Read(t.Context(), store, &a, snap.Schema(), datafile.ReadOptions{Properties: snap.Metadata().Configuration})
		require.NoError(t, err)
		for _, r := range rows {
			ids = append(ids, r[0].(int64))
		}
	}
	return ids
}

// numRecords is a's rows by its statistics.
func numRecords(t *testing.T, a deltalog.Add) int64 {
	t.Helper()
	st, ok, err := deltalog.ParseStatsSummary(a.Stats)
	require.NoError(t, err)
	require.True(t, ok, "%s has statistics", a.Path)
	return st.NumRecords
}

// TestOptimizeTargetRows compacts 40 files of n narrow rows, far below the
// target size in bytes: with TargetRows 10n each compacted file holds at
// most 10n rows, and those files are full: not debt, and left alone by the
// next run. MaxInputRows spreads the work over runs, each rewriting at most
// that many rows, until nothing is left to compact.
func TestOptimizeTargetRows(t *testing.T) {
	const files, n = 40, 100
	tests := []struct {
		name       string
		targetRows int64
		maxRows    int64
		runs       []int // files each run removes, then one run that removes none
		wantFiles  int
	}{
		{name: "no row bound: one file", runs: []int{40}, wantFiles: 1},
		{name: "row target: files of 10n rows", targetRows: 10 * n, runs: []int{40}, wantFiles: 4},
		{name: "rows per run: two bins a run", targetRows: 10 * n, maxRows: 25 * n, runs: []int{20, 20}, wantFiles: 4},
		{name: "rows per run below a bin: one bin a run", targetRows: 10 * n, maxRows: 5 * n, runs: []int{10, 10, 10, 10}, wantFiles: 4},
		{name: "rows per run without a row target", maxRows: 25 * n, runs: []int{40}, wantFiles: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, tbl := narrowTable(t, files, n)
			snap, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			want := liveIDs(t, store, snap)
			opts := tableops.OptimizeOptions{TargetSize: 1 << 30, TargetRows: tt.targetRows, MaxInputRows: tt.maxRows}
			require.Equal(t, files-tt.wantFiles, tableops.Debt(snap, opts), "each bin becomes a file; the bound on a run hides no debt")
			for i, removed := range append(tt.runs, 0) {
				m, err := tableops.Optimize(t.Context(), tbl, snap, opts)
				require.NoError(t, err)
				require.Equal(t, removed, m.NumRemovedFiles, "run %d", i)
				snap, err = tbl.Snapshot(t.Context())
				require.NoError(t, err)
				if removed == 0 {
					require.Zero(t, m, "run %d: nothing left to compact, nothing committed", i)
					continue
				}
				if tt.maxRows > 0 && tt.targetRows > 0 {
					require.LessOrEqual(t, int64(removed*n), max(tt.maxRows, tt.targetRows), "run %d: rows rewritten", i)
				}
			}
			require.Zero(t, tableops.Debt(snap, opts), "compacted files are not debt")
			require.Len(t, snap.Files(), tt.wantFiles)
			for _, a := range snap.Files() {
				if tt.targetRows > 0 {
					require.LessOrEqual(t, numRecords(t, a), tt.targetRows, "%s", a.Path)
				}
			}
			require.ElementsMatch(t, want, liveIDs(t, store, snap), "readers see the same rows")
		})
	}
}

// TestOptimizeFullByRows: files of TargetRows rows, however few their bytes,
// are full: no debt, nothing compacted, unless a deletion vector hides
// PurgeRatio of a file's rows, which purges that file alone.
func TestOptimizeFullByRows(t *testing.T) {
	const files, n = 4, 1000
	tests := []struct {
		name       string
		targetRows int64
		deleted    uint64 // rows of the first file a deletion vector hides
		debt       int
		removed    int
	}{
		{name: "bytes only: small files", debt: files - 1, removed: files},
		{name: "full by rows", targetRows: n},
		{name: "full by rows, more than the target", targetRows: n / 2},
		{name: "a vector below the purge ratio", targetRows: n, deleted: n / 20},
		{name: "a vector past the purge ratio: purged alone", targetRows: n, deleted: n / 5, debt: 1, removed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			store, tbl := narrowTable(t, files, n)
			snap, err := tbl.Snapshot(ctx)
			require.NoError(t, err)
			if tt.deleted > 0 {
				a := snap.Files()[0]
				bm := roaring64.New()
				bm.AddRange(0, tt.deleted)
				dvs, err := deltalog.WriteDeletionVectors(ctx, store, "", []*roaring64.Bitmap{bm})
				require.NoError(t, err)
				withDV := a
				withDV.DeletionVector = &dvs[0]
				res, err := tbl.Commit(ctx, snap, []deltalog.Action{{Remove: a.Remove(true)}, {Add: &withDV}}, deltalog.Operation{Name: deltalog.OpDelete})
				require.NoError(t, err)
				snap = res.Snapshot
			}
			want := liveIDs(t, store, snap)
			opts := tableops.OptimizeOptions{TargetSize: 1 << 30, TargetRows: tt.targetRows, PurgeRatio: 0.1}
			require.Equal(t, tt.debt, tableops.Debt(snap, opts))
			m, err := tableops.Optimize(ctx, tbl, snap, opts)
			require.NoError(t, err)
			require.Equal(t, tt.removed, m.NumRemovedFiles)
			if tt.removed == 0 {
				require.Zero(t, m, "nothing committed")
			}
			snap, err = tbl.Snapshot(ctx)
			require.NoError(t, err)
			require.ElementsMatch(t, want, liveIDs(t, store, snap), "readers see the same rows")
		})
	}
}
