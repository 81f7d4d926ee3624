package tableops_test

import (
	"bytes"
	"io"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

func TestOptimize(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	before := f.files(t)
	a, b, c := before["eu"][0], before["eu"][1], before["us"][0]
	if a.DeletionVector == nil {
		a, b = b, a
	}
	rowsBefore := f.rows(t, -1)

	m, err := tableops.Optimize(ctx, f.table, f.snapshot(t, -1), tableops.OptimizeOptions{TargetSize: 1 << 20, OrderBy: []string{"ID"}})
	require.NoError(t, err)

	after := f.files(t)
	require.Equal(t, []deltalog.Add{c}, after["us"], "a lone small file without a deletion vector is left alone")
	require.Len(t, after["eu"], 1, "A (with its DV) and B are compacted into one file")
	added := after["eu"][0]
	require.Nil(t, added.DeletionVector)
	require.Equal(t, tableops.OptimizeMetrics{
		Version: 3, NumAddedFiles: 1, NumRemovedFiles: 2,
		NumAddedBytes: added.Size, NumRemovedBytes: a.Size + b.Size, NumDeletionVectorsRemoved: 1,
		MinFileSize: added.Size, P25FileSize: added.Size, P50FileSize: added.Size, P75FileSize: added.Size, MaxFileSize: added.Size,
	}, m)
	require.ElementsMatch(t, rowsBefore, f.rows(t, -1), "readers see the same rows")
	var ids []int64
	for _, r := range f.rows(t, -1)[:4] {
		ids = append(ids, r[0].(int64))
	}
	require.Equal(t, []int64{1, 3, 4, 5}, ids, "rows are sorted by the order-by column")
	require.Equal(t, []int64{1, 2, 3}, f.ids(t, 0), "time travel still reads")
	v, _ := f.snapshot(t, -1).TxnVersion("app-0")
	require.EqualValues(t, 30, v, "optimize leaves txns alone")

	ci := f.commitInfo(t, 3)
	require.Equal(t, deltalog.OpOptimize, ci.Operation)
	require.Equal(t, map[string]string{"predicate": "[]", "zOrderBy": `["ID"]`}, ci.OperationParameters.Texts())
	size := strconv.FormatInt(added.Size, 10)
	require.Equal(t, map[string]string{
		"numAddedFiles": "1", "numRemovedFiles": "2",
		"numAddedBytes": size, "numRemovedBytes": strconv.FormatInt(a.Size+b.Size, 10),
		"minFileSize": size, "p25FileSize": size, "p50FileSize": size, "p75FileSize": size, "maxFileSize": size,
		"numDeletionVectorsRemoved": "1",
	}, ci.OperationMetrics.Texts(), "Spark's names and values")
	for _, act := range f.commit(t, 3) {
		switch {
		case act.Add != nil:
			require.False(t, act.Add.DataChange)
		case act.Remove != nil:
			require.False(t, act.Remove.DataChange)
			require.NotNil(t, act.Remove.DeletionTimestamp)
		}
	}

	m, err = tableops.Optimize(ctx, f.table, f.snapshot(t, -1), tableops.OptimizeOptions{TargetSize: 1 << 20})
	require.NoError(t, err)
	require.Zero(t, m, "nothing left to compact")
	require.EqualValues(t, 3, f.snapshot(t, -1).Version(), "and nothing committed")
}

func TestOptimizeWithoutOrder(t *testing.T) {
	f := newFixture(t)
	_, err := tableops.Optimize(t.Context(), f.table, f.snapshot(t, -1), tableops.OptimizeOptions{TargetSize: 1 << 20})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"predicate": "[]", "zOrderBy": "[]"}, f.commitInfo(t, 3).OperationParameters.Texts())
}

func TestOptimizeRefuses(t *testing.T) {
	tests := []struct {
		name    string
		opts    tableops.OptimizeOptions
		wantErr string
	}{
		{"no target size", tableops.OptimizeOptions{}, "target size 0 is not positive"},
		{"unknown order-by column", tableops.OptimizeOptions{TargetSize: 1 << 20, OrderBy: []string{"nope"}}, `order-by column "nope" is not in the schema`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			_, err := tableops.Optimize(t.Context(), f.table, f.snapshot(t, -1), tc.opts)
			require.ErrorContains(t, err, tc.wantErr)
			require.EqualValues(t, 2, f.snapshot(t, -1).Version(), "nothing committed")
		})
	}
}

