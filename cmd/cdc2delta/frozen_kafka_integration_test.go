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

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestFrozenKafkaIsReported runs the binary against a private broker,
// shows that it applies, then freezes the broker (SIGSTOP). /readyz must
// answer 503 naming kafka.brokers, and the log must say so, within the
// reachability check's bound; after SIGCONT everything produced is applied
// exactly once.
func TestFrozenKafkaIsReported(t *testing.T) {
	const bound = 30 * time.Second // 8 s of silence, a 5 s ping, the 2 s check, a loaded machine
	kafka := fulltier.StartKafka(t)
	prefix := fmt.Sprintf("frozenkafka%d", time.Now().UnixNano())
	src := newCrashSource(t, kafka.Brokers, prefix, dbzgen.WorkloadOptions{Seed: 38, Keys: 100, Snapshot: true, MaxTxEvents: 3})
	root := t.TempDir()
	metrics := closedPort(t)
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  topic_regex: '^%s\..*'
schema_registry: {url: %q}
tables: {path: %q}
batch: {max_records: 200, max_age: 100ms, min_records: 1}
retry: {budget: 6s}
metrics: {listen: %q}
`, kafka.Brokers[0], prefix+"-group", regexp.QuoteMeta(prefix), src.regURL,
		filepath.ToSlash(root)+"/tables/{database}/{schema}/{table}", metrics), 0o600))
	tables := make([]crashTable, len(src.tables))
	for i, tb := range src.tables {
		d := tb.Def()
		tables[i] = crashTable{t: t, dir: filepath.Join(root, "tables", d.Database, d.Schema, d.Name)}
	}
	run := startFrozenRun(t, src, tables, metrics, cfgPath, root)

	kafka.Freeze()
	frozen := time.Now()
	var code int
	var body string
	if !assert.Eventually(t, func() bool {
		code, body = run.readyz()
		return code == http.StatusServiceUnavailable && strings.Contains(body, "kafka unreachable")
	}, bound, 100*time.Millisecond) {
		t.Fatalf("/readyz %d %s after the freeze: %s\nlog:\n%s", code, time.Since(frozen).Round(time.Second), body, run.logTail())
	}
	t.Logf("/readyz 503 %s after the freeze: %s", time.Since(frozen).Round(100*time.Millisecond), strings.TrimSpace(body))
	require.Eventually(t, func() bool { return run.logCount("no broker in kafka.brokers answers") > 0 },
		bound-time.Since(frozen)+time.Second, 100*time.Millisecond, "log:\n%s", run.logTail())

	kafka.Thaw()
	run.afterThaw(60 * time.Second)
}
