//go:build integration

package tableops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

func openLocal(t *testing.T, dir string) *deltalog.Table {
	t.Helper()
	st, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), st)
	require.NoError(t, err)
	return tbl
}

func latestOf(t *testing.T, tbl *deltalog.Table) *deltalog.Snapshot {
	t.Helper()
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	return snap
}

// TestOpsSparkOracle checks clone, alter and Z-order against Spark on copies of the
// same tables: Spark reads a deep clone of version N as the source VERSION AS OF N;
// Spark's own ALTER TABLE on a copy gives the properties and protocol ours gives, as
// DESCRIBE DETAIL shows them; Spark's OPTIMIZE ZORDER BY on a copy prunes about as
// many files as ours, counted from add.stats min/max; Spark's RENAME COLUMN on a copy
// of a column-mapped table gives the schema and physical names ours gives.
func TestOpsSparkOracle(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()

	// Clone: version N, which has a deletion vector, of a table with commits after it.
	src := filepath.Join(root, "clone-src")
	srcTbl := legacyTableIn(t, mustStore(t, src))
	_, err := tableops.Alter(ctx, srcTbl, latestOf(t, srcTbl), tableops.AlterOptions{
		Set: map[string]string{"delta.enableDeletionVectors": "true"}, UpgradeProtocol: true})
	require.NoError(t, err)
	m, err := tableops.Delete(ctx, srcTbl, latestOf(t, srcTbl), "id = 1", tableops.DMLOptions{})
	require.NoError(t, err)
	require.Equal(t, 1, m.NumDeletionVectorsAdded, "the delete leaves a deletion vector")
	cloneAt := latestOf(t, srcTbl).Version()
	_, err = tableops.Alter(ctx, srcTbl, latestOf(t, srcTbl), tableops.AlterOptions{Set: map[string]string{"owner": "later"}})
	require.NoError(t, err)
	dst := filepath.Join(root, "clone-dst")
	_, err = tableops.Clone(ctx, srcTbl, mustAt(t, srcTbl, cloneAt), openLocal(t, dst), tableops.CloneOptions{Source: src})
	require.NoError(t, err)

	// Shallow clone: ours, and Spark's SHALLOW CLONE of the same version.
	shallowOurs, shallowSpark := filepath.Join(root, "shallow-ours"), filepath.Join(root, "shallow-spark")
	_, err = tableops.Clone(ctx, srcTbl, mustAt(t, srcTbl, cloneAt), openLocal(t, shallowOurs), tableops.CloneOptions{Source: src, Shallow: true})
	require.NoError(t, err)

	// Alter: ours on one copy, Spark's statement on another.
	alterOurs, alterSpark := filepath.Join(root, "alter-ours"), filepath.Join(root, "alter-spark")
	at := legacyTableIn(t, mustStore(t, alterOurs))
	require.NoError(t, os.CopyFS(alterSpark, os.DirFS(alterOurs)))
	_, err = tableops.Alter(ctx, at, latestOf(t, at), tableops.AlterOptions{Set: map[string]string{"delta.logRetentionDuration": "7 days"}})
	require.NoError(t, err)
	_, err = tableops.Alter(ctx, at, latestOf(t, at), tableops.AlterOptions{Set: map[string]string{"delta.columnMapping.mode": "name"}, UpgradeProtocol: true})
	require.NoError(t, err)

	// Rename: ours and Spark's ALTER TABLE RENAME COLUMN on copies of the column-mapped table.
	renameOurs, renameSpark := filepath.Join(root, "rename-ours"), filepath.Join(root, "rename-spark")
	require.NoError(t, os.CopyFS(renameOurs, os.DirFS(alterOurs)))
	require.NoError(t, os.CopyFS(renameSpark, os.DirFS(alterOurs)))
	rt := openLocal(t, renameOurs)
	_, err = tableops.RenameColumn(ctx, rt, latestOf(t, rt), "price", "cost", nil)
	require.NoError(t, err)

	// Z-order: ours on one copy, Spark's OPTIMIZE ZORDER BY on another.
	zOurs, zSpark := filepath.Join(root, "z-ours"), filepath.Join(root, "z-spark")
	zt, total := zTableIn(t, mustStore(t, zOurs))
	require.NoError(t, os.CopyFS(zSpark, os.DirFS(zOurs)))
	_, err = tableops.Optimize(ctx, zt, latestOf(t, zt), tableops.OptimizeOptions{TargetSize: total / 64, ZOrderBy: []string{"customer_id", "region_id"}})
	require.NoError(t, err)

	// Load: the same CSV and Parquet snapshot loaded by ours and by Spark's INSERT.
	csvPath, pqPath := loadSnapshotFiles(t, root)
	loadOursCSV, loadSparkCSV := filepath.Join(root, "load-ours-csv"), filepath.Join(root, "load-spark-csv")
	loadOursPQ, loadSparkPQ := filepath.Join(root, "load-ours-parquet"), filepath.Join(root, "load-spark-parquet")
	for _, d := range []string{loadOursCSV, loadSparkCSV, loadOursPQ, loadSparkPQ} {
		pipelineTableIn(t, d)
	}
	pos := loadPosition(t, "0000002b:00000d98:0002")
	posHex := loadOurs(t, loadOursCSV, csvPath, pos)
	loadOurs(t, loadOursPQ, pqPath, pos)
	loadReads := func(e fulltier.Engine) []fulltier.Request {
		var out []fulltier.Request
		for _, d := range []string{loadOursCSV, loadSparkCSV, loadOursPQ, loadSparkPQ} {
			out = append(out, fulltier.Request{Engine: e, Path: d, ReadOptions: fulltier.ReadOptions{RowsOnly: true}})
		}
		return out
	}

	detail := []string{"DESCRIBE DETAIL {table}"}
	reqs := []fulltier.Request{
		{Engine: fulltier.Spark, Path: dst, ReadOptions: fulltier.ReadOptions{RowsOnly: true}},
		{Engine: fulltier.Spark, API: "sql", Path: src, Statements: []string{fmt.Sprintf("SELECT * FROM {table} VERSION AS OF %d", cloneAt)}},
		{Engine: fulltier.Spark, API: "sql", Path: alterSpark, Statements: []string{
			"ALTER TABLE {table} SET TBLPROPERTIES ('delta.logRetentionDuration' = '7 days')",
			"ALTER TABLE {table} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')",
			"DESCRIBE DETAIL {table}"}},
		{Engine: fulltier.Spark, API: "sql", Path: alterOurs, Statements: detail},
		{Engine: fulltier.Spark, Path: alterOurs, ReadOptions: fulltier.ReadOptions{RowsOnly: true}},
		{Engine: fulltier.Spark, API: "sql", Path: zSpark, Statements: []string{
			fmt.Sprintf("SET spark.databricks.delta.optimize.maxFileSize = %d", total/64),
			"OPTIMIZE {table} ZORDER BY (customer_id, region_id)", "SELECT 1"}},
		{Engine: fulltier.Spark, Path: zOurs, ReadOptions: fulltier.ReadOptions{RowsOnly: true}},
		{Engine: fulltier.Spark, Path: zSpark, ReadOptions: fulltier.ReadOptions{RowsOnly: true}},
		{Engine: fulltier.Spark, API: "sql", Path: src, Statements: []string{
			fmt.Sprintf("CREATE TABLE delta.`%s` SHALLOW CLONE {table} VERSION AS OF %d", shallowSpark, cloneAt),
			fmt.Sprintf("SELECT * FROM delta.`%s`", shallowSpark)}},
		{Engine: fulltier.Spark, Path: shallowOurs, ReadOptions: fulltier.ReadOptions{RowsOnly: true}},
		{Engine: fulltier.DeltaRS, Path: shallowOurs, ReadOptions: fulltier.ReadOptions{RowsOnly: true}},
		{Engine: fulltier.DuckDB, Path: shallowOurs, ReadOptions: fulltier.ReadOptions{RowsOnly: true}},
		{Engine: fulltier.Spark, API: "sql", Path: loadSparkCSV, Statements: sparkLoad(csvPath, posHex)},
		{Engine: fulltier.Spark, API: "sql", Path: loadSparkPQ, Statements: sparkLoad(pqPath, posHex)},
	}
	reqs = append(reqs, loadReads(fulltier.DeltaRS)...)
	reqs = append(reqs, loadReads(fulltier.DuckDB)...)
	renameAt := len(reqs)
	reqs = append(reqs,
		fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: renameSpark, Statements: []string{
			"ALTER TABLE {table} RENAME COLUMN price TO cost", "SELECT * FROM {table}"}},
		fulltier.Request{Engine: fulltier.Spark, Path: renameOurs, ReadOptions: fulltier.ReadOptions{RowsOnly: true}})
	res := fulltier.Read(t, reqs...)
	for _, r := range res {
		require.Empty(t, r.Err, "%s %s %s", r.Engine, r.API, r.Path)
	}

	t.Run("clone reads as the source at version N", func(t *testing.T) {
		require.Len(t, res[0].Rows, 1)
		require.Equal(t, res[1].Rows, res[0].Rows)
	})
	t.Run("shallow clone reads as the source at version N and as Spark's SHALLOW CLONE", func(t *testing.T) {
		for _, r := range res[8:12] {
			require.Equal(t, res[1].Rows, r.Rows, "%s %s %s", r.Engine, r.API, r.Path)
		}
		// Spark's clone names the same files by absolute URI, its deletion vector by
		// path ("p"), and we read it.
		ours, spark := shallowReader(t, shallowOurs), shallowReader(t, shallowSpark)
		require.Equal(t, sourceKeys(t, latestOf(t, spark)), sourceKeys(t, latestOf(t, ours)))
		require.Equal(t, readIDs(t, ours), readIDs(t, spark))
		info, err := spark.CommitInfo(ctx, 0)
		require.NoError(t, err)
		// Spark records a shallow clone as a CLONE of the source version; ours adds
		// isShallow, as Databricks records it.
		require.Equal(t, tableops.OpClone, info.Operation)
		require.Equal(t, fmt.Sprint(cloneAt), info.OperationParameters.Text("sourceVersion"), "%v", info.OperationParameters.Texts())
		oursInfo, err := ours.CommitInfo(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, tableops.OpClone, oursInfo.Operation)
		require.Equal(t, "true", oursInfo.OperationParameters.Text("isShallow"))
	})
	t.Run("load gives the table Spark's INSERT of the same file gives", func(t *testing.T) {
		require.Equal(t, "200", fmt.Sprint(res[12].Rows[0]["n"]))
		require.Equal(t, "200", fmt.Sprint(res[13].Rows[0]["n"]))
		for _, at := range []int{14, 18} { // delta-rs, DuckDB
			oursCSV, sparkCSV, oursPQ, sparkPQ := res[at], res[at+1], res[at+2], res[at+3]
			require.Len(t, oursCSV.Rows, 200, oursCSV.Engine)
			require.Equal(t, sparkCSV.Schema, oursCSV.Schema, "%s: CSV", oursCSV.Engine)
			require.Equal(t, sparkCSV.Rows, oursCSV.Rows, "%s: CSV", oursCSV.Engine)
			require.Equal(t, sparkPQ.Schema, oursPQ.Schema, "%s: Parquet", oursPQ.Engine)
			require.Equal(t, sparkPQ.Rows, oursPQ.Rows, "%s: Parquet", oursPQ.Engine)
			require.Equal(t, oursCSV.Rows, oursPQ.Rows, "%s: the CSV and the Parquet file hold the same rows", oursPQ.Engine)
		}
	})
	t.Run("alter gives what Spark's ALTER TABLE gives", func(t *testing.T) {
		spark, ours := res[2].Rows[0], res[3].Rows[0]
		t.Logf("Spark: properties %v, protocol %v/%v; ours: properties %v, protocol %v/%v",
			spark["properties"], spark["minReaderVersion"], spark["minWriterVersion"], ours["properties"], ours["minReaderVersion"], ours["minWriterVersion"])
		for _, k := range []string{"properties", "minReaderVersion", "minWriterVersion"} {
			require.Equal(t, spark[k], ours[k], k)
		}
		require.Len(t, res[4].Rows, 2, "Spark reads the column-mapped table")
	})
	t.Run("rename gives what Spark's RENAME COLUMN gives", func(t *testing.T) {
		// The same logical schema and physical names, read both ways.
		mapped := func(tbl *deltalog.Table) []string {
			var out []string
			for _, f := range latestOf(t, tbl).Schema().Fields {
				out = append(out, fmt.Sprintf("%s %v id=%v physical=%v", f.Name, f.Type,
					f.Metadata[deltalog.MetaColumnMappingID], f.Metadata[deltalog.MetaColumnMappingPhysicalName]))
			}
			return out
		}
		ours, spark := openLocal(t, renameOurs), openLocal(t, renameSpark)
		t.Logf("ours: %v; Spark's: %v", mapped(ours), mapped(spark))
		require.Equal(t, mapped(spark), mapped(ours))
		require.Contains(t, mapped(ours)[1], "cost string")
		require.NotContains(t, mapped(ours)[1], "physical=cost", "the physical name stays")
		byOurs, bySpark := res[renameAt+1], res[renameAt]
		require.Len(t, byOurs.Rows, 2, "Spark reads ours")
		require.ElementsMatch(t, bySpark.Rows, byOurs.Rows, "Spark reads ours as it reads its own")
		require.Contains(t, byOurs.Rows[0], "cost")
		require.Equal(t, readIDs(t, ours), readIDs(t, spark), "we read Spark's as we read ours")
		info, err := spark.CommitInfo(ctx, latestOf(t, spark).Version())
		require.NoError(t, err)
		oursInfo, err := ours.CommitInfo(ctx, latestOf(t, ours).Version())
		require.NoError(t, err)
		require.Equal(t, info.Operation, oursInfo.Operation)
	})
	t.Run("Z-order skips files as Spark's does", func(t *testing.T) {
		require.Equal(t, res[6].Rows, res[7].Rows, "the same rows")
		points := []int64{7, 1234, 2500, 4321, 5000, 6789, 8080, 9999}
		ours, spark := latestOf(t, zt), latestOf(t, openLocal(t, zSpark))
		o, s := filesRead(t, ours, "customer_id", points), filesRead(t, spark, "customer_id", points)
		t.Logf("point queries on customer_id read %d files of %d (ours), %d of %d (Spark's ZORDER)",
			o, ours.NumFiles()*len(points), s, spark.NumFiles()*len(points))
		require.LessOrEqual(t, o*spark.NumFiles(), 2*s*ours.NumFiles(), "ours prunes at least half as well as Spark's, per file")
	})
}

