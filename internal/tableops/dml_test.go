package tableops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/sqlexpr"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// results is a results-like table, as in seed 002: two non-finishers have a NULL
// position.
func results(dv, cdf bool) dmlTable {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "result_id", Type: deltalog.TypeInteger},
		{Name: "driver", Type: deltalog.TypeString, Nullable: true},
		{Name: "position", Type: deltalog.TypeInteger, Nullable: true},
		{Name: "points", Type: deltalog.TypeDouble, Nullable: true},
	}}
	var a, b [][]any
	pts := []float64{25, 18, 15, 12, 10, 8, 6, 4, 2, 1, 0, 0}
	for i := range 12 {
		r := []any{int32(i + 1), "driver" + string(rune('A'+i)), int32(i + 1), pts[i]}
		if i < 6 {
			a = append(a, r)
		} else {
			b = append(b, r)
		}
	}
	nf := [][]any{{int32(13), "driverM", nil, float64(0)}, {int32(14), "driverN", nil, float64(0)}}
	return dmlTable{schema: schema, dv: dv, cdf: cdf, files: [][][]any{a, b, nf}}
}

func TestSeedStatements(t *testing.T) {
	for _, dv := range []bool{true, false} {
		t.Run(map[bool]string{true: "dv", false: "cow"}[dv], func(t *testing.T) {
			ctx := t.Context()
			tbl, snap := results(dv, true).create(t, memstore.New(memstore.Options{}))
			m, err := tableops.Update(ctx, tbl, snap, []string{"points = 11 - position"}, "position <= 10", tableops.DMLOptions{})
			require.NoError(t, err)
			require.EqualValues(t, 10, m.NumUpdatedRows)
			require.Equal(t, 1, m.FilesPruned, "the non-finishers' file has no position <= 10")
			snap, err = tbl.Snapshot(ctx)
			require.NoError(t, err)
			m, err = tableops.Delete(ctx, tbl, snap, "position > 10", tableops.DMLOptions{})
			require.NoError(t, err)
			require.EqualValues(t, 2, m.NumDeletedRows, "NULL positions do not match position > 10")
			snap, err = tbl.Snapshot(ctx)
			require.NoError(t, err)
			require.Len(t, tableRows(t, tbl, snap), 12)
			m, err = tableops.Delete(ctx, tbl, snap, "points = 0", tableops.DMLOptions{})
			require.NoError(t, err)
			require.EqualValues(t, 2, m.NumDeletedRows)
			require.Equal(t, 1, m.NumRemovedFiles, "a file whose rows all match is removed")
			require.Zero(t, m.NumAddedFiles)
			snap, err = tbl.Snapshot(ctx)
			require.NoError(t, err)
			rows := tableRows(t, tbl, snap)
			require.Len(t, rows, 10)
			require.Contains(t, rows, "1|driverA|1|10")
			require.Contains(t, rows, "10|driverJ|10|1")
			ci, err := tbl.CommitInfo(ctx, snap.Version())
			require.NoError(t, err)
			require.Equal(t, "DELETE", ci.Operation)
			require.Equal(t, `["(points = 0)"]`, deltalog.OperationValues(ci.OperationParameters).Text("predicate"))
			require.Equal(t, "2", deltalog.OperationValues(ci.OperationMetrics).Text("numDeletedRows"))
		})
	}
}

func TestDMLDryRunAndErrors(t *testing.T) {
	ctx := t.Context()
	tbl, snap := results(true, false).create(t, memstore.New(memstore.Options{}))
	m, err := tableops.Delete(ctx, tbl, snap, "position > 3", tableops.DMLOptions{DryRun: true, SampleRows: 2})
	require.NoError(t, err)
	require.EqualValues(t, 9, m.NumDeletedRows)
	require.Equal(t, 2, m.MatchedFiles)
	require.Len(t, m.Sample, 2)
	require.EqualValues(t, -1, m.Version)
	after, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, snap.Version(), after.Version(), "a dry run commits nothing")

	m, err = tableops.Delete(ctx, tbl, snap, "position > 100", tableops.DMLOptions{})
	require.NoError(t, err)
	require.EqualValues(t, -1, m.Version, "nothing matched: nothing committed")
	require.Equal(t, 3, m.FilesPruned)

	_, err = tableops.Delete(ctx, tbl, snap, "postion > 10", tableops.DMLOptions{})
	require.ErrorIs(t, err, sqlexpr.ErrColumn)
	_, err = tableops.Update(ctx, tbl, snap, []string{"result_id = 1"}, "true", tableops.DMLOptions{Protected: map[string]string{"result_id": "key"}})
	require.ErrorIs(t, err, sqlexpr.ErrColumn)
	_, err = tableops.Update(ctx, tbl, snap, []string{"points = 1", "POINTS = 2"}, "true", tableops.DMLOptions{})
	require.ErrorIs(t, err, sqlexpr.ErrColumn)
}
