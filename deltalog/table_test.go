package deltalog_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

func TestOpenOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    []deltalog.Option
		wantErr bool
	}{
		{"defaults", nil, false},
		{"negative retries", []deltalog.Option{deltalog.CommitRetries(-1)}, true},
		{"zero read concurrency", []deltalog.Option{deltalog.ReadConcurrency(0)}, true},
		{"backoff inverted", []deltalog.Option{deltalog.RetryBackoff(2, 1)}, true},
		{"negative interval", []deltalog.Option{deltalog.CheckpointInterval(-1)}, true},
		{"all set", []deltalog.Option{deltalog.CommitRetries(3), deltalog.ReadConcurrency(4), deltalog.EngineInfo("x/1"),
			deltalog.CheckpointInterval(5), deltalog.WithLogger(nil)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deltalog.Open(t.Context(), memstore.New(memstore.Options{}), tc.opts...)
			if tc.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
		})
	}
	_, err := deltalog.Open(t.Context(), nil)
	require.Error(t, err)
}

func TestCheckpointIntervalProperty(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t)
	snap := createTable(t, tbl, map[string]string{"delta.checkpointInterval": "3"})
	var at []int64
	for i := range 7 {
		res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile(fmt.Sprintf("f%d.parquet", i))}, deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
		require.NoError(t, res.CheckpointErr)
		if res.Checkpointed {
			at = append(at, res.Version)
		}
		snap, err = tbl.Update(ctx, snap)
		require.NoError(t, err)
	}
	require.Equal(t, []int64{3, 6}, at)
}

func TestReadAppIDsConflict(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t)
	snap := createTable(t, tbl, nil)
	_, err := tbl.Commit(ctx, snap, []deltalog.Action{txnAction("watched", 1)}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	// A blind append that declares it read "watched" conflicts with the winner's txn.
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{addFile("x.parquet")}, deltalog.Operation{Name: deltalog.OpWrite},
		deltalog.ReadAppIDs("watched"))
	require.ErrorIs(t, err, deltalog.ErrConcurrentTransaction)
}
