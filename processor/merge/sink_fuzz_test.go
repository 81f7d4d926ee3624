package merge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// FuzzTombstoneFile feeds arbitrary bytes to the tombstone file reader: it
// must fail cleanly or load entries that round-trip through a rewrite.
func FuzzTombstoneFile(f *testing.F) {
	f.Add([]byte(`{"k":"AQI=","p":"` + pos(3).Hex() + `","t":1700000000000}` + "\n"))
	f.Add([]byte(`{"p":"` + pos(9).Hex() + `","t":0,"f":true}` + "\n"))
	f.Add([]byte(`{"k":"AQI=","p":"zz","t":1}`))
	f.Add([]byte("not json\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		store := newMemStore()
		require.NoError(t, store.Put(t.Context(), cdctable.TombstoneDir+"00000000000000000001-x.json", data))
		now := time.UnixMilli(1_700_000_000_000)
		ts, err := loadTombstones(t.Context(), store, everything(t, store), now, 100*365*24*time.Hour)
		if err != nil {
			return
		}
		var floor *codecs.Position
		if ts.floor != (codecs.Position{}) {
			floor = &ts.floor
		}
		again := newMemStore()
		commitTombstones(t, again, 1, ts.keys, floor)
		back, err := loadTombstones(t.Context(), again, everything(t, again), now, 100*365*24*time.Hour)
		require.NoError(t, err)
		require.Equal(t, ts.floor, back.floor)
		require.Equal(t, ts.keys, back.keys)
	})
}

func TestTombstoneRetention(t *testing.T) {
	store := newMemStore()
	now := time.UnixMilli(1_700_000_000_000)
	keys := map[string]tombstone{
		"old": {pos: pos(1), at: now.Add(-48 * time.Hour).UnixMilli()},
		"new": {pos: pos(2), at: now.Add(-time.Hour).UnixMilli()},
	}
	floor := pos(1)
	commitTombstones(t, store, 3, keys, &floor)
	ts, err := loadTombstones(t.Context(), store, everything(t, store), now, 24*time.Hour)
	require.NoError(t, err)
	require.Equal(t, map[string]tombstone{"new": keys["new"]}, ts.keys)
	require.Equal(t, floor, ts.floor, "a truncate does not expire")
	require.True(t, ts.obsolete("new", pos(2)))
	require.False(t, ts.obsolete("new", pos(3)))
	require.True(t, ts.obsolete("other", pos(1)))
	require.False(t, ts.obsolete("old", pos(2)), "expired tombstones no longer guard")
}

func TestDedup(t *testing.T) {
	recs := []Record{
		ev{op: opC, id: 1, pos: 1, offset: 0}.record(),
		ev{op: opU, id: 1, pos: 2, offset: 1}.record(),
		ev{op: opU, id: 1, pos: 2, offset: 5, part: 1}.record(), // same change re-delivered on another partition
		ev{op: opC, id: 2, pos: 3, offset: 2}.record(),
		ev{op: opT, pos: 4, offset: 3}.record(),
		ev{op: opC, id: 3, pos: 5, offset: 4}.record(),
		ev{op: opD, id: 3, pos: 6, offset: 6}.record(),
	}
	keys := []string{"1", "1", "1", "2", "", "3", "3"}
	d := dedup(recs, keys)
	require.NotNil(t, d.truncate)
	require.Equal(t, int64(3), d.truncate.Offset)
	require.Len(t, d.chains, 1)
	require.Equal(t, []int64{4, 6}, offsets(d.chains[0].events))
	require.Equal(t, int64(5), d.superseded, "four events before the truncate, one older event of key 3")
	require.Equal(t, int64(0), d.duplicates)

	d = dedup(recs[:3], keys[:3])
	require.Nil(t, d.truncate)
	require.Len(t, d.chains, 1)
	require.Equal(t, []int64{0, 1, 5}, offsets(d.chains[0].events), "equal positions tie-break by partition, then offset")
	require.Equal(t, int64(1), d.duplicates)
	require.Equal(t, int64(1), d.superseded)
}

func offsets(recs []*Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Offset
	}
	return out
}
