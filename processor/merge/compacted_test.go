package merge

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// TestCatchUpFollowsCompaction: another writer of the process compacts the
// table and hands the Sink what it moved. The catch-up then follows the
// rows without reading the compacted file (a read of it fails), in memory
// and in runs, also when the compaction was carried past the Sink's own
// commit; a restart after it does not read the file either; the index
// equals one built from the files after every step, and after the full run
// merge that drops the redirects. Untold, the catch-up reads the file.
func TestCatchUpFollowsCompaction(t *testing.T) {
	for _, tc := range []struct {
		name    string
		disk    bool
		untold  bool // Compacted is not called
		rebased bool // the Sink commits between the compaction's read and its commit
		restart bool // a kill and an open follow the catch-up
		dvFails bool // the first catch-up cannot read deletion vectors
	}{
		{name: "memory", disk: false},
		{name: "disk", disk: true},
		{name: "disk, rebased", disk: true, rebased: true},
		{name: "memory, rebased", rebased: true},
		{name: "disk, restart", disk: true, restart: true},
		{name: "disk, untold", disk: true, untold: true},
		{name: "disk, a failed catch-up keeps the moves", disk: true, dvFails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newFaultStore()
			dir := t.TempDir()
			open := func() *Sink {
				opts := Options{Store: store, TableName: "items", Mode: ModeDV, TailFileSize: -1}
				if tc.disk {
					opts.IndexDir, opts.IndexMemoryKeys = dir, 50
				}
				s, err := Open(t.Context(), opts)
				require.NoError(t, err)
				return s
			}
			s := open()
			pos := 0
			apply := func(evs ...ev) {
				t.Helper()
				_, err := s.Apply(t.Context(), batchOf(evs...))
				require.NoError(t, err)
			}
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
				apply(evs...)
			}
			if tc.disk {
				require.True(t, s.state.index.onDisk(), "keys are in runs")
			}
			tbl, err := deltalog.Open(t.Context(), store)
			require.NoError(t, err)
			planned, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			if tc.rebased {
				// Rows of the inputs deleted after the compaction read them.
				apply(ev{op: codecs.OpUpdate, id: 61, pos: pos + 1, name: "y", offset: int64(pos + 1)},
					ev{op: codecs.OpDelete, id: 130, pos: pos + 2, offset: int64(pos + 2)})
				pos += 2
			}
			res, err := tableops.Optimize(t.Context(), tbl, planned, tableops.OptimizeOptions{TargetSize: 1 << 30})
			require.NoError(t, err)
			require.Equal(t, tc.rebased, res.Rebases > 0)
			require.NotEmpty(t, res.Moved)
			var compacted string
			for _, m := range res.Moved {
				compacted = m.To
			}
			if !tc.untold {
				s.Compacted(res.Version, movedOf(res))
			}

			fault := store.Inject(faultstore.Fault{Ops: faultstore.OpGet, Pattern: compacted})
			if tc.dvFails {
				dvFault := store.Inject(faultstore.Fault{Ops: faultstore.OpGet, Pattern: "deletion_vector_*"})
				s.mu.Lock()
				err = s.catchUp(t.Context())
				s.mu.Unlock()
				require.ErrorIs(t, err, faultstore.ErrInjected)
				require.Positive(t, dvFault.Fired())
				dvFault.Remove()
			}
			s.mu.Lock()
			err = s.catchUp(t.Context())
			s.mu.Unlock()
			if tc.untold {
				require.ErrorIs(t, err, faultstore.ErrInjected, "untold, the catch-up reads the compacted file")
				return
			}
			require.NoError(t, err)
			require.Zero(t, fault.Fired(), "the compacted file was read")
			require.Equal(t, res.Version, s.state.snap.Version())
			if tc.disk {
				require.NotEmpty(t, s.state.index.redirects, "run entries follow the compaction")
			}
			if tc.restart {
				s = open() // no Close: killed
				require.Zero(t, fault.Fired(), "the open after a kill read the compacted file")
				require.NotEmpty(t, s.state.index.redirects, "the manifest kept the redirects")
			}
			fault.Remove()
			requireIndexMatchesFiles(t, s)

			// Updates and deletes of rows now in the compacted file, then new
			// keys until a full run merge has dropped the redirects.
			for b := 0; b == 0 || tc.disk && len(s.state.index.redirects) > 0; b++ {
				require.Less(t, b, 40, "no full run merge")
				var evs []ev
				for i := range 30 {
					pos++
					e := ev{op: codecs.OpUpdate, id: int32(i * 7), pos: pos, name: "z", offset: int64(pos)}
					switch {
					case b == 0 && i%5 == 0:
						e = ev{op: codecs.OpDelete, id: int32(i*7 + 1), pos: pos, offset: int64(pos)}
					case b > 0:
						e = ev{op: codecs.OpCreate, id: int32(1000 + b*30 + i), pos: pos, name: "n", offset: int64(pos)}
					}
					evs = append(evs, e)
				}
				apply(evs...)
				requireIndexMatchesFiles(t, s)
			}
		})
	}
}

// movedOf is what a compaction moved, as the maintainer hands it to a Sink.
func movedOf(res tableops.OptimizeMetrics) []Moved {
	moves := make([]Moved, len(res.Moved))
	for i, m := range res.Moved {
		moves[i] = Moved{From: m.From, Read: m.Read, Live: m.Live, To: m.To, Offset: m.Offset}
	}
	return moves
}
