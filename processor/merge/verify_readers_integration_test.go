//go:build integration

package merge

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// duckdbKeyCounts is a recipe that has DuckDB count a table's live rows and
// the rows beyond the first of each key, with SQL.
const duckdbKeyCounts = `
import sys
d = sys.modules["__main__"].DuckDB()
n, extra = d.con.execute("SELECT count(*), count(*) - count(DISTINCT order_id) FROM delta_scan('%s')").fetchone()
print(n, extra)
`

// TestVerifyTableReaders checks verify's row and duplicate counts against
// delta-rs and DuckDB reading the same tables: a clean one and a copy with
// one data file added twice.
func TestVerifyTableReaders(t *testing.T) {
	golden, _ := verifyTable(t)
	dup := copyTable(t, golden)
	_, files := liveFiles(t, dup)
	f := files[len(files)-1]
	data, err := os.ReadFile(filepath.Join(dup, f.Path))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dup, "part-copy.parquet"), data, 0o644))
	cp := f
	cp.Path = "part-copy.parquet"
	corruptCommit(t, dup, deltalog.Action{Add: &cp})

	for _, dir := range []string{golden, dup} {
		rep, err := VerifyTable(t.Context(), localStore(t, dir), VerifyOptions{MaxProblems: 1 << 20})
		require.NoError(t, err)
		dups := 0
		for _, p := range rep.Problems {
			if p.Kind == ProblemDuplicateKey {
				dups++
			}
		}
		reads := fulltier.Read(t,
			fulltier.Request{Engine: fulltier.DeltaRS, Path: dir, ReadOptions: fulltier.ReadOptions{RowsOnly: true}},
			fulltier.Request{Engine: fulltier.DuckDB, API: "recipe", Code: fmt.Sprintf(duckdbKeyCounts, dir)})
		require.Empty(t, reads[0].Err)
		require.Empty(t, reads[1].Err)
		perKey := map[string]int{}
		for _, r := range reads[0].Rows {
			perKey[fmt.Sprint(r["order_id"])]++
		}
		require.Equal(t, int64(len(reads[0].Rows)), rep.LiveRows, "delta-rs: live rows")
		require.Equal(t, len(reads[0].Rows)-len(perKey), dups, "delta-rs: rows beyond the first of their key")
		require.Equal(t, fmt.Sprintf("%d %d", rep.LiveRows, dups), strings.TrimSpace(reads[1].Rows[0]["output"].(string)), "DuckDB")
		t.Logf("%s: %s; duplicates %d", filepath.Base(dir), rep.Summary(), dups)
	}
}
