package merge

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTombstoneCompactionCutShortByStop: a compaction that a stop cuts short
// (its context canceled) is no failure: it logs no warning, and the files stay
// for the next open to compact.
func TestTombstoneCompactionCutShortByStop(t *testing.T) {
	store := newMemStore()
	var logs bytes.Buffer
	s, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: ModeDV, DeleteMode: DeleteHard,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)
	for i := range 3 {
		_, err := s.Apply(t.Context(), batchOf(
			ev{op: opC, id: int32(i), pos: 2*i + 1, offset: int64(2 * i)},
			ev{op: opD, id: int32(i), pos: 2*i + 2, offset: int64(2*i + 1)}))
		require.NoError(t, err)
	}
	require.Len(t, s.state.tombs.files, 3, "files to compact")

	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	s.compactTombstones(stopped, 1)
	require.NotContains(t, logs.String(), "level=WARN", "a stop is not a failure")
	require.Contains(t, logs.String(), "compacting tombstones stopped")
	require.Len(t, tombstoneFiles(t, store), 3, "the files stay for the next open")
}
