package merge

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// TestCatchUpAfterCompaction: another writer compacts the table into one
// file. A catch-up reads the new file's keys before it touches the index
// while they are at most the read-ahead, and as it applies them above it,
// saying so in the log. A failed read then leaves the index as it was, or
// has it rebuilt; either way the next catch-up makes it right.
func TestCatchUpAfterCompaction(t *testing.T) {
	for _, tc := range []struct {
		name      string
		disk      bool
		readAhead int64
		fail      bool
	}{
		{"memory, read ahead", false, readAheadRows, false},
		{"memory, streamed", false, 100, false},
		{"disk, streamed", true, 100, false},
		{"memory, read ahead, read fails", false, readAheadRows, true},
		{"memory, streamed, read fails", false, 100, true},
		{"disk, streamed, read fails", true, 100, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newFaultStore()
			logs := &logBuffer{}
			opts := Options{Store: store, TableName: "items", Mode: ModeDV, TailFileSize: -1,
				Logger: slog.New(slog.NewTextHandler(logs, nil))}
			if tc.disk {
				opts.IndexDir, opts.IndexMemoryKeys = t.TempDir(), 50
			}
			s, err := Open(t.Context(), opts)
			require.NoError(t, err)
			s.readAhead = tc.readAhead
			pos := 0
			for b := range 4 {
				var evs []ev
				for i := range 60 {
					pos++
					op, id := codecs.OpCreate, int32(b*60+i)
					if b > 0 && i%3 == 0 {
						op, id = codecs.OpUpdate, int32(i) // rows of earlier files deleted
					}
					evs = append(evs, ev{op: op, id: id, pos: pos, name: "x", offset: int64(pos)})
				}
				_, err := s.Apply(t.Context(), batchOf(evs...))
				require.NoError(t, err)
			}
			tbl, err := deltalog.Open(t.Context(), store)
			require.NoError(t, err)
			snap, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			res, err := tableops.Optimize(t.Context(), tbl, snap, tableops.OptimizeOptions{TargetSize: 1 << 30})
			require.NoError(t, err)
			require.Equal(t, 1, res.NumAddedFiles)
			latest, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			var compacted string
			for _, f := range latest.Files() {
				compacted = f.Path
			}
			streamed := tc.readAhead < 200 // the compacted file holds 200 live rows

			s.mu.Lock()
			defer s.mu.Unlock()
			if tc.fail {
				before := s.state
				fault := store.Inject(faultstore.Fault{Ops: faultstore.OpGet, Pattern: compacted})
				err := s.catchUp(t.Context())
				require.ErrorIs(t, err, faultstore.ErrInjected)
				require.Positive(t, fault.Fired())
				fault.Remove()
				if streamed {
					require.True(t, errors.Is(err, errCatchUpUnsupported), "a part-way index must be rebuilt: %v", err)
					require.Nil(t, s.state)
				} else {
					require.False(t, errors.Is(err, errCatchUpUnsupported), "a failed read ahead needs no rebuild: %v", err)
					require.Same(t, before, s.state, "the state as it was")
					require.Equal(t, snap.Version(), s.state.snap.Version())
					requireIndexMatchesFiles(t, s)
				}
			}
			require.NoError(t, s.reload(t.Context()))
			require.Equal(t, latest.Version(), s.state.snap.Version())
			requireIndexMatchesFiles(t, s)
			if !tc.fail {
				require.Equal(t, streamed, strings.Contains(logs.String(), "catching up the key index on new files"), "the log:\n%s", logs)
			}
		})
	}
}
