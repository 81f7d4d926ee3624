package merge

import (
	"fmt"
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

// TestTombstonesOfFailedCommit: a batch [insert k, delete k] whose commit
// fails after its tombstones were written, applied again in two batches
// (other batch caps, a restart): the first must insert k, though the failed
// batch's tombstone for k is on disk, and the change feed must show k's
// insert and then its delete (ADR 0022).
func TestTombstonesOfFailedCommit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		created bool // the table exists before the failed batch
		reopen  bool // a restart after the failure; else the sink reloads
	}{
		{"existing table, restart", true, true},
		{"existing table, same sink", true, false},
		{"new table, restart", false, true},
		{"new table, same sink", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newFaultStore()
			s := newCDFSink(t, store, ModeDV, DeleteHard)
			v := int64(0)
			if tc.created {
				_, err := s.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, name: "a", offset: 0}))
				require.NoError(t, err)
				v = 1
			}
			insert := ev{op: opC, id: 2, pos: 2, name: "b", offset: 1}
			del := ev{op: opD, id: 2, pos: 3, offset: 2}

			in := store.Inject(faultstore.Fault{Ops: faultstore.OpPutIfAbsent, Pattern: fmt.Sprintf("_delta_log/%020d.json", v), Nth: 1})
			_, err := s.Apply(t.Context(), batchOf(insert, del))
			require.ErrorIs(t, err, faultstore.ErrInjected)
			require.Equal(t, 1, in.Fired())
			orphans := tombstoneFiles(t, store)
			require.Len(t, orphans, 1, "the failed batch's tombstones are on disk")
			if tc.reopen {
				s = newCDFSink(t, store, ModeDV, DeleteHard)
			}

			res, err := s.Apply(t.Context(), batchOf(insert))
			require.NoError(t, err)
			require.Equal(t, v, res.Version)
			require.Equal(t, int64(1), res.Inserted)
			require.Zero(t, res.SkippedStale, "the failed batch's tombstone does not count")
			require.Contains(t, readItems(t, store), int32(2))
			got, _ := tableChanges(t, store, v)
			require.Equal(t, []string{cr(ChangeInsert, 2, "b", "", 0, "c", false).String()}, changeStrings(got))

			res, err = s.Apply(t.Context(), batchOf(del))
			require.NoError(t, err)
			require.Equal(t, v+1, res.Version)
			require.Equal(t, int64(1), res.Deleted)
			require.NotContains(t, readItems(t, store), int32(2))
			got, _ = tableChanges(t, store, v+1)
			require.Equal(t, []string{cr(ChangeDelete, 2, "b", "", 0, "c", false).String()}, changeStrings(got))

			// The delete's own tombstone guards k; a restart compacts the
			// orphan away.
			s = newCDFSink(t, store, ModeDV, DeleteHard)
			files := tombstoneFiles(t, store)
			require.NotContains(t, files, orphans[0])
			require.Len(t, files, 1)
			require.Contains(t, s.state.tombs.keys, keyOf(t, 2))
			res, err = s.Apply(t.Context(), batchOf(ev{op: opC, id: 2, pos: 2, name: "again", offset: 3}))
			require.NoError(t, err)
			require.Equal(t, int64(1), res.SkippedStale, "a re-sent insert stays deleted")
		})
	}
}

// TestTombstonesOfConcurrentCommits: another sink does not count a batch
// file while its commit is in flight, counts it once the commit lands, and
// takes the file of a commit that lost its version to be an orphan.
func TestTombstonesOfConcurrentCommits(t *testing.T) {
	store := newFaultStore()
	a := newTestSink(t, store, ModeDV, DeleteHard)
	_, err := a.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, offset: 0}, ev{op: opC, id: 2, pos: 2, offset: 1}))
	require.NoError(t, err)
	b := newTestSink(t, store, ModeDV, DeleteHard)

	// A deletes key 1; while its commit of version 1 is in flight, B loads.
	var inFlight []string
	store.Inject(faultstore.Fault{Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/00000000000000000001.json", Nth: 1, DelayOnly: true, Then: func() {
		inFlight = tombstoneFiles(t, store)
		b.mu.Lock()
		defer b.mu.Unlock()
		require.NoError(t, b.reload(t.Context()))
		require.Empty(t, b.state.tombs.keys, "a commit in flight does not count")
		require.Empty(t, b.state.tombs.files)
	}})
	res, err := a.Apply(t.Context(), batchOf(ev{op: opD, id: 1, pos: 3, offset: 2}))
	require.NoError(t, err)
	require.Equal(t, int64(1), res.Version)
	require.Len(t, inFlight, 1)
	require.NoError(t, b.reload(t.Context()))
	require.Contains(t, b.state.tombs.keys, keyOf(t, 1), "the commit landed")

	// A deletes key 2; while its commit of version 2 is in flight, B
	// commits version 2 first, updating key 2. A's commit fails instead of
	// landing at 3, A plans the batch again, and its first file is an
	// orphan.
	store.Inject(faultstore.Fault{Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/00000000000000000002.json", Nth: 1, DelayOnly: true, Then: func() {
		inFlight = tombstoneFiles(t, store)
		_, err := b.Apply(t.Context(), batchOf(ev{op: opC, id: 9, pos: 4, offset: 0, part: 1}, ev{op: opU, id: 2, pos: 4, offset: 1, part: 1}))
		require.NoError(t, err)
	}})
	res, err = a.Apply(t.Context(), batchOf(ev{op: opD, id: 2, pos: 5, offset: 3}))
	require.NoError(t, err)
	require.Equal(t, int64(3), res.Version)
	require.Equal(t, 1, res.Retries)
	var orphan string
	for _, f := range inFlight {
		if strings.HasPrefix(f, cdctable.TombstoneDir+fmt.Sprintf("%020d.", 2)) {
			orphan = f
		}
	}
	require.NotEmpty(t, orphan)
	ci, err := a.table.CommitInfo(t.Context(), 3)
	require.NoError(t, err)
	require.NotEqual(t, strings.TrimPrefix(orphan, cdctable.TombstoneDir), deltalog.OperationValues(ci.Extra).Text(cdctable.TombstonesField))

	require.NoError(t, b.reload(t.Context()))
	require.Equal(t, fileOrphan, b.state.tombs.files[orphan])
	require.Contains(t, b.state.tombs.keys, keyOf(t, 2), "from the file of version 3")
	items := readItems(t, store)
	require.Len(t, items, 1)
	require.Contains(t, items, int32(9))
	n, err := b.state.tombs.compact(t.Context(), store)
	require.NoError(t, err)
	require.Equal(t, 3, n, "the two batch files that count, and the orphan")
	require.False(t, slices.Contains(tombstoneFiles(t, store), orphan))
}

