//go:build integration

package tableops_test

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// loadColumns are the source columns of the load oracle's table.
func loadColumns() []deltalog.StructField {
	return []deltalog.StructField{
		{Name: "order_id", Type: deltalog.TypeInteger, Nullable: false},
		{Name: "customer_id", Type: deltalog.TypeString, Nullable: true},
		{Name: "amount", Type: deltalog.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "order_date", Type: deltalog.TypeDate, Nullable: true},
		{Name: "updated_at", Type: deltalog.TypeTimestamp, Nullable: true},
	}
}

// pipelineTableIn creates, in dir, an empty table laid out as the pipeline creates
// one (source columns, then the metadata columns, keyed by order_id).
func pipelineTableIn(t *testing.T, dir string) {
	t.Helper()
	schema := &deltalog.StructType{Fields: append(loadColumns(), cdctable.MetaFields(false)...)}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	conf := map[string]string{cdctable.PropKeyColumns: `["order_id"]`}
	proto := deltalog.MinimalProtocol(schema, conf)
	created := time.Now().UnixMilli()
	_, err = openLocal(t, dir).Commit(t.Context(), nil, []deltalog.Action{{Protocol: &proto}, {Metadata: &deltalog.Metadata{
		ID: "load-oracle", Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}}, SchemaString: ss,
		PartitionColumns: []string{}, CreatedTime: &created, Configuration: conf}}}, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
}

// loadSnapshotFiles writes the same 200 rows as a CSV (one customer_id empty, read
// as NULL) and as a Parquet file of the source columns, and returns their paths.
func loadSnapshotFiles(t *testing.T, dir string) (csvPath, pqPath string) {
	t.Helper()
	var csv strings.Builder
	csv.WriteString("order_id,customer_id,amount,order_date,updated_at\n")
	var rows [][]any
	for id := 1; id <= 200; id++ {
		cust := fmt.Sprintf("C%03d", id%40)
		if id == 7 {
			cust = ""
		}
		day := time.Date(2024, 2, 1+id%28, 0, 0, 0, 0, time.UTC)
		at := time.Date(2024, 2, 3, 4, 5, 6, 789000000, time.UTC).Add(time.Duration(id) * time.Minute)
		fmt.Fprintf(&csv, "%d,%s,%d.%02d,%s,%s\n", id, cust, id, id%100, day.Format(time.DateOnly), at.Format("2006-01-02 15:04:05.000"))
		var c any = cust
		if cust == "" {
			c = nil
		}
		amount := decimal128.FromInt64(int64(id*100 + id%100))
		rows = append(rows, []any{int32(id), c, amount, int32(day.Unix() / 86400), at.UnixMicro()})
	}
	csvPath = filepath.Join(dir, "orders.csv")
	require.NoError(t, os.WriteFile(csvPath, []byte(csv.String()), 0o644))

	pqDir := filepath.Join(dir, "orders-parquet")
	w, err := datafile.NewWriter(datafile.Options{Schema: &deltalog.StructType{Fields: loadColumns()}})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), mustStore(t, pqDir), rows)
	require.NoError(t, err)
	require.Len(t, adds, 1)
	name, err := url.PathUnescape(adds[0].Path)
	require.NoError(t, err)
	pqPath = filepath.Join(dir, "orders.parquet")
	require.NoError(t, os.Rename(filepath.Join(pqDir, name), pqPath))
	return csvPath, pqPath
}

// loadOurs loads file into the pipeline table in dir as `cdc2delta load` does, at
// position pos, and returns the position's hex (the rows' _cdc_position).
func loadOurs(t *testing.T, dir, file string, pos codecs.Position) string {
	t.Helper()
	ctx := t.Context()
	tbl := openLocal(t, dir)
	rows, err := tableops.OpenFileRows(ctx, file, latestOf(t, tbl).Schema())
	require.NoError(t, err)
	defer rows.Close()
	res, err := merge.Load(ctx, tbl.Store(), merge.LoadOptions{Position: pos, Columns: rows.Columns(), Next: rows.Next})
	require.NoError(t, err)
	require.EqualValues(t, 200, res.Rows)
	return pos.Hex()
}

// loadPosition is the position of every change committed at or before an LSN, as
// `load --position LSN` takes it.
func loadPosition(t *testing.T, lsn string) codecs.Position {
	t.Helper()
	l, err := codecs.ParseLSN(lsn)
	require.NoError(t, err)
	p := codecs.Position{Commit: l, Serial: math.MaxInt64}
	for i := range p.Change {
		p.Change[i] = 0xff
	}
	return p
}

// sparkLoad are the Spark statements that load file into {table} as an INSERT, its
// values cast to the table's types, with the metadata values our load writes.
func sparkLoad(file, posHex string) []string {
	meta := fmt.Sprintf("'%s', 'r', CAST(NULL AS TIMESTAMP)", posHex)
	if strings.HasSuffix(file, ".csv") {
		return []string{
			fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW load_csv USING csv OPTIONS (path '%s', header 'true')", file),
			"INSERT INTO {table} SELECT CAST(order_id AS INT), customer_id, CAST(amount AS DECIMAL(10,2)), " +
				"CAST(order_date AS DATE), CAST(updated_at AS TIMESTAMP), " + meta + " FROM load_csv",
			"SELECT count(*) AS n FROM {table}",
		}
	}
	return []string{
		fmt.Sprintf("INSERT INTO {table} SELECT order_id, customer_id, amount, order_date, updated_at, %s FROM parquet.`%s`", meta, file),
		"SELECT count(*) AS n FROM {table}",
	}
}
