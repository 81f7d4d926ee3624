package merge

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestSinkRebase: a writer whose table another writer committed to since
// its plan commits that plan again at the next version when the winners
// touched nothing it read, and plans the batch again when they did. a owns
// partition 0, b partition 1; the table starts with keys 1–4, two of each
// partition, in one file tagged with both (a writer that owned both wrote
// it).
func TestSinkRebase(t *testing.T) {
	opD, opU, opC := codecs.OpDelete, codecs.OpUpdate, codecs.OpCreate
	p0, p1 := cdctable.TopicPartition{Topic: itemsTopic, Partition: 0}, cdctable.TopicPartition{Topic: itemsTopic, Partition: 1}
	owned := func(b Batch, tp cdctable.TopicPartition) Batch { b.Owned = []cdctable.TopicPartition{tp}; return b }
	for _, tc := range []struct {
		name    string
		mode    Mode
		winner  []ev // b's batch, committed after a planned
		batch   []ev // a's batch
		rebases int
		retries int
		want    map[int32]string // id → name after both
	}{
		{
			name:   "disjoint inserts",
			mode:   ModeDV,
			winner: []ev{{op: opC, id: 10, pos: 10, name: "b", part: 1, offset: 2}},
			batch:  []ev{{op: opC, id: 5, pos: 11, name: "a", offset: 2}},
			want:   map[int32]string{1: "1", 2: "2", 3: "3", 4: "4", 5: "a", 10: "b"}, rebases: 1,
		},
		{
			name:   "deletion vectors on one file",
			mode:   ModeDV,
			winner: []ev{{op: opU, id: 3, pos: 10, name: "b", part: 1, offset: 2}},
			batch:  []ev{{op: opU, id: 1, pos: 11, name: "a", offset: 2}, {op: opD, id: 2, pos: 12, offset: 3}},
			want:   map[int32]string{1: "a", 3: "b", 4: "4"}, rebases: 1,
		},
		{
			name:   "copy-on-write of one file",
			mode:   ModeCoW,
			winner: []ev{{op: opU, id: 3, pos: 10, name: "b", part: 1, offset: 2}},
			batch:  []ev{{op: opU, id: 1, pos: 11, name: "a", offset: 2}},
			want:   map[int32]string{1: "a", 2: "2", 3: "b", 4: "4"}, retries: 1,
		},
		{
			name:   "the same key",
			mode:   ModeDV,
			winner: []ev{{op: opU, id: 1, pos: 12, name: "b", part: 1, offset: 2}},
			batch:  []ev{{op: opU, id: 1, pos: 11, name: "a", offset: 2}, {op: opC, id: 5, pos: 13, name: "a", offset: 3}},
			want:   map[int32]string{1: "b", 2: "2", 3: "3", 4: "4", 5: "a"}, retries: 1,
		},
		{
			name:   "a key the winner inserted",
			mode:   ModeDV,
			winner: []ev{{op: opC, id: 7, pos: 12, name: "b", part: 1, offset: 2}},
			batch:  []ev{{op: opC, id: 7, pos: 11, name: "a", offset: 2}, {op: opC, id: 5, pos: 13, name: "a", offset: 3}},
			want:   map[int32]string{1: "1", 2: "2", 3: "3", 4: "4", 5: "a", 7: "b"}, retries: 1,
		},
		{
			name: "a key the winner inserted and deleted",
			mode: ModeDV,
			winner: []ev{{op: opC, id: 7, pos: 10, name: "b", part: 1, offset: 2},
				{op: opD, id: 7, pos: 12, part: 1, offset: 3}},
			batch: []ev{{op: opC, id: 7, pos: 11, name: "a", offset: 2}},
			want:  map[int32]string{1: "1", 2: "2", 3: "3", 4: "4"}, retries: 1,
		},
		{
			name:   "offsets of the batch's partition",
			mode:   ModeDV,
			winner: []ev{{op: opC, id: 8, pos: 10, name: "b", offset: 2}},
			batch:  []ev{{op: opC, id: 9, pos: 11, name: "a", offset: 3}},
			want:   map[int32]string{1: "1", 2: "2", 3: "3", 4: "4", 8: "b", 9: "a"}, retries: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newMemStore()
			first := newTestSink(t, store, tc.mode, DeleteHard)
			_, err := first.Apply(t.Context(), batchOf(
				ev{op: opC, id: 1, pos: 1, name: "1", offset: 0}, ev{op: opC, id: 2, pos: 2, name: "2", offset: 1},
				ev{op: opC, id: 3, pos: 3, name: "3", part: 1, offset: 0}, ev{op: opC, id: 4, pos: 4, name: "4", part: 1, offset: 1}))
			require.NoError(t, err)
			a := newTestSink(t, store, tc.mode, DeleteHard)
			b := newTestSink(t, store, tc.mode, DeleteHard)
			res, err := b.Apply(t.Context(), owned(batchOf(tc.winner...), p1))
			require.NoError(t, err)
			require.True(t, res.Committed)
			res, err = a.Apply(t.Context(), owned(batchOf(tc.batch...), p0))
			require.NoError(t, err)
			require.Equal(t, tc.rebases, res.Rebases, "rebases")
			require.Equal(t, tc.retries, res.Retries, "re-plans")
			require.Equal(t, int64(2), res.Version)
			require.Equal(t, tc.want, itemNames(t, store))
			// Either writer goes on from the table as it is.
			for _, s := range []*Sink{a, b} {
				_, err = s.Apply(t.Context(), batchOf(ev{op: opC, id: 20, pos: 20, name: "x", offset: 9}))
				require.NoError(t, err)
			}
		})
	}
}

// TestSinkRebaseTombstones: a rebased batch's tombstones count: their file
// is written again under the version the batch lands at, and the first one,
// named after the version another writer took, is removed.
func TestSinkRebaseTombstones(t *testing.T) {
	store := newMemStore()
	a := newTestSink(t, store, ModeDV, DeleteHard)
	_, err := a.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, offset: 0}, ev{op: opC, id: 2, pos: 2, offset: 1}))
	require.NoError(t, err)
	b := newTestSink(t, store, ModeDV, DeleteHard)
	_, err = b.Apply(t.Context(), batchOf(ev{op: opC, id: 9, pos: 3, part: 1, offset: 0}))
	require.NoError(t, err)
	res, err := a.Apply(t.Context(), batchOf(ev{op: opD, id: 2, pos: 4, offset: 2}))
	require.NoError(t, err)
	require.Equal(t, 1, res.Rebases)
	require.Zero(t, res.Retries)
	require.Equal(t, int64(2), res.Version)

	files := tombstoneFiles(t, store)
	require.Len(t, files, 1, "the file named after version 1 is gone")
	require.True(t, strings.HasPrefix(files[0], cdctable.TombstoneDir+"00000000000000000002."), files[0])
	ci, err := a.table.CommitInfo(t.Context(), 2)
	require.NoError(t, err)
	require.Equal(t, strings.TrimPrefix(files[0], cdctable.TombstoneDir), deltalog.OperationValues(ci.Extra).Text(cdctable.TombstonesField))

	// An older event of the deleted key stays out, in a writer that loads
	// the table now.
	c := newTestSink(t, store, ModeDV, DeleteHard)
	res, err = c.Apply(t.Context(), batchOf(ev{op: opU, id: 2, pos: 3, offset: 3}))
	require.NoError(t, err)
	require.Equal(t, int64(1), res.SkippedStale)
	require.NotContains(t, readItems(t, store), int32(2))
}