// TestDebt checks what automatic maintenance compacts: the fixture's A has a
// deletion vector hiding 1 of its 3 rows, B is small beside it, and C is
// alone in its partition.
func TestDebt(t *testing.T) {
	f := newFixture(t)
	snap := f.snapshot(t, -1)
	tests := []struct {
		name string
		opts tableops.OptimizeOptions
		want int
	}{
		{"small files and the vector", tableops.OptimizeOptions{TargetSize: 1 << 20}, 2},
		{"a purge ratio does not hold back small files", tableops.OptimizeOptions{TargetSize: 1 << 20, PurgeRatio: 0.9}, 2},
		{"large files: any vector is purged by default", tableops.OptimizeOptions{TargetSize: 1}, 1},
		{"large files: a third deleted reaches 0.3", tableops.OptimizeOptions{TargetSize: 1, PurgeRatio: 0.3}, 1},
		{"large files: but not 0.5", tableops.OptimizeOptions{TargetSize: 1, PurgeRatio: 0.5}, 0},
		{"no target, no debt", tableops.OptimizeOptions{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tableops.Debt(snap, tt.opts))
		})
	}
	m, err := tableops.Optimize(t.Context(), f.table, snap, tableops.OptimizeOptions{TargetSize: 1, PurgeRatio: 0.5})
	require.NoError(t, err)
	require.Zero(t, m, "a vector below the purge ratio leaves a large file alone")
	m, err = tableops.Optimize(t.Context(), f.table, snap, tableops.OptimizeOptions{TargetSize: 1, PurgeRatio: 0.3})
	require.NoError(t, err)
	require.Equal(t, 1, m.NumRemovedFiles)
	require.Equal(t, 1, m.NumDeletionVectorsRemoved)
}

// TestOptimizeMaxInputBytes stops taking bins once a run has rewritten
// MaxInputBytes: with a second small file in us, both partitions have a
// bin; a bound of one byte takes eu's only, no bound takes both.
func TestOptimizeMaxInputBytes(t *testing.T) {
	for _, tt := range []struct {
		max     int64
		removed int
	}{{1, 2}, {0, 4}} {
		f := newFixture(t)
		snap := f.snapshot(t, -1)
		w, err := datafile.NewWriter(datafile.Options{Schema: snap.Schema(), PartitionColumns: []string{"region"},
			Properties: snap.Metadata().Configuration})
		require.NoError(t, err)
		adds, err := w.Write(t.Context(), f.store, [][]any{row(7, "us", 700)})
		require.NoError(t, err)
		_, err = f.table.Commit(t.Context(), snap, []deltalog.Action{{Add: &adds[0]}}, deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
		us := f.files(t)["us"]
		require.Len(t, us, 2)

		m, err := tableops.Optimize(t.Context(), f.table, f.snapshot(t, -1), tableops.OptimizeOptions{TargetSize: 1 << 20, MaxInputBytes: tt.max})
		require.NoError(t, err)
		require.Equal(t, tt.removed, m.NumRemovedFiles, "max %d", tt.max)
		if tt.max > 0 {
			require.Equal(t, us, f.files(t)["us"], "us waits for the next run")
		}
	}
}

// TestOptimizeDeltaEncodings: with DeltaEncodings the compacted file's
// string and long columns are DELTA_BYTE_ARRAY and DELTA_BINARY_PACKED (a
// change log keeps its encodings through compaction), and readers see the
// same rows; without it, neither.
func TestOptimizeDeltaEncodings(t *testing.T) {
	for _, delta := range []bool{false, true} {
		f := newFixture(t)
		rowsBefore := f.rows(t, -1)
		_, err := tableops.Optimize(t.Context(), f.table, f.snapshot(t, -1), tableops.OptimizeOptions{TargetSize: 1 << 20, DeltaEncodings: delta})
		require.NoError(t, err)
		require.ElementsMatch(t, rowsBefore, f.rows(t, -1))
		added := f.files(t)["eu"]
		require.Len(t, added, 1)
		key, err := url.PathUnescape(added[0].Path)
		require.NoError(t, err)
		rc, err := f.store.Get(t.Context(), key)
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, rc.Close())
		require.NoError(t, err)
		pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		enc := map[string][]format.Encoding{}
		for _, c := range pf.Metadata().RowGroups[0].Columns {
			enc[c.MetaData.PathInSchema[0]] = c.MetaData.Encoding
		}
		require.Equal(t, delta, slices.Contains(enc["id"], format.DeltaBinaryPacked), "id: %v", enc["id"])
		require.NotContains(t, enc["amount"], format.DeltaBinaryPacked, "decimals keep their encoding")
	}
}
