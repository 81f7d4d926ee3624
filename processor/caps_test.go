package processor

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestBatchCapsBoundEveryCommit: with a backlog far larger than one poll and
// batch.max_records small, every commit holds at most max_records records
// (a poll is split into several commits), the txns of a partition increase
// from commit to commit, and the table ends equal to the model. Before the
// caps were hard, a whole poll landed in one commit (604 rows with a limit
// of 25).
func TestBatchCapsBoundEveryCommit(t *testing.T) {
	// No budget: every batch at Age (the defaults would hold each
	// partition's last batch for max_delay).
	t.Run("no budget", func(t *testing.T) { testBatchCaps(t, BatchLimits{MinRecords: 1, MaxDelay: 30 * time.Millisecond}) })
	// A budget far too small for the backlog holds no full batch back, and
	// min_records above the cap changes nothing: only each partition's last,
	// partial batch waits, for max_delay (ADR 0030).
	t.Run("budget", func(t *testing.T) {
		testBatchCaps(t, BatchLimits{MinRecords: 1000, MaxDelay: 2 * time.Second, CommitsPerSecond: 0.01})
	})
}

func testBatchCaps(t *testing.T, budget BatchLimits) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 12, Keys: 400, Snapshot: true})
	pl.produce(3000)
	opts := pl.options("caps")
	const limit = 25
	opts.Batch.Records = limit
	opts.Batch.MinRecords, opts.Batch.MaxDelay, opts.Batch.CommitsPerSecond = budget.MinRecords, budget.MaxDelay, budget.CommitsPerSecond
	opts.MaxPollRecords = 5000       // polls far larger than a commit
	opts.Maintenance.Disabled = true // every version here is a batch's
	pl.start(opts)
	pl.waitCaughtUp()
	pl.requireModel()

	for _, tb := range pl.tables {
		store := pl.store(tb)
		commits, biggest := 0, 0
		last := map[string]int64{}
		for v := int64(0); ; v++ {
			ci, txns, ok := readCommit(t, store, v)
			if !ok {
				break
			}
			n, err := strconv.Atoi(ci.OperationMetrics.Text("numSourceRows"))
			require.NoError(t, err, "version %d", v)
			require.LessOrEqual(t, n, limit, "version %d of %s holds %d records", v, tablePath(tb), n)
			biggest = max(biggest, n)
			for app, off := range txns {
				if prev, seen := last[app]; seen {
					require.Greater(t, off, prev, "version %d: txn %s does not advance", v, app)
				}
				last[app] = off
			}
			commits++
		}
		require.Equal(t, limit, biggest, "%s: some commit is full", tablePath(tb))
		t.Logf("%s: %d commits, the largest holding %d records", tablePath(tb), commits, biggest)
		for tp, end := range pl.endOffsets(tb.Topic()) {
			require.Equal(t, end-1, last[cdctable.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}.AppID()])
		}
	}
}

// readCommit reads version v's commitInfo and txns; ok is false past the end.
func readCommit(t testing.TB, store deltalog.Store, v int64) (*deltalog.CommitInfo, map[string]int64, bool) {
	t.Helper()
	rc, err := store.Get(t.Context(), fmt.Sprintf("_delta_log/%020d.json", v))
	if err != nil {
		require.ErrorIs(t, err, deltalog.ErrNotExist)
		return nil, nil, false
	}
	data, err := io.ReadAll(rc)
	require.NoError(t, rc.Close())
	require.NoError(t, err)
	var ci *deltalog.CommitInfo
	txns := map[string]int64{}
	for line := range strings.Lines(string(data)) {
		a, ok, err := deltalog.ParseLogLine([]byte(line))
		require.NoError(t, err)
		switch {
		case !ok:
		case a.CommitInfo != nil:
			ci = a.CommitInfo
		case a.Txn != nil:
			txns[a.Txn.AppID] = a.Txn.Version
		}
	}
	require.NotNil(t, ci, "version %d has a commitInfo", v)
	return ci, txns, true
}
