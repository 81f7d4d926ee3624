package merge

import (
	"bytes"
	"log/slog"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFoldChains applies chains of events of one key inside one batch (ADR
// 0025): an unavailable column takes the value of the latest earlier image,
// in the batch or stored, and the table must be what applying the events
// one batch each gives.
func TestFoldChains(t *testing.T) {
	type want struct {
		name, notes string
		deleted     bool
	}
	cases := []struct {
		name string
		// stored is applied first, as its own batch; chain is one batch.
		stored, chain []ev
		soft          bool
		want          map[int32]want
		unresolved    int64
		changes       []string // the chain batch's change data feed, as "kind id name notes"
	}{
		{
			name: "snapshot then an update without the LOB (the reported bug)",
			chain: []ev{
				{op: opR, id: 1, pos: 1, name: "a", notes: "lob", offset: 0},
				{op: opU, id: 1, pos: 2, name: "a2", unavailable: true, offset: 1},
			},
			want:    map[int32]want{1: {"a2", "lob", false}},
			changes: []string{"insert 1 a2 lob"},
		},
		{
			name:   "two updates without the LOB over a stored row",
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "lob", offset: 0}},
			chain: []ev{
				{op: opU, id: 1, pos: 2, name: "a2", unavailable: true, offset: 1},
				{op: opU, id: 1, pos: 3, name: "a3", unavailable: true, offset: 2},
			},
			want:    map[int32]want{1: {"a3", "lob", false}},
			changes: []string{"update_preimage 1 a lob", "update_postimage 1 a3 lob"},
		},
		{
			name:   "an update with the LOB, then one without, over a stored row",
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "old", offset: 0}},
			chain: []ev{
				{op: opU, id: 1, pos: 2, name: "a2", notes: "new", offset: 1},
				{op: opU, id: 1, pos: 3, name: "a3", unavailable: true, offset: 2},
			},
			want:    map[int32]want{1: {"a3", "new", false}},
			changes: []string{"update_preimage 1 a old", "update_postimage 1 a3 new"},
		},
		{
			name:   "the LOB reaches back over two images without it",
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "old", offset: 0}},
			chain: []ev{
				{op: opU, id: 1, pos: 2, name: "a2", notes: "n2", offset: 1},
				{op: opU, id: 1, pos: 3, name: "a3", unavailable: true, offset: 2},
				{op: opU, id: 1, pos: 4, name: "a4", unavailable: true, offset: 3},
			},
			want:    map[int32]want{1: {"a4", "n2", false}},
			changes: []string{"update_preimage 1 a old", "update_postimage 1 a4 n2"},
		},
		{
			name:   "a full image cuts the chain: the LOB comes from the latest one",
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "old", offset: 0}},
			chain: []ev{
				{op: opU, id: 1, pos: 2, name: "a2", notes: "n2", offset: 1},
				{op: opU, id: 1, pos: 3, name: "a3", unavailable: true, offset: 2},
				{op: opU, id: 1, pos: 4, name: "a4", notes: "n4", offset: 3},
				{op: opU, id: 1, pos: 5, name: "a5", unavailable: true, offset: 4},
				{op: opU, id: 1, pos: 6, name: "a6", notes: "n6", offset: 5},
				{op: opU, id: 1, pos: 7, name: "a7", unavailable: true, offset: 6},
			},
			want:    map[int32]want{1: {"a7", "n6", false}},
			changes: []string{"update_preimage 1 a old", "update_postimage 1 a7 n6"},
		},
		{
			name: "events without the LOB before any image are unresolved even when a later image is whole",
			chain: []ev{
				{op: opU, id: 1, pos: 2, name: "a2", unavailable: true, offset: 1},
				{op: opU, id: 1, pos: 3, name: "a3", notes: "n3", offset: 2},
			},
			want:       map[int32]want{1: {"a3", "n3", false}},
			unresolved: 1,
			changes:    []string{"insert 1 a3 n3"},
		},
		{
			name:   "insert, delete, insert: the last insert starts the chain",
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "first", offset: 0}},
			chain: []ev{
				{op: opD, id: 1, pos: 2, name: "a", notes: "first", offset: 1},
				{op: opC, id: 1, pos: 3, name: "b", notes: "second", offset: 2},
				{op: opU, id: 1, pos: 4, name: "b2", unavailable: true, offset: 3},
			},
			want:    map[int32]want{1: {"b2", "second", false}},
			changes: []string{"update_preimage 1 a first", "update_postimage 1 b2 second"},
		},
		{
			name:   "a delete ends the chain: nothing to take the LOB from",
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "first", offset: 0}},
			chain: []ev{
				{op: opD, id: 1, pos: 2, name: "a", notes: "first", offset: 1},
				{op: opU, id: 1, pos: 3, name: "ghost", unavailable: true, offset: 2},
			},
			want:       map[int32]want{1: {"ghost", "", false}},
			unresolved: 1,
			changes:    []string{"update_preimage 1 a first", "update_postimage 1 ghost "},
		},
		{
			name:   "an update, then a key change: the new key's insert is its first image",
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "lob", offset: 0}},
			chain: []ev{
				{op: opU, id: 1, pos: 2, name: "a1", unavailable: true, offset: 1},
				{op: opD, id: 1, pos: 3, name: "a1", notes: "lob", offset: 2},
				{op: opC, id: 2, pos: 3, name: "a1", notes: "lob", offset: 3}, // the same change, serial 2 in Debezium
				{op: opU, id: 2, pos: 4, name: "a2", unavailable: true, offset: 4},
			},
			want:    map[int32]want{2: {"a2", "lob", false}},
			changes: []string{"delete 1 a lob", "insert 2 a2 lob"},
		},
		{
			name:   "a snapshot after streaming events is the latest image",
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "old", offset: 0}},
			chain: []ev{
				{op: opU, id: 1, pos: 2, name: "a2", notes: "mid", offset: 1},
				{op: opR, id: 1, pos: 3, name: "a2", notes: "snap", offset: 2},
				{op: opU, id: 1, pos: 4, name: "a3", unavailable: true, offset: 3},
			},
			want:    map[int32]want{1: {"a3", "snap", false}},
			changes: []string{"update_preimage 1 a old", "update_postimage 1 a3 snap"},
		},
		{
			name:   "a truncate mid-batch: the chain starts after it",
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "gone", offset: 0}},
			chain: []ev{
				{op: opU, id: 1, pos: 2, name: "a2", unavailable: true, offset: 1},
				{op: opT, pos: 3, offset: 2},
				{op: opC, id: 1, pos: 4, name: "b", notes: "new", offset: 3},
				{op: opU, id: 1, pos: 5, name: "b2", unavailable: true, offset: 4},
			},
			want:    map[int32]want{1: {"b2", "new", false}},
			changes: []string{"delete 1 a gone", "insert 1 b2 new"},
		},
		{
			name: "an older event after a delete is stale, also in the batch",
			chain: []ev{
				{op: opC, id: 1, pos: 1, name: "a", notes: "lob", offset: 0},
				{op: opD, id: 1, pos: 3, name: "a", notes: "lob", offset: 1},
				{op: opU, id: 1, pos: 2, name: "late", unavailable: true, offset: 2}, // a re-delivery
			},
			want: map[int32]want{},
		},
		{
			name:   "duplicates of an update fill like the update",
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "lob", offset: 0}},
			chain: []ev{
				{op: opU, id: 1, pos: 2, name: "a2", unavailable: true, offset: 1},
				{op: opU, id: 1, pos: 2, name: "a2", unavailable: true, offset: 0, part: 1},
			},
			want:    map[int32]want{1: {"a2", "lob", false}},
			changes: []string{"update_preimage 1 a lob", "update_postimage 1 a2 lob"},
		},
		{
			name:   "soft delete, then a re-insert and an update without the LOB",
			soft:   true,
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "first", offset: 0}},
			chain: []ev{
				{op: opD, id: 1, pos: 2, name: "a", notes: "first", offset: 1},
				{op: opC, id: 1, pos: 3, name: "b", notes: "second", offset: 2},
				{op: opU, id: 1, pos: 4, name: "b2", unavailable: true, offset: 3},
			},
			want:    map[int32]want{1: {"b2", "second", false}},
			changes: []string{"update_preimage 1 a first", "update_postimage 1 b2 second"},
		},
		{
			name:   "a soft-deleted row is no earlier image",
			soft:   true,
			stored: []ev{{op: opC, id: 1, pos: 1, name: "a", notes: "first", offset: 0}, {op: opD, id: 1, pos: 2, name: "a", notes: "first", offset: 1}},
			chain: []ev{
				{op: opU, id: 1, pos: 3, name: "ghost", unavailable: true, offset: 2},
				{op: opU, id: 1, pos: 4, name: "ghost2", unavailable: true, offset: 3},
			},
			want:       map[int32]want{1: {"ghost2", "", false}},
			unresolved: 1,
			changes:    []string{"update_preimage 1 a first", "update_postimage 1 ghost2 "},
		},
	}
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		for _, tc := range cases {
			t.Run(string(mode)+"/"+tc.name, func(t *testing.T) {
				del := DeleteHard
				if tc.soft {
					del = DeleteSoft
				}
				for _, split := range []bool{false, true} {
					store := newMemStore()
					s := newCDFSink(t, store, mode, del)
					if len(tc.stored) > 0 {
						_, err := s.Apply(t.Context(), batchOf(tc.stored...))
						require.NoError(t, err)
					}
					batches := [][]ev{tc.chain}
					if split { // one event per batch: what the fold must equal
						batches = nil
						for _, e := range tc.chain {
							batches = append(batches, []ev{e})
						}
					}
					var unresolved int64
					for _, b := range batches {
						res, err := s.Apply(t.Context(), batchOf(b...))
						require.NoError(t, err)
						unresolved += res.UnavailableUnresolved
					}
					got := map[int32]want{}
					for id, it := range readItems(t, store) {
						if !it.deleted || !tc.soft {
							got[id] = want{it.name, it.notes, it.deleted}
						}
					}
					require.Equal(t, tc.want, got, "split %t", split)
					require.Equal(t, tc.unresolved, unresolved, "split %t: unresolved", split)
					if !split {
						rows, _ := tableChanges(t, store, s.Version())
						require.ElementsMatch(t, tc.changes, changeLines(rows))
					}
				}
			})
		}
	}
}