func mustStore(t *testing.T, dir string) deltalog.Store {
	t.Helper()
	st, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	return st
}

func mustAt(t *testing.T, tbl *deltalog.Table, v int64) *deltalog.Snapshot {
	t.Helper()
	snap, err := tbl.SnapshotAt(t.Context(), v)
	require.NoError(t, err)
	return snap
}

// shallowReader opens a shallow clone to read, its absolute file URIs resolved on the
// local file system.
func shallowReader(t *testing.T, dir string) *deltalog.Table {
	t.Helper()
	open := func(_ context.Context, root string) (deltalog.Store, error) {
		if root != "/" {
			return nil, fmt.Errorf("not a local root: %s", root)
		}
		return localstore.New(localstore.Options{Dir: "/"})
	}
	tbl, err := deltalog.Open(t.Context(), mustStore(t, dir), deltalog.ResolveAbsolutePaths(open))
	require.NoError(t, err)
	return tbl
}

// sourceKeys lists each live file of a shallow clone as the local path of its data
// file and of its deletion vector file, if any.
func sourceKeys(t *testing.T, snap *deltalog.Snapshot) []string {
	t.Helper()
	var out []string
	for _, f := range snap.Files() {
		_, key, err := deltalog.SplitAbsoluteURI(f.Path)
		require.NoError(t, err, f.Path)
		if dv := f.DeletionVector; dv != nil {
			require.Equal(t, deltalog.DVStoragePath, dv.StorageType, f.Path)
			_, dvKey, err := deltalog.SplitAbsoluteURI(dv.PathOrInlineDV)
			require.NoError(t, err, dv.PathOrInlineDV)
			key += " dv " + dvKey
		}
		out = append(out, key)
	}
	slices.Sort(out)
	return out
}

// readIDs reads the live rows of a table's latest version, sorted by their JSON.
func readIDs(t *testing.T, tbl *deltalog.Table) []string {
	t.Helper()
	snap := latestOf(t, tbl)
	var out []string
	for _, f := range snap.Files() {
		rows, err := datafile.Read(t.Context(), tbl.Store(), &f, snap.Schema(), datafile.ReadOptions{Properties: snap.Metadata().Configuration})
		require.NoError(t, err)
		for _, r := range rows {
			out = append(out, fmt.Sprint(r...))
		}
	}
	slices.Sort(out)
	return out
}
