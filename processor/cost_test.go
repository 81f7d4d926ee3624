package processor

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// lockedBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCostMetrics: many small commits of updates leave a table of small
// files and deletion vectors; the per-table cost metrics count every commit
// and what it wrote, the live-file gauges agree with one another, and the
// debt is logged once when it crosses the threshold, though it stays above
// it for many commits after.
func TestCostMetrics(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 31, Keys: 40, Snapshot: true})
	pl.produce(900)
	opts := pl.options("cost")
	opts.Batch.Records = 10 // many small commits
	const limit = 8
	opts.DebtWarnFiles = limit
	opts.Maintenance.Disabled = true // the debt is left to grow
	var logs lockedBuffer
	reg := prometheus.NewRegistry()
	p, err := New(opts, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))), WithRegisterer(reg))
	require.NoError(t, err)
	p.costEvery = 0 // the gauges after every commit, so the last one shows
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	pl.waitCaughtUp()
	cancel()
	require.NoError(t, <-done)
	require.NoError(t, p.Close())
	pl.requireModel()

	for _, tb := range pl.tables {
		table := tablePath(tb)
		versions := 0
		for v := int64(0); ; v++ {
			if _, _, ok := readCommit(t, pl.store(tb), v); !ok {
				break
			}
			versions++
		}
		get := func(name string) float64 { return metricWith(t, reg, name, "table", table) }
		files, dvs, debt := get("cdc2delta_table_live_files"), get("cdc2delta_table_live_deletion_vectors"), get("cdc2delta_table_small_file_debt")
		t.Logf("%s: %d versions, %.0f files written (%.0f bytes), %.0f live files, %.0f with vectors hiding %.0f rows, debt %.0f",
			table, versions, get("cdc2delta_files_written_total"), get("cdc2delta_bytes_written_total"), files, dvs,
			get("cdc2delta_table_deleted_rows"), debt)
		require.Equal(t, float64(versions), get("cdc2delta_commits_total"), "%s: every commit counted", table)
		require.GreaterOrEqual(t, get("cdc2delta_files_written_total"), files, "%s: live files were written", table)
		require.Positive(t, get("cdc2delta_bytes_written_total"))
		require.Positive(t, dvs, "%s: updates left deletion vectors", table)
		require.Equal(t, files-1, debt, "%s: all its files are small, and OPTIMIZE would leave one", table)
		require.Greater(t, debt+dvs, float64(2*limit), "%s: the debt stayed above the threshold for many commits", table)
		require.Equal(t, 1, strings.Count(logs.String(), "table="+table+" "), "%s: its debt is logged once:\n%s", table, logs.String())
	}
	require.Contains(t, logs.String(), "run `cdc2delta optimize`")
	require.Positive(t, metricWith(t, reg, "cdc2delta_commits_total", "reason", commitFull), "a backlog commits full batches")
}
