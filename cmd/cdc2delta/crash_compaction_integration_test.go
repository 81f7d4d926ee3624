//go:build integration

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestCrashDuringCompaction SIGKILLs the real binary while its maintenance
// compacts a table (ADR 0032), with changes streaming in from the real
// broker: each kill waits until the log says a compaction started and has
// not ended, so it lands while the compacted files are being written or
// committed. After the last restart has caught up, every table equals the
// source (nothing lost or doubled), and delta-rs, DuckDB and Spark read the
// same rows.
func TestCrashDuringCompaction(t *testing.T) {
	brokers := fulltier.KafkaBrokers(t)
	seed := envUint(t, envCrashSeed, uint64(time.Now().UnixNano()))
	t.Logf("seed %d (rerun with %s=%d)", seed, envCrashSeed, seed)
	rng := rand.New(rand.NewPCG(seed, 0xc0a1e5ce))

	prefix := fmt.Sprintf("compactcrash%d", time.Now().UnixNano())
	group := prefix + "-group"
	src := newCrashSource(t, brokers, prefix, dbzgen.WorkloadOptions{
		Seed: seed, Keys: 1500, Snapshot: true, DeleteRatio: 0.05, Redeliver: 0.05, MaxTxEvents: 3})
	root := t.TempDir()
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	// No tail file: every commit adds a file, so that compaction has work
	// (TestCrashRecovery kills the tail's rewrites).
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  instance_id: %q
  topic_regex: '^%s\..*'
schema_registry: {url: %q}
tables: {path: %q}
batch: {max_records: 100, max_age: 50ms, min_records: 1}
maintenance: {compact_at: 2, checkpoint_commits: 3, checkpoint_interval: 1s, tail_file_size: 0}
metrics: {listen: ""}
log: {level: debug}
`, brokers[0], group, prefix+"-instance", regexp.QuoteMeta(prefix), src.regURL,
		filepath.ToSlash(root)+"/tables/{database}/{schema}/{table}"), 0o600))
	tables := make([]crashTable, len(src.tables))
	for i, tb := range src.tables {
		d := tb.Def()
		tables[i] = crashTable{t: t, dir: filepath.Join(root, "tables", d.Database, d.Schema, d.Name)}
	}

	ctx := t.Context()
	// Every table's snapshot first (the workload sends them one table
	// after another), so every table exists and compacts.
	require.NoError(t, src.produce(ctx, 3*1500+300))
	stopProducing := src.produceInBackground(ctx, 10, 20*time.Millisecond)
	const attempts, wantHits = 12, 4
	hits := 0
	for i := 0; i < attempts && hits < wantHits; i++ {
		run := startRun(t, binary, cfgPath, filepath.Join(root, fmt.Sprintf("run-%02d.log", i)))
		compacting := func() bool { return run.logCount("compacting table") > run.logCount("table compacted") }
		poll(30*time.Second, 2*time.Millisecond, compacting) // the kill counts only if it lands in one
		// Kept: the kill's moment within the compaction is random on purpose.
		time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
		run.kill()
		if compacting() {
			hits++
		}
		t.Logf("kill %2d: compactions started %d, ended %d, gave way %d", i+1, run.logCount("compacting table"),
			run.logCount("table compacted"), run.logCount("compaction gave way"))
	}
	require.GreaterOrEqual(t, hits, wantHits, "kills that landed during a compaction")
	stopProducing()
	ends := src.endOffsets()

	final := startRun(t, binary, cfgPath, filepath.Join(root, "run-final.log"))
	waitCaughtUp(t, tables, ends, final)
	// The tables keep their debt (no tail file), so the last run compacts
	// them too, within the maintainer's look (10 s), unkilled.
	poll(40*time.Second, 50*time.Millisecond, func() bool { return final.logCount("table compacted") > 0 })
	require.Equal(t, exitOK, final.terminate(), "SIGTERM must end the run cleanly; log:\n%s", final.logTail())

	requireTablesMatchSource(t, src, tables, ends)
	optimized := 0
	for _, tb := range tables {
		for _, v := range tb.commitVersions() {
			for _, a := range tb.commit(v) {
				if a.CommitInfo != nil && a.CommitInfo.Operation == deltalog.OpOptimize {
					optimized++
				}
			}
		}
	}
	require.Positive(t, optimized, "compactions landed between the kills")
	requireReadersMatchSource(t, src, tables, ends, fulltier.DeltaRS, fulltier.DuckDB, fulltier.Spark)
	t.Logf("%d kills during a compaction, %d compactions committed, events %d", hits, optimized, src.produced)
}
