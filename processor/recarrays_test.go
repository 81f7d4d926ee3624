package processor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// The spare is the larger array handed back, zeroed, and serves a request
// it can hold once.
func TestRecordArraysSpare(t *testing.T) {
	a := new(recordArrays)
	recs := a.get(100)
	require.GreaterOrEqual(t, cap(recs), 100)
	recs = append(recs, merge.Record{Offset: 7, Change: codecs.Change{Row: []any{"x"}}})
	a.put(recs)
	a.put(make([]merge.Record, 3)) // smaller: not kept
	require.GreaterOrEqual(t, cap(a.spare), 100)
	again := a.get(100)
	require.Same(t, &recs[:1][0], &again[:1][0], "the spare serves")
	require.Empty(t, again)
	for _, r := range again[:cap(again)] {
		require.Zero(t, r.Offset)
		require.Nil(t, r.Change.Row)
	}
	require.Nil(t, a.spare, "once")
	a.put(again)
	big := a.get(cap(again) + 1)
	require.NotSame(t, &again[:1][0], &big[:1][0], "too small a spare does not serve")
	a.drop()
	require.Nil(t, a.spare)

	var none *recordArrays
	require.GreaterOrEqual(t, cap(none.get(5)), 5)
	none.put(recs)
	none.drop()
}
