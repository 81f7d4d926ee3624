package merge

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// tombstoneFiles lists the tombstone files of store.
func tombstoneFiles(t *testing.T, store deltalog.Store) []string {
	t.Helper()
	var out []string
	for info, err := range store.List(t.Context(), cdctable.TombstoneDir, "") {
		require.NoError(t, err)
		out = append(out, info.Path)
	}
	return out
}

// testView is a view of store's log at version.
func testView(t testing.TB, store deltalog.Store, version int64) tombstoneView {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	return tombstoneView{table: tbl, version: version}
}

// commitTombstones writes a batch's tombstones for version as the sink does,
// and then a stand-in commit of version naming the file: a commit file with
// only its commitInfo, which is all that judging the file reads.
func commitTombstones(t testing.TB, store deltalog.Store, version int64, keys map[string]tombstone, floor *codecs.Position) string {
	t.Helper()
	name, err := writeTombstones(t.Context(), store, testView(t, store, version-1), keys, floor)
	require.NoError(t, err)
	landCommit(t, store, version, name)
	return name
}

// landCommit writes a stand-in commit of version that names the tombstone
// file name ("" for none).
func landCommit(t testing.TB, store deltalog.Store, version int64, name string) {
	t.Helper()
	ci := `{"commitInfo":{"operation":"MERGE"}}`
	if name != "" {
		ci = `{"commitInfo":{"operation":"MERGE","` + cdctable.TombstonesField + `":"` + name + `"}}`
	}
	require.NoError(t, store.PutIfAbsent(t.Context(), fmt.Sprintf("_delta_log/%020d.json", version), []byte(ci+"\n")))
}

// everything is a view in which every committed batch file counts.
func everything(t testing.TB, store deltalog.Store) tombstoneView {
	return testView(t, store, math.MaxInt64)
}

// writeTombstoneBatches writes n files of tombstones, one per version, with
// overlapping keys; entries of the first half are recorded at old, the
// rest at now. Version 3 also writes a floor.
func writeTombstoneBatches(t *testing.T, store deltalog.Store, n int, old, now time.Time) {
	t.Helper()
	for v := range n {
		at := now
		if v < n/2 {
			at = old
		}
		keys := map[string]tombstone{}
		for k := range 5 {
			keys[fmt.Sprintf("key-%d", (v*3+k)%20)] = tombstone{pos: pos(100 + v*10 + k), at: at.UnixMilli()}
		}
		var floor *codecs.Position
		if v == 3 {
			f := pos(42)
			floor = &f
		}
		// Fewer than tombstoneCompactFiles: the write path does not compact.
		commitTombstones(t, store, int64(v), keys, floor)
	}
}

func TestTombstoneCompaction(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	old := now.Add(-48 * time.Hour)
	for _, tc := range []struct {
		name      string
		retention time.Duration
		later     time.Duration // load this long after the writes
		files     int
		wantKeys  bool
	}{
		{"nothing expired", 7 * 24 * time.Hour, 0, 10, true},
		{"old half expired", 24 * time.Hour, 0, 10, true},
		{"all expired but the floor", time.Hour, 48 * time.Hour, 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newMemStore()
			writeTombstoneBatches(t, store, tc.files, old, now)
			now := now.Add(tc.later)
			want, err := loadTombstones(t.Context(), store, everything(t, store), now, tc.retention)
			require.NoError(t, err)
			require.Len(t, tombstoneFiles(t, store), tc.files)
			require.Equal(t, tc.wantKeys, len(want.keys) > 0)

			got, err := loadTombstones(t.Context(), store, everything(t, store), now, tc.retention)
			require.NoError(t, err)
			n, err := got.compact(t.Context(), store)
			require.NoError(t, err)
			require.Equal(t, tc.files, n)
			files := tombstoneFiles(t, store)
			require.Len(t, files, 1, "one compacted file (the floor never expires)")
			require.Equal(t, map[string]fileState{files[0]: fileMerged}, got.files)

			back, err := loadTombstones(t.Context(), store, everything(t, store), now, tc.retention)
			require.NoError(t, err)
			require.Equal(t, want.keys, back.keys)
			require.Equal(t, want.floor, back.floor)
			require.Equal(t, pos(42), back.floor)
			// A later reader with a longer retention sees the expired
			// entries gone: compaction dropped them for good.
			all, err := loadTombstones(t.Context(), store, everything(t, store), now, 1000*time.Hour)
			require.NoError(t, err)
			require.Equal(t, want.keys, all.keys)
		})
	}
}

