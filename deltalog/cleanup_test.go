package deltalog_test

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// TestLogCleanup commits 45 versions a day apart with a 10-day log retention, then checks
// that old commits and checkpoints were deleted and that every retained version can still
// be loaded (time travel to it works).
func TestLogCleanup(t *testing.T) {
	ctx := t.Context()
	tbl, st, clk := newMemTable(t)
	snap := createTable(t, tbl, map[string]string{"delta.logRetentionDuration": "interval 10 days"})
	deleted := 0
	for i := range 45 {
		clk.Advance(24 * time.Hour)
		res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile(fmt.Sprintf("f%02d.parquet", i)), txnAction("app", int64(i))},
			deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
		require.NoError(t, res.CheckpointErr)
		require.NoError(t, res.CleanupErr)
		deleted += res.LogFilesDeleted
		snap, err = tbl.Snapshot(ctx)
		require.NoError(t, err)
	}
	require.Positive(t, deleted)
	// Version v is committed at noon of day v. Cleanup runs after the checkpoint at 40:
	// the cutoff is midnight starting day 30, the newest commit before it is 29, and the
	// newest checkpoint at or before 29 is 20: versions below 20 go, 20 and later stay.
	var kept []int64
	for v := int64(0); v <= 45; v++ {
		rc, err := st.Get(ctx, fmt.Sprintf("_delta_log/%020d.json", v))
		if err == nil {
			require.NoError(t, rc.Close())
			kept = append(kept, v)
		} else {
			require.ErrorIs(t, err, deltalog.ErrNotExist)
		}
	}
	require.Equal(t, int64(20), kept[0])
	require.Equal(t, int64(45), kept[len(kept)-1])
	require.Len(t, kept, 26, "retained commits are contiguous")
	_, err := st.Get(ctx, "_delta_log/00000000000000000010.checkpoint.parquet")
	require.ErrorIs(t, err, deltalog.ErrNotExist)

	for _, v := range kept {
		s, err := tbl.SnapshotAt(ctx, v)
		require.NoError(t, err, "version %d", v)
		require.Len(t, s.Files(), int(v))
		tv, _ := s.TxnVersion("app")
		require.Equal(t, v-1, tv)
	}
	_, err = tbl.SnapshotAt(ctx, 19)
	require.ErrorIs(t, err, deltalog.ErrNotExist)
}

func TestLogCleanupDisabled(t *testing.T) {
	ctx := t.Context()
	tbl, st, clk := newMemTable(t)
	snap := createTable(t, tbl, map[string]string{"delta.logRetentionDuration": "interval 1 day", "delta.enableExpiredLogCleanup": "false"})
	for i := range 25 {
		clk.Advance(24 * time.Hour)
		res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile(fmt.Sprintf("f%02d.parquet", i))}, deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
		require.Zero(t, res.LogFilesDeleted)
		snap, err = tbl.Snapshot(ctx)
		require.NoError(t, err)
	}
	rc, err := st.Get(ctx, "_delta_log/00000000000000000000.json")
	require.NoError(t, err)
	require.NoError(t, rc.Close())
}

// countingLists counts the listings of the whole log.
type countingLists struct {
	deltalog.Store
	n *int
}

func (s countingLists) List(ctx context.Context, prefix, startAfter string) iter.Seq2[deltalog.ObjectInfo, error] {
	if startAfter == "" {
		*s.n++
	}
	return s.Store.List(ctx, prefix, startAfter)
}

// TestLogCleanupOncePerCutoff: a second cleanup on the same day lists nothing, and the
// next day's finds what became expired.
func TestLogCleanupOncePerCutoff(t *testing.T) {
	ctx := t.Context()
	clk := newTestClock()
	lists := 0
	mem := memstore.New(memstore.Options{Now: clk.Now})
	tbl, err := deltalog.Open(ctx, countingLists{mem, &lists}, deltalog.WithClock(clk.Now), deltalog.DisableLogCleanup())
	require.NoError(t, err)
	snap := createTable(t, tbl, map[string]string{"delta.logRetentionDuration": "interval 2 days"})
	for i := range 10 { // versions 1 to 10, at 0:00 and 12:00 of Jan 2 to Jan 6
		clk.Advance(12 * time.Hour)
		res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile(fmt.Sprintf("f%02d.parquet", i))}, deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
		snap = res.Snapshot
		_, err = tbl.Checkpoint(ctx, snap)
		require.NoError(t, err)
	}
	// Jan 6, 12:00: the cutoff is Jan 4, 0:00, after version 5 (and its checkpoint).
	lists = 0
	n, err := tbl.CleanupLogs(ctx, snap)
	require.NoError(t, err)
	require.Positive(t, n)
	require.Equal(t, 1, lists)
	n, err = tbl.CleanupLogs(ctx, snap)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, 1, lists, "the same cutoff: not listed again")

	clk.Advance(24 * time.Hour)
	n, err = tbl.CleanupLogs(ctx, snap)
	require.NoError(t, err)
	require.Positive(t, n, "the next day's cutoff expires more")
	require.Equal(t, 2, lists)
}
