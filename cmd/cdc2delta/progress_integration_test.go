//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/operator"
)

// TestCatchUpReportsProgress: a run behind a backlog on the real broker logs at
// INFO how far behind it is, its rate and an ETA ("catching up"), then "caught
// up" once, and on SIGTERM the one-line summary of what it applied.
func TestCatchUpReportsProgress(t *testing.T) {
	prefix := fmt.Sprintf("progress%d", time.Now().UnixNano())
	src := newCrashSource(t, fulltier.KafkaBrokers(t), prefix, dbzgen.WorkloadOptions{Seed: 46, Keys: 200, Snapshot: true})
	root := t.TempDir()
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  topic_regex: '^%s\..*'
schema_registry: {url: %q}
tables: {path: %q}
batch: {max_records: 1, max_commits_per_second: 0}
metrics: {listen: ""}
`, fulltier.KafkaBrokers(t)[0], prefix+"-group", regexp.QuoteMeta(prefix), src.regURL,
		filepath.ToSlash(root)+"/tables/{database}/{schema}/{table}"), 0o600))
	run := startRun(t, binary, cfgPath, filepath.Join(root, "run.log"))

	// Keep about 15 s of work behind, at the rate the run applies on this
	// machine, until it reports the catch-up (after 10 s of it).
	catching := regexp.MustCompile(`level=INFO msg="catching up" records_behind=[1-9][0-9]* records_per_s=[0-9]+ eta=[0-9hms.]+`)
	var prevApplied int64
	prevAt := time.Now()
	reported := poll(90*time.Second, time.Second, func() bool {
		if run.logCount(`msg="catching up"`) > 0 {
			return true
		}
		lag, applied := groupPosition(t, cfgPath)
		rate := float64(applied-prevApplied) / time.Since(prevAt).Seconds()
		prevApplied, prevAt = applied, time.Now()
		if want := max(1000, int64(15*rate)); lag < want {
			require.NoError(t, src.produce(t.Context(), int(want-lag)))
		}
		return false
	})
	require.True(t, reported, "no progress report while behind; log:\n%s", run.logTail())
	log, err := os.ReadFile(run.logPath)
	require.NoError(t, err)
	require.Regexp(t, catching, string(log))

	require.True(t, poll(3*time.Minute, 250*time.Millisecond, func() bool { return run.logCount(`msg="caught up"`) > 0 }),
		"no \"caught up\" after the producer stopped; log:\n%s", run.logTail())
	require.Equal(t, exitOK, run.terminate(), run.logTail())
	require.Equal(t, 1, run.logCount(`msg="caught up"`), run.logTail())
	log, err = os.ReadFile(run.logPath)
	require.NoError(t, err)
	require.Regexp(t, `level=INFO msg=stopped records_applied=[1-9][0-9]* versions_committed=[1-9][0-9]* tables=3 uptime=[0-9hms]+\n`, string(log))
}

// groupPosition returns the records behind and applied over the run's
// partitions, from `cdc2delta offsets` (the Delta txn of each partition).
func groupPosition(t *testing.T, cfgPath string) (lag, applied int64) {
	t.Helper()
	r := cli(t, "offsets", "--config", cfgPath, "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var rows []operator.PartitionLag
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	for _, row := range rows {
		lag += row.Lag
		if row.DeltaTxn != nil {
			applied += *row.DeltaTxn + 1
		}
	}
	return lag, applied
}