// TestUnresolvedIsLogged checks the report of an unavailable column with
// no earlier image: counted, and logged with the key and coordinates.
func TestUnresolvedIsLogged(t *testing.T) {
	var buf bytes.Buffer
	s, err := Open(t.Context(), Options{Store: newMemStore(), TableName: "items",
		Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	require.NoError(t, err)
	res, err := s.Apply(t.Context(), batchOf(ev{op: opU, id: 7, pos: 3, name: "x", unavailable: true, part: 2, offset: 41}))
	require.NoError(t, err)
	require.Equal(t, int64(1), res.UnavailableUnresolved)
	require.Equal(t, "", readItems(t, s.opts.Store)[7].notes)
	log := buf.String()
	for _, want := range []string{"level=WARN", "table=items", `key="id=7"`, "topic=sales.dbo.items", "partition=2", "offset=41", "columns=[notes]"} {
		require.Contains(t, log, want)
	}
}

// TestTruncateKeepsLaterRows: a truncate removes the rows at or below its
// position only; rows later changes wrote, whose events came first from
// another partition, stay, and only removed rows are change data deletes.
func TestTruncateKeepsLaterRows(t *testing.T) {
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		t.Run(string(mode), func(t *testing.T) {
			store := newMemStore()
			s := newCDFSink(t, store, mode, DeleteHard)
			_, err := s.Apply(t.Context(), batchOf(
				ev{op: opC, id: 1, pos: 1, name: "before", notes: "n", offset: 0},
				ev{op: opC, id: 2, pos: 5, name: "after", notes: "n", offset: 1},
			))
			require.NoError(t, err)
			res, err := s.Apply(t.Context(), batchOf(
				ev{op: opT, pos: 3, part: 1, offset: 0},
				ev{op: opU, id: 2, pos: 6, name: "after2", unavailable: true, offset: 2},
			))
			require.NoError(t, err)
			require.Equal(t, int64(1), res.Truncates)
			got := readItems(t, store)
			require.Len(t, got, 1)
			require.Equal(t, "after2", got[2].name)
			require.Equal(t, "n", got[2].notes, "the stored row is still the earlier image")
			rows, _ := tableChanges(t, store, s.Version())
			require.ElementsMatch(t, []string{"delete 1 before n", "update_preimage 2 after n", "update_postimage 2 after2 n"}, changeLines(rows))

			// A fresh sink (index rebuilt, floor read back) agrees.
			s2 := newCDFSink(t, store, mode, DeleteHard)
			res, err = s2.Apply(t.Context(), batchOf(ev{op: opU, id: 1, pos: 2, name: "late", offset: 3}))
			require.NoError(t, err)
			require.Equal(t, int64(1), res.SkippedStale)
		})
	}
}

// TestTruncateBeforeTheTable: a truncate that comes before any event with a
// schema commits nothing, but still holds back older events.
func TestTruncateBeforeTheTable(t *testing.T) {
	store := newMemStore()
	s := newTestSink(t, store, ModeDV, DeleteHard)
	res, err := s.Apply(t.Context(), batchOf(ev{op: opT, pos: 5, part: 1, offset: 0}))
	require.NoError(t, err)
	require.False(t, res.Committed)
	res, err = s.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 3, name: "old", offset: 0}, ev{op: opC, id: 2, pos: 6, name: "new", offset: 1}))
	require.NoError(t, err)
	require.Equal(t, int64(1), res.SkippedStale)
	got := readItems(t, store)
	require.Len(t, got, 1)
	require.Equal(t, "new", got[2].name)
}

// changeLines renders change rows as "kind id name notes".
func changeLines(rows []changeRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.kind + " " + strconv.Itoa(int(r.id)) + " " + r.name + " " + r.notes
	}
	return out
}
