package deltalog_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
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
