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
	ctx := t.Context()
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
	readyz := func() (int, string) { return httpGet(t, "http://"+metrics+"/readyz") }

	require.NoError(t, src.produce(ctx, 300))
	run := startRun(t, binary, cfgPath, filepath.Join(root, "run.log"))
	waitCaughtUp(t, tables, src.endOffsets(), run)
	code, body := readyz()
	require.Equal(t, http.StatusOK, code, body)

	kafka.Freeze()
	frozen := time.Now()
	if !assert.Eventually(t, func() bool {
		code, body = readyz()
		return code == http.StatusServiceUnavailable && strings.Contains(body, "kafka unreachable")
	}, bound, 100*time.Millisecond) {
		t.Fatalf("/readyz %d %s after the freeze: %s\nlog:\n%s", code, time.Since(frozen).Round(time.Second), body, run.logTail())
	}
	t.Logf("/readyz 503 %s after the freeze: %s", time.Since(frozen).Round(100*time.Millisecond), strings.TrimSpace(body))
	require.Eventually(t, func() bool { return run.logCount("no broker in kafka.brokers answers") > 0 },
		bound-time.Since(frozen)+time.Second, 100*time.Millisecond, "log:\n%s", run.logTail())

	kafka.Thaw()
	require.NoError(t, src.produce(ctx, 100))
	ends := src.endOffsets()
	waitCaughtUp(t, tables, ends, run)
	if !assert.Eventually(t, func() bool { code, body = readyz(); return code == http.StatusOK }, 30*time.Second, 100*time.Millisecond) {
		t.Fatalf("/readyz after the thaw: %d %s", code, body)
	}
	require.Equal(t, exitOK, run.terminate(), "log:\n%s", run.logTail())
	requireTablesMatchSource(t, src, tables, ends)
}
