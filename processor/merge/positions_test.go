package merge

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestPositionsReadOnlyNewCommits: a start reads a table's positions right
// after opening it; they come from the commits since the open, not from the
// checkpoint read again, and still see another writer's commits.
func TestPositionsReadOnlyNewCommits(t *testing.T) {
	store := &dataReadStore{Store: newMemStore(), read: map[string]bool{}}
	open := func() *Sink {
		s, err := Open(t.Context(), Options{Store: store, TableName: "items"})
		require.NoError(t, err)
		return s
	}
	s := open()
	for i := range 12 { // past a checkpoint
		_, err := s.Apply(t.Context(), batchOf(ev{op: codecs.OpCreate, id: int32(i), pos: i + 1, name: "x", offset: int64(i)}))
		require.NoError(t, err)
	}
	s = open()
	checkpoints := func() (n int) {
		store.mu.Lock()
		defer store.mu.Unlock()
		for p := range store.read {
			if strings.Contains(p, ".checkpoint.") {
				n++
			}
		}
		store.read = map[string]bool{}
		return n
	}
	require.Positive(t, checkpoints(), "the open read the checkpoint")
	pos, err := s.Positions(t.Context())
	require.NoError(t, err)
	require.Zero(t, checkpoints(), "positions read the checkpoint again")
	tp := cdctable.TopicPartition{Topic: "sales.dbo.items", Partition: 0}
	require.Equal(t, map[cdctable.TopicPartition]int64{tp: 11}, pos)

	other := open()
	_, err = other.Apply(t.Context(), batchOf(ev{op: codecs.OpCreate, id: 99, pos: 99, name: "y", offset: 12}))
	require.NoError(t, err)
	pos, err = s.Positions(t.Context())
	require.NoError(t, err)
	require.Equal(t, int64(12), pos[tp], "another writer's commit")
}
