package merge

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// objects lists the table's objects outside _delta_log, path to size.
func objects(t *testing.T, store deltalog.Store) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for oi, err := range store.List(t.Context(), "", "") {
		require.NoError(t, err)
		if !strings.HasPrefix(oi.Path, "_delta_log/") {
			out[oi.Path] = oi.Size
		}
	}
	return out
}

// TestResultCountsWhatWasWritten: each commit's FilesWritten and
// BytesWritten are the objects that appeared beside the log (the tombstone
// file's bytes are not counted), and Stats describes the live files.
func TestResultCountsWhatWasWritten(t *testing.T) {
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		t.Run(string(mode), func(t *testing.T) {
			store := newMemStore()
			// Every commit writes its own file here (absorb.go is tested on its own).
			s, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: mode, DeleteMode: DeleteHard, TailFileSize: -1})
			require.NoError(t, err)
			require.Equal(t, TableStats{}, s.Stats(), "before creation")
			before := objects(t, store)
			off := int64(0)
			for i, batch := range [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a"}, {op: opC, id: 2, pos: 2, name: "b"}, {op: opC, id: 3, pos: 3, name: "c"}},
				{{op: opU, id: 1, pos: 4, name: "a2"}},
				{{op: opD, id: 2, pos: 5}, {op: opC, id: 4, pos: 6, name: "d"}},
			} {
				for j := range batch {
					batch[j].offset = off
					off++
				}
				res, err := s.Apply(t.Context(), batchOf(batch...))
				require.NoError(t, err)
				after := objects(t, store)
				files, bytes, tombs := 0, int64(0), 0
				for p, size := range after {
					if _, ok := before[p]; ok {
						continue
					}
					files++
					if strings.Contains(p, "tombstone") {
						tombs++
						continue
					}
					bytes += size
				}
				require.Equal(t, files, res.FilesWritten, "batch %d: objects written", i)
				require.Equal(t, bytes, res.BytesWritten, "batch %d: bytes written (%d tombstone files not counted)", i, tombs)
				before = after
			}
			st := s.Stats()
			require.Equal(t, 3, st.Files, "one file per commit, none rewritten away")
			require.Equal(t, 2, st.SmallFileDebt, "all small: OPTIMIZE would leave one")
			require.Equal(t, st.Files, st.SmallFiles)
			if mode == ModeDV {
				require.Equal(t, 1, st.DeletionVectors, "the first file lost two rows, to the update and the delete")
				require.Equal(t, int64(2), st.DeletedRows)
			} else {
				require.Zero(t, st.DeletionVectors)
			}
		})
	}
}
