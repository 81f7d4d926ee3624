//go:build integration

package tableops_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// duckdbReconcile has DuckDB count missing, extra and different rows by id
// with SQL, the file read with the table's column types.
const duckdbReconcile = `
import sys
d = sys.modules["__main__"].DuckDB()
d.con.execute("CREATE VIEW t AS SELECT * FROM delta_scan('%s')")
d.con.execute("CREATE VIEW f AS SELECT * FROM %s")
print(*d.con.execute("""SELECT
  (SELECT count(*) FROM f ANTI JOIN t USING (id)),
  (SELECT count(*) FROM t ANTI JOIN f USING (id)),
  (SELECT count(*) FROM t JOIN f USING (id)
   WHERE t.name IS DISTINCT FROM f.name OR t.amount IS DISTINCT FROM f.amount OR t.ts IS DISTINCT FROM f.ts)""").fetchone())
`

// deltarsReconcile has delta-rs read the table (QueryBuilder, which applies deletion
// vectors) and pyarrow the file, with the table's column types, and counts missing,
// extra and different rows by id in Python.
const deltarsReconcile = `
import deltalake
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
def rows(data):
    data = data.set_column(3, "ts", data.column("ts").cast(pa.timestamp("us")).cast(pa.int64()))
    return {r["id"]: (r["name"], r["amount"], r["ts"]) for r in data.select(["id", "name", "amount", "ts"]).to_pylist()}
qb = deltalake.QueryBuilder().register("t", deltalake.DeltaTable(%q))
t = rows(pa.table(qb.execute("SELECT id, name, amount, ts FROM t")))
path = %q
if path.endswith(".csv"):
    f = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(strings_can_be_null=True, column_types={
        "id": pa.int64(), "name": pa.string(), "amount": pa.decimal128(12, 2), "ts": pa.timestamp("us")}))
else:
    f = pq.read_table(path)
f = rows(f)
print(len(f.keys() - t.keys()), len(t.keys() - f.keys()), sum(1 for k in t.keys() & f.keys() if t[k] != f[k]))
`

// TestReconcileDuckDB checks Reconcile's counts against DuckDB's and delta-rs's on a
// table with a deletion vector and CSV and Parquet files of expected rows.
func TestReconcileDuckDB(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	store, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	tbl, err := deltalog.Open(ctx, store)
	require.NoError(t, err)
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong}, {Name: "name", Type: deltalog.TypeString, Nullable: true},
		{Name: "amount", Type: deltalog.DecimalType{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "ts", Type: deltalog.TypeTimestamp, Nullable: true},
	}}
	conf := map[string]string{deltalog.PropEnableDeletionVectors: "true"}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	w, err := datafile.NewWriter(datafile.Options{Schema: schema, Properties: conf})
	require.NoError(t, err)
	const n = 3000
	var rows, want [][]any
	for i := range int64(n) {
		r := []any{i, fmt.Sprintf("n%d", i), decimal128.FromInt64(i * 13), 1_700_000_000_000_000 + i*1_000_001}
		rows = append(rows, r)
		switch {
		case i%100 == 1: // extra
		case i%100 == 2:
			want = append(want, []any{i, fmt.Sprintf("n%d", i), decimal128.FromInt64(i*13 + 1), r[3]})
		case i%100 == 3:
			want = append(want, []any{i, nil, r[2], r[3]})
		case i%100 == 4:
			want = append(want, []any{i, r[1], r[2], r[3].(int64) + 1})
		default:
			want = append(want, r)
		}
	}
	for i := int64(n); i < n+7; i++ { // missing, and row 5 deleted below
		want = append(want, []any{i, "new", decimal128.FromInt64(1), nil})
	}
	adds, err := w.Write(ctx, store, rows)
	require.NoError(t, err)
	proto := deltalog.MinimalProtocol(schema, conf)
	actions := []deltalog.Action{{Protocol: &proto},
		{Metadata: &deltalog.Metadata{ID: "x", Format: deltalog.Format{Provider: "parquet"}, SchemaString: ss, Configuration: conf}}}
	for i := range adds {
		actions = append(actions, deltalog.Action{Add: &adds[i]})
	}
	_, err = tbl.Commit(ctx, nil, actions, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	dvs, err := deltalog.WriteDeletionVectors(ctx, store, "", []*roaring64.Bitmap{roaring64.BitmapOf(5)})
	require.NoError(t, err)
	withDV := adds[0]
	withDV.DeletionVector = &dvs[0]
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{{Remove: adds[0].Remove(true)}, {Add: &withDV}}, deltalog.Operation{Name: deltalog.OpDelete})
	require.NoError(t, err)
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)

	var csv strings.Builder
	csv.WriteString("id,name,amount,ts\n")
	for _, r := range want {
		name, _ := r[1].(string)
		ts := ""
		if us, ok := r[3].(int64); ok {
			ts = deltalogTimestamp(us)
		}
		fmt.Fprintf(&csv, "%d,%s,%s,%s\n", r[0], name, r[2].(decimal128.Num).String(2), ts)
	}
	csvPath := filepath.Join(t.TempDir(), "expected.csv")
	require.NoError(t, os.WriteFile(csvPath, []byte(csv.String()), 0o644))
	pqDir := t.TempDir()
	pqStore, err := localstore.New(localstore.Options{Dir: pqDir})
	require.NoError(t, err)
	pw, err := datafile.NewWriter(datafile.Options{Schema: schema})
	require.NoError(t, err)
	pqAdds, err := pw.Write(ctx, pqStore, want)
	require.NoError(t, err)
	pqPath := filepath.Join(pqDir, pqAdds[0].Path)

	for _, tc := range []struct{ file, duck string }{
		{csvPath, fmt.Sprintf("read_csv('%s', header=true, columns={'id': 'BIGINT', 'name': 'VARCHAR', 'amount': 'DECIMAL(12,2)', 'ts': 'TIMESTAMPTZ'})", csvPath)},
		{pqPath, fmt.Sprintf("read_parquet('%s')", pqPath)},
	} {
		res, err := tableops.Reconcile(ctx, store, snap, tableops.ReconcileOptions{Against: tc.file, Key: []string{"id"}, MemoryBytes: 32 << 10})
		require.NoError(t, err)
		out := fulltier.Read(t, fulltier.Request{Engine: fulltier.DuckDB, API: "recipe", Code: fmt.Sprintf(duckdbReconcile, dir, tc.duck)})[0]
		require.Empty(t, out.Err)
		got := fmt.Sprintf("%d %d %d", res.Missing, res.Extra, res.Different)
		require.Equal(t, strings.TrimSpace(out.Rows[0]["output"].(string)), got, "%s: missing, extra, different (DuckDB)", filepath.Ext(tc.file))
		out = fulltier.Read(t, fulltier.Request{Engine: fulltier.DeltaRS, API: "recipe", Code: fmt.Sprintf(deltarsReconcile, dir, tc.file)})[0]
		require.Empty(t, out.Err)
		require.Equal(t, strings.TrimSpace(out.Rows[0]["output"].(string)), got, "%s: missing, extra, different (delta-rs)", filepath.Ext(tc.file))
		require.Equal(t, "8 30 90", got) // 7 new + id 5 deleted; every 100th from 1; 2, 3 and 4 of every 100
		t.Logf("%s: %s in %d partitions", filepath.Ext(tc.file), got, res.Partitions)
	}
}

func deltalogTimestamp(us int64) string {
	return time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05.000000")
}