// TestTombstoneJudging: which files a load counts, by their name and the
// commit of their version.
func TestTombstoneJudging(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	entry := func(p int) map[string]tombstone { return map[string]tombstone{"k": {pos: pos(p), at: now.UnixMilli()}} }
	put := func(t *testing.T, store deltalog.Store, name string, keys map[string]tombstone) {
		t.Helper()
		require.NoError(t, putTombstones(t.Context(), store, cdctable.TombstoneDir+name, keys, nil))
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, store deltalog.Store)
		want  codecs.Position // of key k, zero for none
		state fileState       // of the one file, 0 for not judged
	}{
		{"named by its commit", func(t *testing.T, store deltalog.Store) {
			commitTombstones(t, store, 3, entry(7), nil)
		}, pos(7), fileMerged},
		{"its version committed by another commit", func(t *testing.T, store deltalog.Store) {
			name, err := writeTombstones(t.Context(), store, testView(t, store, 2), entry(7), nil)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(name, fmt.Sprintf("%020d.", 3)), name)
			landCommit(t, store, 3, "")
		}, codecs.Position{}, fileOrphan},
		{"above the snapshot: a commit in flight", func(t *testing.T, store deltalog.Store) {
			_, err := writeTombstones(t.Context(), store, testView(t, store, 5), entry(7), nil)
			require.NoError(t, err)
		}, codecs.Position{}, 0},
		{"its commit removed by log cleanup", func(t *testing.T, store deltalog.Store) {
			put(t, store, fmt.Sprintf("%020d.x.json", 2), entry(7))
		}, pos(7), fileMerged},
		{"from before commits named their files", func(t *testing.T, store deltalog.Store) {
			put(t, store, fmt.Sprintf("%020d-x.json", 3), entry(7))
			landCommit(t, store, 3, "")
		}, pos(7), fileMerged},
		{"compacted", func(t *testing.T, store deltalog.Store) {
			put(t, store, cdctable.TombstoneCompactedPrefix+"x.json", entry(7))
		}, pos(7), fileMerged},
		{"a floor from before the table existed", func(t *testing.T, store deltalog.Store) {
			f := pos(9)
			require.NoError(t, writeFloor(t.Context(), store, &f))
		}, codecs.Position{}, fileMerged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newMemStore()
			tc.setup(t, store)
			files := tombstoneFiles(t, store)
			require.Len(t, files, 1)
			got, err := loadTombstones(t.Context(), store, testView(t, store, 5), now, time.Hour)
			require.NoError(t, err)
			require.Equal(t, tc.want, got.keys["k"].pos)
			require.Equal(t, tc.state, got.files[files[0]])
		})
	}
}

// TestTombstoneFileNames: which files count as they are and which wait for
// the commit of their version.
func TestTombstoneFileNames(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int64
		batch   bool
	}{
		{"00000000000000000007.3f2a9c1e-0000-4000-8000-000000000000.json", 7, true},
		{"00000000000000000007-3f2a9c1e-0000-4000-8000-000000000000.json", 0, false},
		{"compacted-3f2a9c1e-0000-4000-8000-000000000000.json", 0, false},
		{"floor-3f2a9c1e-0000-4000-8000-000000000000.json", 0, false},
		{"00000000000000000007.json", 0, false},
		{"0000000000000000000x.y.json", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := cdctable.TombstoneBatchVersion(tc.name)
			require.Equal(t, tc.batch, ok)
			require.Equal(t, tc.version, v)
		})
	}
}

// keyOf encodes the key of the items table with id.
func keyOf(t *testing.T, id int32) string {
	t.Helper()
	k, err := cdctable.AppendKey(nil, []any{id})
	require.NoError(t, err)
	return string(k)
}
