//go:build integration

package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestFrozenGCSStallsWithinBudget runs the binary against the real broker and a
// private fake-gcs-server, shows that it applies, then freezes the emulator (SIGSTOP:
// it accepts connections and never answers). Within the retry budget plus one request
// timeout every table must be stalled in /readyz (503), and the log must name GCS, the
// endpoint and the operation that hung. After SIGCONT everything must be applied
// exactly once.
func TestFrozenGCSStallsWithinBudget(t *testing.T) {
	const (
		requestTimeout = 2 * time.Second
		budget         = 6 * time.Second
		slack          = 3 * time.Second // backoff, batch age, polling
	)
	brokers := fulltier.KafkaBrokers(t)
	gcs := fulltier.StartFakeGCS(t)
	const bucket = "frozen"
	gcs.CreateBucket(bucket)
	ctx := t.Context()
	prefix := fmt.Sprintf("frozengcs%d", time.Now().UnixNano())
	src := newCrashSource(t, brokers, prefix, dbzgen.WorkloadOptions{Seed: 43, Keys: 100, Snapshot: true, MaxTxEvents: 3})
	root := t.TempDir()
	metrics := closedPort(t)
	tablesURL := "gs://" + bucket + "/tables"
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  topic_regex: '^%s\..*'
schema_registry: {url: %q}
tables: {path: %q}
storage: {gcs: {endpoint: %q, request_timeout: %s}}
batch: {max_records: 200, max_age: 100ms, min_records: 1}
retry: {budget: %s}
metrics: {listen: %q}
`, brokers[0], prefix+"-group", regexp.QuoteMeta(prefix), src.regURL, tablesURL+"/{database}/{schema}/{table}",
		gcs.Endpoint, requestTimeout, budget, metrics), 0o600))
	gc, err := gcsstore.NewClient(ctx, gcsstore.Options{Endpoint: gcs.Endpoint})
	require.NoError(t, err)
	tables := make([]crashTable, len(src.tables))
	for i, tb := range src.tables {
		d := tb.Def()
		prefix := fmt.Sprintf("tables/%s/%s/%s", d.Database, d.Schema, d.Name)
		st, err := gc.Store(bucket, prefix)
		require.NoError(t, err)
		tables[i] = crashTable{t: t, dir: "gs://" + bucket + "/" + prefix, st: st}
	}
	// The pipeline works against this emulator: the freeze is what breaks it.
	run := startFrozenRun(t, src, tables, metrics, cfgPath, root)

	gcs.Freeze()
	frozen := time.Now()
	require.NoError(t, src.produce(ctx, 300)) // Kafka still answers: every table has work
	var (
		stalledAfter time.Duration
		code         int
		body         string
	)
	if !assert.Eventually(t, func() bool {
		code, body = run.readyz()
		for _, tb := range tables {
			if !strings.Contains(body, "table "+tb.dir+" stalled") {
				return false
			}
		}
		stalledAfter = time.Since(frozen)
		return code == http.StatusServiceUnavailable
	}, budget+requestTimeout+slack, 100*time.Millisecond) {
		t.Fatalf("/readyz %d %s after the freeze:\n%s\nlog:\n%s", code, time.Since(frozen).Round(time.Second), body, run.logTail())
	}
	require.Contains(t, body, "GCS at "+gcs.Endpoint, "/readyz names the dependency")
	// The log says the same, on the line that reports the stall.
	stallLine := regexp.MustCompile(`msg="table stalled[^\n]*GCS at ` + regexp.QuoteMeta(gcs.Endpoint) +
		`: (get|put|list|delete) gs://` + bucket + `/`)
	var line []byte
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(run.logPath)
		require.NoError(t, err)
		line = stallLine.Find(data)
		return line != nil
	}, budget+requestTimeout+slack-time.Since(frozen), 100*time.Millisecond, "no stall line naming GCS; log:\n%s", run.logTail())
	t.Logf("all %d tables stalled in /readyz %s after the freeze (budget %s, request timeout %s); log: %s",
		len(tables), stalledAfter.Round(100*time.Millisecond), budget, requestTimeout, line)

	gcs.Thaw()
	run.afterThaw(60 * time.Second) // the stalled tables retry, then commit
}
