package merge

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChangeDataFeedReplaysTable applies random batches and checks that the
// change data feed, replayed from version 0, rebuilds exactly the table:
// every preimage and delete is the row stored at the time, every insert
// is of a key not stored.
func TestChangeDataFeedReplaysTable(t *testing.T) {
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		for _, dm := range []DeleteMode{DeleteHard, DeleteSoft} {
			t.Run(string(mode)+"/"+string(dm), func(t *testing.T) {
				store := newMemStore()
				s := newCDFSink(t, store, mode, dm)
				applyMixedBatches(t, s)
				state := map[int32]item{}
				kinds := map[string]int{}
				for v := range s.Version() + 1 {
					rows, _ := tableChanges(t, store, v)
					for _, r := range rows {
						kinds[r.kind]++
						if r.kind == ChangeDelete || r.kind == ChangeUpdatePreimage {
							old, ok := state[r.id]
							require.True(t, ok, "version %d: %s of key %d, which is not stored", v, r.kind, r.id)
							require.Equal(t, old, r.item, "version %d: %s of key %d", v, r.kind, r.id)
							delete(state, r.id)
						}
					}
					for _, r := range rows {
						if r.kind == ChangeInsert || r.kind == ChangeUpdatePostimage {
							_, ok := state[r.id]
							require.False(t, ok, "version %d: %s of key %d, which is stored", v, r.kind, r.id)
							state[r.id] = r.item
						}
					}
				}
				require.Equal(t, readItems(t, store), state)
				for _, k := range []string{ChangeInsert, ChangeUpdatePreimage, ChangeUpdatePostimage} {
					require.Positive(t, kinds[k], k)
				}
				require.Equal(t, kinds[ChangeUpdatePreimage], kinds[ChangeUpdatePostimage])
				if dm == DeleteHard {
					require.Positive(t, kinds[ChangeDelete])
				}
			})
		}
	}
}
