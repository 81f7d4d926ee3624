package tableops_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// zTable is an unpartitioned table of 64 files of 500 rows each with customer_id
// uniform in [0, 10000) and region_id in [0, 100), in random order: every file's
// bounds span nearly the whole range of both columns.
func zTable(t *testing.T) (*deltalog.Table, int64) {
	t.Helper()
	return zTableIn(t, memstore.New(memstore.Options{}))
}

// zTableIn is zTable in store.
func zTableIn(t *testing.T, store deltalog.Store) (*deltalog.Table, int64) {
	t.Helper()
	ctx := t.Context()
	tbl, err := deltalog.Open(ctx, store, deltalog.DisableCheckpoints())
	require.NoError(t, err)
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "customer_id", Type: deltalog.TypeLong, Nullable: true},
		{Name: "region_id", Type: deltalog.TypeLong, Nullable: true},
		{Name: "note", Type: deltalog.TypeString, Nullable: true},
	}}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	proto := deltalog.MinimalProtocol(schema, nil)
	w, err := datafile.NewWriter(datafile.Options{Schema: schema})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	actions := []deltalog.Action{{Protocol: &proto}, {Metadata: &deltalog.Metadata{ID: "bbbbbbbb-2222-3333-4444-555555555555",
		Format: deltalog.Format{Provider: "parquet"}, SchemaString: ss, Configuration: map[string]string{}}}}
	var total int64
	for range 64 {
		var rows [][]any
		for range 500 {
			c := rng.Int64N(10000)
			rows = append(rows, []any{c, rng.Int64N(100), fmt.Sprintf("order of %d", c)})
		}
		adds, err := w.Write(ctx, store, rows)
		require.NoError(t, err)
		for _, a := range adds {
			actions = append(actions, deltalog.Action{Add: &a})
			total += a.Size
		}
	}
	_, err = tbl.Commit(ctx, nil, actions, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
	return tbl, total
}

// filesRead counts, summed over point queries col = v for v in points, the files a
// reader that prunes by add.stats min/max must read.
func filesRead(t *testing.T, snap *deltalog.Snapshot, col string, points []int64) int {
	t.Helper()
	n := 0
	for _, f := range snap.Files() {
		st, ok, err := deltalog.ParseStats(f.Stats)
		require.NoError(t, err)
		require.True(t, ok)
		lo, hi := toInt(t, st.MinValues[col]), toInt(t, st.MaxValues[col])
		for _, v := range points {
			if lo <= v && v <= hi {
				n++
			}
		}
	}
	return n
}

func toInt(t *testing.T, v any) int64 {
	t.Helper()
	var n int64
	_, err := fmt.Sscan(fmt.Sprint(v), &n)
	require.NoError(t, err)
	return n
}

func TestZOrderSkipsFiles(t *testing.T) {
	points := []int64{7, 1234, 2500, 4321, 5000, 6789, 8080, 9999}
	for _, tc := range []struct {
		name    string
		zorder  []string
		atMost  int // files read per point query, on average, of 64
		another string
	}{
		{"one column", []string{"customer_id"}, 2, ""},
		{"two columns", []string{"customer_id", "region_id"}, 16, "region_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			tbl, total := zTable(t)
			snap, err := tbl.Snapshot(ctx)
			require.NoError(t, err)
			unordered := filesRead(t, snap, "customer_id", points)
			regions := []int64{3, 50, 97}
			unorderedRegion := filesRead(t, snap, "region_id", regions)
			m, err := tableops.Optimize(ctx, tbl, snap, tableops.OptimizeOptions{TargetSize: total / 64, ZOrderBy: tc.zorder})
			require.NoError(t, err)
			require.Equal(t, 64, m.NumRemovedFiles, "Z-order rewrites every file, large ones too")
			snap, err = tbl.Snapshot(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(64*500), countRows(t, snap))
			zordered := filesRead(t, snap, "customer_id", points)
			t.Logf("point queries on customer_id: %d files of %d read before, %d of %d after Z-order by %v",
				unordered, 64*len(points), zordered, snap.NumFiles()*len(points), tc.zorder)
			require.LessOrEqual(t, 4*zordered, unordered, "a Z-ordered table reads at most a quarter of the files")
			require.LessOrEqual(t, zordered, tc.atMost*len(points))
			if tc.another != "" {
				// The second column skips files too, which a sort by the first would not.
				after := filesRead(t, snap, tc.another, regions)
				t.Logf("point queries on %s: %d files read before, %d after", tc.another, unorderedRegion, after)
				require.LessOrEqual(t, 2*after, unorderedRegion, "region_id prunes too")
			}
			ci, err := tbl.CommitInfo(ctx, m.Version)
			require.NoError(t, err)
			require.Equal(t, deltalog.OpOptimize, ci.Operation)
			want, _ := json.Marshal(tc.zorder)
			require.JSONEq(t, string(want), ci.OperationParameters.Text("zOrderBy"), "recorded as Spark records it")
		})
	}
}

func countRows(t *testing.T, snap *deltalog.Snapshot) int64 {
	t.Helper()
	var n int64
	for _, f := range snap.Files() {
		st, _, err := deltalog.ParseStats(f.Stats)
		require.NoError(t, err)
		n += st.NumRecords
	}
	return n
}

func TestZOrderRefuses(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		opts tableops.OptimizeOptions
		want string
	}{
		{tableops.OptimizeOptions{TargetSize: 1 << 20, ZOrderBy: []string{"region"}}, `"region" is a partition column`},
		{tableops.OptimizeOptions{TargetSize: 1 << 20, ZOrderBy: []string{"nope"}}, `"nope" is not in the schema`},
		{tableops.OptimizeOptions{TargetSize: 1 << 20, ZOrderBy: []string{"id"}, OrderBy: []string{"id"}}, "not both"},
	} {
		_, err := tableops.Optimize(t.Context(), f.table, f.snapshot(t, -1), tc.opts)
		require.ErrorContains(t, err, tc.want)
	}
}
