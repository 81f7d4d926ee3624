//go:build integration

package processor

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/backoff"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
	gluecat "github.com/cdc2delta/cdc2delta/processor/catalog/glue"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TestCatalogGlue runs the pipeline with registration in moto's Glue:
// created after the first commit, not updated by data-only commits, updated
// exactly once by a schema change; a name taken by another location stops
// only that table's registration; a hung catalog holds no data back and
// shows on /readyz.
func TestCatalogGlue(t *testing.T) {
	ctx := t.Context()
	moto := fulltier.StartMotoGlue(t, "analytics")
	gc := moto.Glue()
	// customers' name is another table's.
	_, err := gc.CreateTable(ctx, &glue.CreateTableInput{DatabaseName: aws.String("analytics"), TableInput: &types.TableInput{
		Name: aws.String("customers"), TableType: aws.String("EXTERNAL_TABLE"), Parameters: map[string]string{"table_type": "DELTA"},
		StorageDescriptor: &types.StorageDescriptor{Location: aws.String("s3://someone/else/customers")}}})
	require.NoError(t, err)

	cat, err := gluecat.New(ctx, gluecat.Options{Endpoint: moto.Endpoint, Region: "us-east-1", AccessKeyID: "t", SecretAccessKey: "t"})
	require.NoError(t, err)
	creg := prometheus.NewRegistry()
	reg, err := catalog.NewRegistrar(cat, catalog.RegistrarOptions{Dependency: "Glue at " + moto.Endpoint, Registerer: creg,
		RequestTimeout: time.Second, RetryBudget: 2 * time.Second, Backoff: backoff.Policy{Min: 50 * time.Millisecond, Max: 200 * time.Millisecond}})
	require.NoError(t, err)
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); reg.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })

	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 42, Keys: 30})
	opts := pl.options("catalog-glue")
	opts.RetryBudget = 2 * time.Second
	opts.Catalogs = []*catalog.Registrar{reg}
	opts.CatalogSource = func(src route.TableSource, path, role string) (*catalog.Registrar, catalog.Source) {
		return reg, catalog.Source{Name: catalog.Name{Schema: "analytics", Table: src.Table}, Location: "file://" + filepath.Join(pl.root, path), Role: role}
	}
	r := pl.start(opts)
	h := r.p.Handler(nil)
	readyz := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
	versions := func(name string) int {
		out, err := gc.GetTableVersions(ctx, &glue.GetTableVersionsInput{DatabaseName: aws.String("analytics"), TableName: aws.String(name)})
		if err != nil {
			return -1
		}
		return len(out.TableVersions)
	}
	columns := func(name string) []string {
		out, err := gc.GetTable(ctx, &glue.GetTableInput{DatabaseName: aws.String("analytics"), Name: aws.String(name)})
		if err != nil {
			return nil
		}
		var cols []string
		for _, c := range out.Table.StorageDescriptor.Columns {
			cols = append(cols, aws.ToString(c.Name))
		}
		return cols
	}

	pl.produce(300)
	pl.waitCaughtUp()
	require.Eventually(t, func() bool { return versions("orders") == 1 }, 20*time.Second, 50*time.Millisecond, "orders registered")
	out, err := gc.GetTable(ctx, &glue.GetTableInput{DatabaseName: aws.String("analytics"), Name: aws.String("orders")})
	require.NoError(t, err)
	require.Equal(t, "DELTA", out.Table.Parameters["table_type"])
	require.Equal(t, "file://"+filepath.Join(pl.root, "sales/dbo/orders"), aws.ToString(out.Table.StorageDescriptor.Location))
	require.Contains(t, columns("orders"), "Unit_Price")

	// The clash: customers' data lands, its registration stops, /readyz says so.
	pl.requireModel()
	require.Eventually(t, func() bool {
		code, body := readyz()
		return code == 503 && strings.Contains(body, "catalog: table analytics.customers not registered")
	},
		10*time.Second, 50*time.Millisecond)
	_, body := readyz()
	require.Contains(t, body, "registered at s3://someone/else/customers")
	out, err = gc.GetTable(ctx, &glue.GetTableInput{DatabaseName: aws.String("analytics"), Name: aws.String("customers")})
	require.NoError(t, err)
	require.Equal(t, "s3://someone/else/customers", aws.ToString(out.Table.StorageDescriptor.Location), "never overwritten")

	// Data-only commits: no new Glue version.
	pl.produce(300)
	pl.waitCaughtUp()
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, 1, versions("orders"))

	// The catalog hangs while orders gains a column: the data lands.
	moto.Freeze()
	def := dbzgen.Orders()
	def.Columns = append(def.Columns, dbzgen.Column{Name: "note", Type: "nvarchar(100)", Nullable: true})
	v2, err := pl.gen.Table(def)
	require.NoError(t, err)
	ev := dbzgen.Event{Table: v2, Op: dbzgen.OpCreate, After: dbzgen.Row{"order_id": 9_000_001, "customer_id": "c-evolved", "note": "gift"},
		Source: dbzgen.Source{Time: time.Now(), CommitLSN: dbzgen.MakeLSN(0xFFFFFF, 1, 1), ChangeLSN: dbzgen.MakeLSN(0xFFFFFF, 1, 2)}}
	key, value, err := pl.gen.Encode(ctx, ev)
	require.NoError(t, err)
	pl.produceRaw(v2.Topic(), 0, key, value)
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(pl.tableRows(pl.tables[1]), func(s string) bool { return strings.Contains(s, "c-evolved") })
	}, 20*time.Second, 50*time.Millisecond, "the evolved row lands while the catalog hangs")
	require.Eventually(t, func() bool { _, body := readyz(); return strings.Contains(body, "registering analytics.orders") },
		20*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		code, body := readyz()
		return code == 503 && strings.Contains(body, "registering analytics.orders has failed for") && strings.Contains(body, "no answer from Glue")
	}, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, float64(1), metricSum(t, creg, "cdc2delta_catalog_failing_tables"))
	moto.Thaw()

	// Back: exactly one update.
	require.Eventually(t, func() bool { return slices.Contains(columns("orders"), "note") }, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, 2, versions("orders"))
	pl.produce(100)
	pl.waitCaughtUp()
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, 2, versions("orders"))
	_, body = readyz()
	require.NotContains(t, body, "registering analytics.orders")
}