// TestTombstoneCompactionCrash: a crash after the compacted file is written
// and before (all) the old files are deleted leaves both; loading merges to
// the same tombstones, and the next compaction cleans up.
func TestTombstoneCompactionCrash(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	for _, failAt := range []int{1, 4} {
		t.Run(fmt.Sprintf("delete %d fails", failAt), func(t *testing.T) {
			store := newFaultStore()
			writeTombstoneBatches(t, store, 8, now, now)
			want, err := loadTombstones(t.Context(), store, everything(t, store), now, time.Hour)
			require.NoError(t, err)

			store.Inject(faultstore.Fault{Ops: faultstore.OpDelete, Pattern: cdctable.TombstoneDir + "*", Nth: failAt})
			got, err := loadTombstones(t.Context(), store, everything(t, store), now, time.Hour)
			require.NoError(t, err)
			n, err := got.compact(t.Context(), store)
			require.ErrorIs(t, err, faultstore.ErrInjected)
			require.Equal(t, 7, n)
			files := tombstoneFiles(t, store)
			require.Len(t, files, 2, "the compacted file and the one not deleted")
			require.Len(t, got.files, 2)

			back, err := loadTombstones(t.Context(), store, everything(t, store), now, time.Hour)
			require.NoError(t, err)
			require.Equal(t, want.keys, back.keys)
			require.Equal(t, want.floor, back.floor)

			n, err = back.compact(t.Context(), store)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			require.Len(t, tombstoneFiles(t, store), 1)
			again, err := loadTombstones(t.Context(), store, everything(t, store), now, time.Hour)
			require.NoError(t, err)
			require.Equal(t, want.keys, again.keys)
		})
	}
}

// TestTombstoneReaderSurvivesCompaction: a reader that listed the old files
// before a concurrent compaction deleted them finds the compacted file.
func TestTombstoneReaderSurvivesCompaction(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	store := newMemStore()
	writeTombstoneBatches(t, store, 6, now, now)
	want, err := loadTombstones(t.Context(), store, everything(t, store), now, time.Hour)
	require.NoError(t, err)

	// The reader has read the first two files only, as if it listed them
	// all, then the compaction ran before it got to the third.
	files := tombstoneFiles(t, store)
	reader := newTombstones()
	for _, f := range files[:2] {
		require.NoError(t, reader.readFile(t.Context(), store, f, 0, nil))
		reader.files[f] = fileMerged
	}
	compactor, err := loadTombstones(t.Context(), store, everything(t, store), now, time.Hour)
	require.NoError(t, err)
	_, err = compactor.compact(t.Context(), store)
	require.NoError(t, err)
	err = reader.readFile(t.Context(), store, files[2], 0, nil)
	require.ErrorIs(t, err, deltalog.ErrNotExist)

	require.NoError(t, reader.catchUp(t.Context(), store, everything(t, store), 0, nil))
	require.Equal(t, want.keys, reader.keys)
	require.Equal(t, want.floor, reader.floor)
	require.Equal(t, compactor.files, reader.files, "the reader forgets the deleted files")
}

// TestTombstoneCompactionOnWrite: once there are more than
// tombstoneCompactFiles files, a later write compacts them, all but its own:
// its commit has not landed yet.
func TestTombstoneCompactionOnWrite(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	store := newMemStore()
	want := newTombstones()
	compacted := false
	for v := 1; v < 2000 && !compacted; v++ {
		k, ts := fmt.Sprintf("k%d", v%7), tombstone{pos: pos(v), at: now.UnixMilli()}
		before := len(tombstoneFiles(t, store))
		name := commitTombstones(t, store, int64(v), map[string]tombstone{k: ts}, nil)
		want.merge(k, ts)
		files := tombstoneFiles(t, store)
		if len(files) == before+1 {
			continue
		}
		// The write made before+1 files; compaction needs more than the threshold.
		require.Greater(t, before+1, tombstoneCompactFiles, "compacted too early")
		require.Len(t, files, 2)
		require.True(t, strings.HasPrefix(files[1], cdctable.TombstoneDir+cdctable.TombstoneCompactedPrefix), files[1])
		require.Equal(t, cdctable.TombstoneDir+name, files[0], "the file of the commit in flight stays")
		compacted = true
	}
	require.True(t, compacted)
	back, err := loadTombstones(t.Context(), store, everything(t, store), now, time.Hour)
	require.NoError(t, err)
	require.Equal(t, want.keys, back.keys)
}

// TestSinkCompactsTombstonesOnLoad: opening a sink merges the files left by
// earlier batches into one.
func TestSinkCompactsTombstonesOnLoad(t *testing.T) {
	store := newMemStore()
	s := newTestSink(t, store, ModeDV, DeleteHard)
	off := int64(0)
	for i := range 5 {
		_, err := s.Apply(t.Context(), batchOf(
			ev{op: opC, id: int32(i), pos: 2*i + 1, offset: off},
			ev{op: opD, id: int32(i), pos: 2*i + 2, offset: off + 1}))
		require.NoError(t, err)
		off += 2
	}
	require.Len(t, tombstoneFiles(t, store), 5)
	s2 := newTestSink(t, store, ModeDV, DeleteHard)
	require.Len(t, tombstoneFiles(t, store), 1)
	require.Len(t, s2.state.tombs.keys, 5)
	res, err := s2.Apply(t.Context(), batchOf(ev{op: opU, id: 3, pos: 7, name: "late", offset: off}))
	require.NoError(t, err)
	require.Equal(t, int64(1), res.SkippedStale, "the compacted tombstone still guards key 3")
	require.True(t, slices.IsSorted(tombstoneFiles(t, store)))
}
