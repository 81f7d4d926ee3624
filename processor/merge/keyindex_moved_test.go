package merge

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// movedTags tags compacted files with where their rows came from, as the
// maintainer does (without its row bound: these tables are small).
func movedTags(moves []tableops.Moved) map[string]string {
	out := make([]cdctable.Moved, len(moves))
	for i, m := range moves {
		out[i] = cdctable.Moved{From: m.From, Read: m.Read, Live: m.Live, Offset: m.Offset}
	}
	v, ok := cdctable.MovedTagValue(out)
	if !ok {
		return nil
	}
	return map[string]string{cdctable.MovedTag: v}
}

// TestCatchUpFollowsCompaction: another writer compacts the table and tags
// the file with where its rows came from. The catch-up then follows the
// rows without reading the compacted file (a read of it fails), in memory
// and in runs, also when the compaction was carried past the Sink's own
// commit; an open after a kill, before or after that catch-up, does not
// read the file either; the index equals one built from the files after
// every step, and after the full run merge that drops the redirects.
// Untagged, or when a vector of the tag cannot be read, the catch-up reads
// the file.
func TestCatchUpFollowsCompaction(t *testing.T) {
	for _, tc := range []struct {
		name     string
		disk     bool
		untagged bool // the compaction writes no tag
		rebased  bool // the Sink commits between the compaction's read and its commit
		kill     int  // 1: a kill and an open before the catch-up; 2: after it
		dvFails  bool // the tag's first deletion vector cannot be read
		// late adds a file the compaction takes in that the index has not
		// saved (1: the Sink's own, before a kill) or not seen (2: another
		// writer's): its rows are read from the compacted file, the rest
		// followed.
		late int
	}{
		{name: "memory"},
		{name: "disk", disk: true},
		{name: "disk, rebased", disk: true, rebased: true},
		{name: "memory, rebased", rebased: true},
		{name: "disk, killed before the catch-up", disk: true, kill: 1},
		{name: "disk, killed after the catch-up", disk: true, kill: 2},
		{name: "disk, untagged", disk: true, untagged: true},
		{name: "disk, a vector of the tag unreadable", disk: true, dvFails: true},
		{name: "disk, killed, an input written after the last save", disk: true, kill: 1, late: 1},
		{name: "memory, another writer's input", late: 2},
		{name: "disk, another writer's input", disk: true, late: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newFaultStore()
			dir := t.TempDir()
			logs := &logBuffer{}
			open := func() *Sink {
				opts := Options{Store: store, TableName: "items", Mode: ModeDV, TailFileSize: -1,
					Logger: slog.New(slog.NewTextHandler(logs, nil))}
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
			var lateRows []ev
			for i := range 5 {
				pos++
				lateRows = append(lateRows, ev{op: codecs.OpCreate, id: int32(500 + i), pos: pos, name: "late", offset: int64(pos)})
			}
			switch tc.late {
			case 1:
				apply(lateRows...) // fewer keys than a flush: no manifest
			case 2:
				other, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: ModeDV, TailFileSize: -1})
				require.NoError(t, err)
				for i := range lateRows {
					lateRows[i].part = 1
				}
				_, err = other.Apply(t.Context(), batchOf(lateRows...))
				require.NoError(t, err)
				require.NoError(t, other.Close())
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
			opts := tableops.OptimizeOptions{TargetSize: 1 << 30, MovedTags: movedTags}
			if tc.untagged {
				opts.MovedTags = nil
			}
			res, err := tableops.Optimize(t.Context(), tbl, planned, opts)
			require.NoError(t, err)
			require.Equal(t, tc.rebased, res.Rebases > 0)
			require.NotEmpty(t, res.Moved)
			compacted := res.Moved[0].To

			fault := faultstore.Fault{Ops: faultstore.OpGet, Pattern: compacted}
			if tc.dvFails || tc.late > 0 {
				fault.DelayOnly = true // read, not failed: counted
			}
			if tc.dvFails {
				store.Inject(faultstore.Fault{Ops: faultstore.OpGet, Pattern: "deletion_vector_*", Nth: 1})
			}
			read := store.Inject(fault)
			if tc.kill == 1 {
				s = open() // no Close: killed
			} else {
				s.mu.Lock()
				err = s.catchUp(t.Context())
				s.mu.Unlock()
				if tc.untagged {
					require.ErrorIs(t, err, faultstore.ErrInjected, "untagged, the catch-up reads the compacted file")
					return
				}
				require.NoError(t, err)
				if tc.kill == 2 {
					s = open()
				}
			}
			switch {
			case tc.dvFails:
				require.Positive(t, read.Fired(), "the compacted file is read instead")
				require.Contains(t, logs.String(), "reading a compacted file's keys instead of following its rows")
			case tc.late > 0:
				require.Positive(t, read.Fired(), "the late input's rows are read from the compacted file")
				if tc.disk {
					require.NotEmpty(t, s.state.index.redirects, "the other inputs' run entries follow the compaction")
				}
			default:
				require.Zero(t, read.Fired(), "the compacted file was read")
				if tc.disk {
					require.NotEmpty(t, s.state.index.redirects, "run entries follow the compaction")
				}
			}
			read.Remove()
			require.Equal(t, res.Version, s.state.snap.Version())
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
				if b == 0 && !tc.untagged {
					// The writer has followed the tag: it drops it when it
					// adds the file again with a deletion vector.
					for _, f := range s.Snapshot().Files() {
						if f.Path == compacted {
							require.NotNil(t, f.DeletionVector)
							require.NotContains(t, f.Tags, cdctable.MovedTag)
						}
					}
				}
			}
			require.False(t, strings.Contains(logs.String(), "level=ERROR"), "the log:\n%s", logs)
		})
	}
}

// TestFollowedKeep: a file followed in part keeps the entries of its
// ranges' rows only, bounds included and excluded as [from, to); other
// files keep all of theirs.
func TestFollowedKeep(t *testing.T) {
	f := &followed{ranges: map[string][]rowRange{"part": {{0, 2}, {5, 6}, {9, 12}}}}
	var entries []keyEntry
	for r := range 14 {
		entries = append(entries, keyEntry{row: r})
	}
	rows := func(es []keyEntry) []int {
		var out []int
		for _, e := range es {
			out = append(out, e.row)
		}
		return out
	}
	require.Equal(t, []int{0, 1, 5, 9, 10, 11}, rows(f.keep("part", entries)))
	require.Len(t, f.keep("whole", entries), 14)
	require.Empty(t, f.keep("part", entries[2:5]))
}
