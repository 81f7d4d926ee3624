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

	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestFrozenS3StallsWithinBudget runs the binary against the real broker
// and a private moto, shows that it applies, then freezes moto (SIGSTOP: it
// accepts connections and never answers). Within the retry budget plus one
// request timeout every table must be stalled in /readyz (503), and the log
// must name S3, the endpoint and the operation that hung. After SIGCONT
// everything must be applied exactly once.
func TestFrozenS3StallsWithinBudget(t *testing.T) {
	const (
		requestTimeout = 2 * time.Second
		budget         = 6 * time.Second
	)
	brokers := fulltier.KafkaBrokers(t)
	moto := fulltier.StartMoto(t)
	const bucket = "frozen"
	moto.CreateBucket(bucket)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"} {
		if os.Getenv(k) == "" {
			t.Setenv(k, v)
		}
	}
	ctx := t.Context()
	prefix := fmt.Sprintf("frozens3%d", time.Now().UnixNano())
	src := newCrashSource(t, brokers, prefix, dbzgen.WorkloadOptions{Seed: 38, Keys: 100, Snapshot: true, MaxTxEvents: 3})
	root := t.TempDir()
	metrics := closedPort(t)
	tablesURL := "s3://" + bucket + "/tables"
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  topic_regex: '^%s\..*'
schema_registry: {url: %q}
tables: {path: %q}
storage: {s3: {endpoint: %q, path_style: true, request_timeout: %s}}
batch: {max_records: 200, max_age: 100ms, min_records: 1}
retry: {budget: %s}
metrics: {listen: %q}
`, brokers[0], prefix+"-group", regexp.QuoteMeta(prefix), src.regURL, tablesURL+"/{database}/{schema}/{table}",
		moto.Endpoint, requestTimeout, budget, metrics), 0o600))
	s3c, err := s3store.NewClient(ctx, s3store.Options{Endpoint: moto.Endpoint, UsePathStyle: true})
	require.NoError(t, err)
	tables := make([]crashTable, len(src.tables))
	for i, tb := range src.tables {
		d := tb.Def()
		prefix := fmt.Sprintf("tables/%s/%s/%s", d.Database, d.Schema, d.Name)
		st, err := s3c.Store(bucket, prefix)
		require.NoError(t, err)
		tables[i] = crashTable{t: t, dir: "s3://" + bucket + "/" + prefix, st: st}
	}
	// The pipeline works against this moto: the freeze is what breaks it.
	run := startFrozenRun(t, src, tables, metrics, cfgPath, root)

	run.stallsWhileFrozen(moto, budget, requestTimeout, storeStall{name: "S3", at: "S3 at " + moto.Endpoint,
		ops: "GetObject|PutObject|ListObjectsV2|DeleteObject", object: "s3://" + bucket + "/"})
}
