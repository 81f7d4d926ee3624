//go:build integration

package processor

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/backoff"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
	gluecat "github.com/cdc2delta/cdc2delta/processor/catalog/glue"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// syncBuffer is a log sink the registrars and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// glueLane starts a registrar named name on the Glue at endpoint.
func glueLane(t *testing.T, name, endpoint, key, secret string, creg prometheus.Registerer, logs io.Writer) *catalog.Registrar {
	t.Helper()
	cat, err := gluecat.New(t.Context(), gluecat.Options{Endpoint: endpoint, Region: "us-east-1", AccessKeyID: key, SecretAccessKey: secret})
	require.NoError(t, err)
	reg, err := catalog.NewRegistrar(cat, catalog.RegistrarOptions{Name: name, Dependency: "Glue at " + endpoint, Registerer: creg,
		RequestTimeout: time.Second, RetryBudget: 2 * time.Second, Backoff: backoff.Policy{Min: 50 * time.Millisecond, Max: 200 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); reg.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })
	return reg
}

func readyzOf(r *running) func() (int, string) {
	h := r.p.Handler(nil)
	return func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
}

// TestCatalogLanes runs the pipeline with two Glue catalogs, one per table
// group: orders in "default" (a moto that answers), customers in
// "finance" (a moto frozen from the start). Every row lands; orders is
// registered while finance hangs; /readyz and the metrics name finance;
// once finance answers, customers registers too.
func TestCatalogLanes(t *testing.T) {
	ctx := t.Context()
	up, hung := fulltier.StartMotoGlue(t, "analytics"), fulltier.StartMotoGlue(t, "analytics")
	hung.Freeze()
	creg := prometheus.NewRegistry()
	var logs syncBuffer
	def := glueLane(t, "default", up.Endpoint, "t", "t", creg, &logs)
	fin := glueLane(t, "finance", hung.Endpoint, "t", "t", creg, &logs)

	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 7, Keys: 30})
	opts := pl.options("catalog-lanes")
	opts.RetryBudget = 2 * time.Second
	opts.Catalogs = []*catalog.Registrar{def, fin}
	opts.CatalogSource = func(src route.TableSource, path, role string) (*catalog.Registrar, catalog.Source) {
		r := def
		if src.Table == "customers" {
			r = fin
		}
		return r, catalog.Source{Name: catalog.Name{Schema: "analytics", Table: src.Table}, Location: "file://" + filepath.Join(pl.root, path), Role: role}
	}
	readyz := readyzOf(pl.start(opts))
	tableIn := func(m *fulltier.Moto, name string) bool {
		gc := m.Glue()
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := gc.GetTable(cctx, &glue.GetTableInput{DatabaseName: aws.String("analytics"), Name: aws.String(name)})
		return err == nil
	}

	pl.produce(300)
	pl.waitCaughtUp()
	pl.requireModel() // every row of both tables landed while finance hangs
	require.Eventually(t, func() bool { return tableIn(up, "orders") }, 20*time.Second, 50*time.Millisecond, "orders registered in default")
	require.Eventually(t, func() bool {
		code, body := readyz()
		return code == 503 && strings.Contains(body, "catalog finance: registering analytics.customers has failed for") &&
			strings.Contains(body, "no answer from Glue at "+hung.Endpoint)
	}, 20*time.Second, 50*time.Millisecond, "/readyz names the hung catalog")
	_, body := readyz()
	require.NotContains(t, body, "catalog default:")
	require.NotContains(t, body, "analytics.orders")
	require.Equal(t, float64(1), metricWith(t, creg, "cdc2delta_catalog_failing_tables", "catalog", "finance"))
	require.Equal(t, float64(0), metricWith(t, creg, "cdc2delta_catalog_failing_tables", "catalog", "default"))
	require.Positive(t, metricWith(t, creg, "cdc2delta_catalog_registrations_total", "catalog", "default"))
	require.False(t, tableIn(up, "customers"), "customers belongs to finance, not default")

	hung.Thaw()
	require.Eventually(t, func() bool { return tableIn(hung, "customers") }, 30*time.Second, 100*time.Millisecond, "customers registered once finance answers")
	require.Eventually(t, func() bool { _, body := readyz(); return !strings.Contains(body, "catalog finance") }, 20*time.Second, 100*time.Millisecond)
	require.False(t, tableIn(hung, "orders"), "orders belongs to default, not finance")
}

// TestCatalogGlueRefusedCredentials runs the pipeline against a moto that
// checks credentials as AWS does: keys it does not know are refused with
// 403 (InvalidClientTokenId, in an XML body the Glue client cannot decode,
// so the status decides). The data lands; /readyz says the catalog refused
// the credentials; the metric counts the failing table; the secret is in
// no log line and not on /readyz.
func TestCatalogGlueRefusedCredentials(t *testing.T) {
	moto := fulltier.StartMotoAuth(t)
	const secret = "n0t-a-r3al-s3cret-KEY"
	creg := prometheus.NewRegistry()
	var logs syncBuffer
	reg := glueLane(t, "lake", moto.Endpoint, "AKIAUNKNOWN0000000000", secret, creg, &logs)

	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 11, Keys: 20})
	opts := pl.options("catalog-denied")
	opts.RetryBudget = 2 * time.Second
	opts.Catalogs = []*catalog.Registrar{reg}
	opts.CatalogSource = func(src route.TableSource, path, role string) (*catalog.Registrar, catalog.Source) {
		return reg, catalog.Source{Name: catalog.Name{Schema: "analytics", Table: src.Table}, Location: "file://" + filepath.Join(pl.root, path), Role: role}
	}
	readyz := readyzOf(pl.start(opts))
	pl.produce(200)
	pl.waitCaughtUp()
	pl.requireModel()
	require.Eventually(t, func() bool {
		code, body := readyz()
		// Each table's registration fails on its own schedule: wait for both.
		return code == 503 && strings.Contains(body, "catalog lake: Glue at "+moto.Endpoint+" refused access registering analytics.orders (check catalog credentials)") &&
			strings.Contains(body, "refused access registering analytics.customers")
	}, 20*time.Second, 50*time.Millisecond, "/readyz says the credentials were refused for both tables")
	_, body := readyz()
	require.Contains(t, body, "StatusCode: 403") // moto answers in XML, which the JSON client cannot decode: the status decides
	require.Equal(t, float64(len(pl.tables)), metricWith(t, creg, "cdc2delta_catalog_failing_tables", "catalog", "lake"))
	require.Positive(t, metricWith(t, creg, "cdc2delta_catalog_registrations_total", "catalog", "lake"))
	require.Contains(t, logs.String(), "access denied", "the refusal is logged")
	require.NotContains(t, logs.String(), secret)
	require.NotContains(t, body, secret)
}
