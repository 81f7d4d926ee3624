//go:build integration

package unity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// server returns a client of the real server, whose exchanges rec records,
// and a new schema in catalog "unity".
func server(t *testing.T) (c *Catalog, schema string, rec *recorder) {
	t.Helper()
	u := fulltier.UnityURL(t)
	rec = &recorder{}
	c, err := New(Options{Endpoint: u, HTTPClient: &http.Client{Transport: rec}})
	require.NoError(t, err)
	// The catalog (created once per server) and a schema of the test's own.
	if err := c.do(t.Context(), http.MethodPost, "/catalogs", map[string]string{"name": "unity"}, nil); err != nil {
		require.ErrorIs(t, err, catalog.ErrExists)
	}
	schema = fmt.Sprintf("s%d", time.Now().UnixNano())
	require.NoError(t, c.do(t.Context(), http.MethodPost, "/schemas", map[string]string{"name": schema, "catalog_name": "unity"}, nil))
	return c, schema, rec
}

func TestUnityRoundTrip(t *testing.T) {
	c, schema, rec := server(t)
	ctx := t.Context()
	n := catalog.Name{Catalog: "unity", Schema: schema, Table: "orders"}
	_, err := c.Lookup(ctx, n)
	require.ErrorIs(t, err, catalog.ErrNotFound)

	dir := t.TempDir()
	s := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong, Metadata: map[string]any{"comment": "order id"}},
		{Name: "Unit Price", Type: deltalog.DecimalType{Precision: 19, Scale: 4}, Nullable: true},
		{Name: "placed", Type: deltalog.TypeTimestampNTZ, Nullable: true},
		{Name: "region", Type: deltalog.TypeString, Nullable: true},
	}}
	e := catalog.Entry{Name: n, Location: "file://" + dir, Schema: s, PartitionColumns: []string{"region"},
		Description: "orders", Properties: map[string]string{"cdc2delta.role": "table"}}
	require.NoError(t, c.Create(ctx, e))
	require.ErrorIs(t, c.Create(ctx, e), catalog.ErrExists)
	got, err := c.Lookup(ctx, n)
	require.NoError(t, err)
	require.Equal(t, catalog.FormatDelta, got.Format)
	require.True(t, catalog.SameLocation(e.Location, got.Location), "%s vs %s", e.Location, got.Location)
	require.Empty(t, catalog.Differences(e, got))
	require.Equal(t, deltalog.TypeTimestampNTZ, got.Schema.Fields[2].Type)
	require.Equal(t, []string{"region"}, got.PartitionColumns)

	// The columns as the server stores them.
	var ti tableInfo
	require.NoError(t, c.do(ctx, http.MethodGet, "/tables/"+n.String(), nil, &ti))
	require.Equal(t, "EXTERNAL", ti.TableType)
	require.Equal(t, "DELTA", ti.DataSourceFormat)
	require.Equal(t, "decimal(19,4)", ti.Columns[1].TypeText)
	require.Equal(t, "DECIMAL", ti.Columns[1].TypeName)
	require.Equal(t, "TIMESTAMP_NTZ", ti.Columns[2].TypeName)

	e.Schema = &deltalog.StructType{Fields: append(s.Fields, deltalog.StructField{Name: "note", Type: deltalog.TypeString, Nullable: true})}
	require.NoError(t, c.Update(ctx, e))
	got, err = c.Lookup(ctx, n)
	require.NoError(t, err)
	require.Empty(t, catalog.Differences(e, got))
	require.Len(t, got.Schema.Fields, 5)

	// Missing schema: ErrNotFound.
	e.Name = catalog.Name{Catalog: "unity", Schema: schema + "_none", Table: "orders"}
	require.ErrorIs(t, c.Create(ctx, e), catalog.ErrNotFound)

	// Registering the same name for another directory is a conflict.
	out, _, err := catalog.Register(ctx, c, catalog.Entry{Name: n, Location: "file:///elsewhere", Schema: s}, 5*time.Second, c.Name())
	require.Equal(t, catalog.Conflict, out)
	var ce *catalog.ConflictError
	require.ErrorAs(t, err, &ce)

	// What was sent, and what the real server answered, against UC's
	// published API.
	report, code := specCheck(t, rec.recorded())
	t.Log("\n" + report)
	require.Equal(t, 0, code, report)
}

