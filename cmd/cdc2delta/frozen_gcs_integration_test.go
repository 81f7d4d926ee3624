//go:build integration

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

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

	run.stallsWhileFrozen(gcs, budget, requestTimeout, storeStall{name: "GCS", at: "GCS at " + gcs.Endpoint,
		ops: "get|put|list|delete", object: "gs://" + bucket + "/"})
}
