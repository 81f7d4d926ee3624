//go:build integration

package processor

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/backoff"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
	"github.com/cdc2delta/cdc2delta/processor/catalog/unity"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TestCatalogUnityReadByName: a table the pipeline creates is registered in
// the OSS Unity Catalog server with no manual step, and DuckDB reads it by
// name with the rows the table holds.
func TestCatalogUnityReadByName(t *testing.T) {
	ucURL := fulltier.UnityURL(t)
	ctx := t.Context()
	schema := fmt.Sprintf("pipeline%d", time.Now().UnixNano())
	for _, req := range []struct{ path, body string }{
		{"/catalogs", `{"name":"unity"}`},
		{"/schemas", `{"name":"` + schema + `","catalog_name":"unity"}`},
	} {
		resp, err := http.Post(ucURL+"/api/2.1/unity-catalog"+req.path, "application/json", strings.NewReader(req.body))
		require.NoError(t, err)
		resp.Body.Close()
	}
	cat, err := unity.New(unity.Options{Endpoint: ucURL})
	require.NoError(t, err)
	reg, err := catalog.NewRegistrar(cat, catalog.RegistrarOptions{Dependency: cat.Name(), RequestTimeout: 5 * time.Second,
		Backoff: backoff.Policy{Min: 50 * time.Millisecond, Max: 200 * time.Millisecond}})
	require.NoError(t, err)
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); reg.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })

	// DuckDB's unity_catalog extension reads no timestamp_ntz column: a
	// source table without datetime2.
	items := dbzgen.TableDef{Database: "sales", Schema: "dbo", Name: "items", Key: []string{"item_id"}, Columns: []dbzgen.Column{
		{Name: "item_id", Type: "int"},
		{Name: "name", Type: "nvarchar(50)", Nullable: true},
		{Name: "price", Type: "decimal(10,2)", Nullable: true},
	}}
	pl := newPipelineOf(t, dbzgen.WorkloadOptions{Seed: 7, Keys: 40}, nil, "shop", items)
	opts := pl.options("catalog-unity")
	opts.Catalogs = []*catalog.Registrar{reg}
	opts.CatalogSource = func(src route.TableSource, path, role string) (*catalog.Registrar, catalog.Source) {
		return reg, catalog.Source{Name: catalog.Name{Catalog: "unity", Schema: schema, Table: src.Table},
			Location: "file://" + filepath.Join(pl.root, path), Role: role}
	}
	pl.start(opts)
	pl.produce(200)
	pl.waitCaughtUp()
	n := catalog.Name{Catalog: "unity", Schema: schema, Table: "items"}
	require.Eventually(t, func() bool {
		s := reg.Status()
		return len(s) == 1 && s[0].Registered
	}, 20*time.Second, 50*time.Millisecond, "items registered")
	e, err := cat.Lookup(ctx, n)
	require.NoError(t, err)
	require.Equal(t, "delta", e.Format)

	want := len(pl.tableRows(pl.tables[0]))
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
print(con.execute(f"SELECT count(*) FROM unity.{sys.argv[2]}.items").fetchone()[0])
`, ucURL, schema)
	count, err := strconv.Atoi(strings.TrimSpace(got))
	require.NoError(t, err, got)
	require.Equal(t, want, count)
	require.Positive(t, count)
}