func TestUnityDownIsUnavailable(t *testing.T) {
	c, err := New(Options{Endpoint: "http://127.0.0.1:1"})
	require.NoError(t, err)
	_, err = c.Lookup(t.Context(), catalog.Name{Catalog: "unity", Schema: "s", Table: "t"})
	require.ErrorIs(t, err, catalog.ErrUnavailable)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = c.Lookup(ctx, catalog.Name{Catalog: "unity", Schema: "s", Table: "t"})
	require.True(t, errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "canceled"), "%v", err)
}

// TestUnityReadByNameWithDuckDB registers a Delta table and reads it by name
// through DuckDB's unity_catalog extension.
func TestUnityReadByNameWithDuckDB(t *testing.T) {
	c, schema, _ := server(t)
	ctx := t.Context()
	dir := t.TempDir()
	st, err := localstore.New(localstore.Options{Dir: dir, NoSync: true})
	require.NoError(t, err)
	tbl, err := deltalog.Open(ctx, st)
	require.NoError(t, err)
	s := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong},
		{Name: "name", Type: deltalog.TypeString, Nullable: true, Metadata: map[string]any{"comment": "who"}},
		{Name: "amount", Type: deltalog.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
	}}
	ss, err := s.SchemaString()
	require.NoError(t, err)
	w, err := datafile.NewWriter(datafile.Options{Schema: s})
	require.NoError(t, err)
	adds, err := w.Write(ctx, st, [][]any{{int64(1), "a", decimal128.FromInt64(1250)}, {int64(2), "b", decimal128.FromInt64(99)}})
	require.NoError(t, err)
	proto := deltalog.MinimalProtocol(s, nil)
	actions := []deltalog.Action{{Protocol: &proto}, {Metadata: &deltalog.Metadata{ID: "uc-duck", Format: deltalog.Format{Provider: "parquet"},
		SchemaString: ss, PartitionColumns: []string{}, Configuration: map[string]string{}, Description: "read by name"}}}
	for _, a := range adds {
		actions = append(actions, deltalog.Action{Add: &a})
	}
	res, err := tbl.Commit(ctx, nil, actions, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)

	src := catalog.Source{Name: catalog.Name{Catalog: "unity", Schema: schema, Table: "orders"}, Location: "file://" + dir, Role: catalog.RoleTable}
	out, _, err := catalog.Register(ctx, c, catalog.EntryOf(src, res.Snapshot), 5*time.Second, c.Name())
	require.NoError(t, err)
	require.Equal(t, catalog.Created, out)

	got := fulltier.PythonCode(t, `
import duckdb, glob, os, sys
import duckdb_extension_unity_catalog as uc, duckdb_extension_delta as delta, duckdb_extension_httpfs as httpfs
def ext(m):
    return glob.glob(os.path.join(os.path.dirname(m.__file__), "extensions", "*", "*.duckdb_extension"))[0]
con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
for m in (httpfs, delta, uc):
    con.execute(f"LOAD '{ext(m)}'")
con.execute(f"CREATE SECRET (TYPE UC, TOKEN 'none', ENDPOINT '{sys.argv[1]}', AWS_REGION 'us-east-1')")
con.execute("ATTACH 'unity' AS unity (TYPE UC_CATALOG)")
for r in con.execute(f"SELECT id, name, amount::VARCHAR FROM unity.{sys.argv[2]}.orders ORDER BY id").fetchall():
    print(*r)
`, fulltier.UnityURL(t), schema)
	require.Equal(t, "1 a 12.50\n2 b 0.99\n", got)
}
