package merge

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestProgressRecorded: each commit's commitInfo says, per partition, the
// highest position it applied, the snapshot ends it applied, and the orders
// of each transaction's events, re-deliveries once; replayed records count
// in the commit that first applied them only.
func TestProgressRecorded(t *testing.T) {
	store := newMemStore()
	s := newTestSink(t, store, ModeAuto, DeleteHard)
	b := batchOf(
		ev{op: opC, id: 1, pos: 1, offset: 1},
		ev{op: opC, id: 2, pos: 2, offset: 2, part: 1},
		ev{op: opU, id: 1, pos: 5, offset: 3},
		ev{op: opU, id: 3, pos: 4, offset: 3, part: 1},
	)
	b.Records[0].Change.Snapshot = "last_in_data_collection"
	for i, o := range []int64{1, 2, 1, 4} { // 1 is delivered twice
		b.Records[i].Change.TxID, b.Records[i].Change.TxOrder = "0000002a:00000b38:0003", o
	}
	_, err := s.Apply(t.Context(), b)
	require.NoError(t, err)
	// The same records again (a replay) and one new one.
	b2 := b
	b2.Records = append(b2.Records, ev{op: opU, id: 2, pos: 9, offset: 4, part: 1}.record())
	b2.LastOffsets = map[cdctable.TopicPartition]int64{{Topic: "sales.dbo.items", Partition: 1}: 4}
	_, err = s.Apply(t.Context(), b2)
	require.NoError(t, err)

	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	ci, err := tbl.CommitInfo(t.Context(), 0)
	require.NoError(t, err)
	p, ok, err := cdctable.ReadProgress(ci)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, map[string]cdctable.PartitionProgress{
		"cdc2delta/sales.dbo.items/0": {Pos: pos(5).Hex(), Millis: 1_700_000_000_005},
		"cdc2delta/sales.dbo.items/1": {Pos: pos(4).Hex(), Millis: 1_700_000_000_004},
	}, p.Partitions)
	require.Equal(t, []cdctable.PartitionProgress{{AppID: "cdc2delta/sales.dbo.items/0", Pos: pos(1).Hex(), Millis: 1_700_000_000_001, Snapshot: "last_in_data_collection"}}, p.SnapshotEnds)
	require.Equal(t, []string{"0000002a:00000b38:0003"}, p.TxIDs())
	require.Equal(t, []int64{1, 2, 4}, p.Orders("0000002a:00000b38:0003"))

	ci, err = tbl.CommitInfo(t.Context(), 1)
	require.NoError(t, err)
	p, ok, err = cdctable.ReadProgress(ci)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, map[string]cdctable.PartitionProgress{"cdc2delta/sales.dbo.items/1": {Pos: pos(9).Hex(), Millis: 1_700_000_000_009}}, p.Partitions)
	require.Empty(t, p.Tx)

	_, ok, err = cdctable.ReadProgress(&deltalog.CommitInfo{})
	require.NoError(t, err)
	require.False(t, ok, "another writer's commit records nothing")
}
