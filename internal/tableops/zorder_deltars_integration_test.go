//go:build integration

package tableops_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// deltarsFilesRead has delta-rs (DataFusion through QueryBuilder) run each point
// query on each table under EXPLAIN ANALYZE and prints, per table, the files its
// parquet scan opened (the files_opened metric, summed over the query's scans;
// a query whose files were all pruned from the log plans an empty scan, 0), then
// the rows the queries returned.
const deltarsFilesRead = `
import re
import deltalake
import pyarrow as pa
for path in %s:
    qb = deltalake.QueryBuilder().register("t", deltalake.DeltaTable(path))
    files = rows = 0
    for v in %s:
        plan = "\n".join(pa.table(qb.execute(
            f"EXPLAIN ANALYZE SELECT * FROM t WHERE %s = {v}")).column("plan").to_pylist())
        opened = re.findall(r"\bfiles_opened=(\d+)", plan)
        if not opened and "EmptyExec" not in plan:
            raise RuntimeError("no files_opened metric in the plan:\n" + plan)
        files += sum(int(n) for n in opened)
        rows += pa.table(qb.execute(f"SELECT count(*) AS n FROM t WHERE %s = {v}")).column("n")[0].as_py()
    print(files, rows)
`

// TestZOrderDeltaRS counts the files delta-rs reads for point queries on a table
// before and after ours Z-orders it: at most a quarter after, and the same count
// TestZOrderSkipsFiles derives from add.stats min/max, with the same rows.
func TestZOrderDeltaRS(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	points := []int64{7, 1234, 2500, 4321, 5000, 6789, 8080, 9999}
	pointList := strings.Join(strings.Fields(strings.Trim(fmt.Sprint(points), "[]")), ", ")

	unordered := filepath.Join(root, "unordered")
	ut, total := zTableIn(t, mustStore(t, unordered))
	one, two := filepath.Join(root, "zorder-customer"), filepath.Join(root, "zorder-customer-region")
	require.NoError(t, os.CopyFS(one, os.DirFS(unordered)))
	require.NoError(t, os.CopyFS(two, os.DirFS(unordered)))
	byStats := map[string]int{unordered: filesRead(t, latestOf(t, ut), "customer_id", points)}
	for dir, cols := range map[string][]string{one: {"customer_id"}, two: {"customer_id", "region_id"}} {
		zt := openLocal(t, dir)
		_, err := tableops.Optimize(ctx, zt, latestOf(t, zt), tableops.OptimizeOptions{TargetSize: total / 64, ZOrderBy: cols})
		require.NoError(t, err)
		byStats[dir] = filesRead(t, latestOf(t, zt), "customer_id", points)
	}

	dirs := []string{unordered, one, two}
	code := fmt.Sprintf(deltarsFilesRead, pyList(dirs), "["+pointList+"]", "customer_id", "customer_id")
	out := fulltier.Read(t, fulltier.Request{Engine: fulltier.DeltaRS, API: "recipe", Code: code})[0]
	require.Empty(t, out.Err)
	lines := strings.Split(strings.TrimSpace(out.Rows[0]["output"].(string)), "\n")
	require.Len(t, lines, len(dirs), out.Rows[0]["output"])
	files, rows := map[string]int{}, map[string]int{}
	for i, d := range dirs {
		var f, r int
		_, err := fmt.Sscan(lines[i], &f, &r)
		require.NoError(t, err, lines[i])
		files[d], rows[d] = f, r
		t.Logf("%s: delta-rs read %d files for %d point queries on customer_id (%d by add.stats), %d rows",
			filepath.Base(d), f, len(points), byStats[d], r)
	}
	require.Positive(t, rows[unordered], "the points are in the table")
	for _, d := range []string{one, two} {
		require.Equal(t, rows[unordered], rows[d], "%s: the same rows", filepath.Base(d))
		require.LessOrEqual(t, 4*files[d], files[unordered], "%s: a Z-ordered table reads at most a quarter of the files", filepath.Base(d))
	}
	for _, d := range dirs {
		require.Equal(t, byStats[d], files[d], "%s: delta-rs reads the files add.stats say it must", filepath.Base(d))
	}
}

// pyList writes strings as a Python list literal.
func pyList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
