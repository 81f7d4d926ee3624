package deltalog_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestSnapshotUpdate checks that incrementally updating a snapshot gives the same state
// as loading it from scratch, across adds, removes, DV updates, txns and domains.
func TestSnapshotUpdate(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t)
	snap := createTable(t, tbl, map[string]string{"delta.enableDeletionVectors": "true"})
	same, err := tbl.Update(ctx, snap)
	require.NoError(t, err)
	require.Same(t, snap, same, "nothing new: the same snapshot")

	lag := snap // updated only now and then, to fall several versions behind
	dv := &deltalog.DeletionVector{StorageType: "u", PathOrInlineDV: "ab^-aqEH.-t@S}K{vb[*k^", SizeInBytes: 36, Cardinality: 2}
	for i := range 25 {
		actions := []deltalog.Action{addFile(fmt.Sprintf("f%02d.parquet", i)), txnAction("app", int64(i))}
		if i%3 == 2 {
			actions = append(actions, removeFile(fmt.Sprintf("f%02d.parquet", i-1)))
		}
		if i%5 == 4 {
			old := addFile(fmt.Sprintf("f%02d.parquet", i-4)).Add
			withDV := *old
			withDV.DeletionVector = dv
			actions = append(actions, removeFile(old.Path), deltalog.Action{Add: &withDV},
				deltalog.Action{DomainMetadata: &deltalog.DomainMetadata{Domain: "d", Configuration: fmt.Sprint(i)}})
		}
		_, err := tbl.Commit(ctx, snap, actions, deltalog.Operation{Name: deltalog.OpMerge}, deltalog.ReadFiles())
		require.NoError(t, err)
		full, err := tbl.Snapshot(ctx)
		require.NoError(t, err)
		snap = full
		if i%4 == 0 {
			continue
		}
		upd, err := tbl.Update(ctx, lag)
		require.NoError(t, err)
		require.Equal(t, full.Version(), upd.Version())
		require.Equal(t, full.Files(), upd.Files())
		require.Equal(t, full.Tombstones(), upd.Tombstones())
		require.Equal(t, full.Txns(), upd.Txns())
		require.Equal(t, full.DomainMetadata(), upd.DomainMetadata())
		require.Equal(t, full.CommitTimestamp(), upd.CommitTimestamp())
		require.Equal(t, full.Metadata(), upd.Metadata())
		lag = upd
	}
}
