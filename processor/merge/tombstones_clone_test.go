package merge

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// TestCloneCarriesTombstones: a key deleted before the cloned version stays deleted on
// the clone when an older event of it comes again (a connector restart re-sends old
// events at new offsets); without the carried tombstones the clone resurrects it.
func TestCloneCarriesTombstones(t *testing.T) {
	for _, carry := range []bool{true, false} {
		ctx := t.Context()
		src := newMemStore()
		_, err := newTestSink(t, src, ModeAuto, DeleteHard).Apply(ctx, batchOf(
			ev{op: opC, id: 1, pos: 1, name: "a", offset: 0}, ev{op: opC, id: 2, pos: 2, name: "b", offset: 1}))
		require.NoError(t, err)
		_, err = newTestSink(t, src, ModeAuto, DeleteHard).Apply(ctx, batchOf(ev{op: opD, id: 2, pos: 3, offset: 2}))
		require.NoError(t, err)

		srcTbl, err := deltalog.Open(ctx, src)
		require.NoError(t, err)
		snap, err := srcTbl.Snapshot(ctx)
		require.NoError(t, err)
		dst := newMemStore()
		dstTbl, err := deltalog.Open(ctx, dst)
		require.NoError(t, err)
		opts := tableops.CloneOptions{Source: "src"}
		if carry {
			opts.BeforeCommit = func(ctx context.Context) error {
				n, err := CloneTombstones(ctx, srcTbl, snap.Version(), dst)
				require.Equal(t, 1, n)
				return err
			}
		}
		_, err = tableops.Clone(ctx, srcTbl, snap, dstTbl, opts)
		require.NoError(t, err)

		// The insert of id 2 again, at its old position, at a new offset.
		_, err = newTestSink(t, dst, ModeAuto, DeleteHard).Apply(ctx, batchOf(ev{op: opC, id: 2, pos: 2, name: "b", offset: 3}))
		require.NoError(t, err)
		_, rows := readRows(t, dst)
		if carry {
			require.Len(t, rows, 1, "id 2 stays deleted")
		} else {
			require.Len(t, rows, 2, "without the tombstones the old insert comes back")
		}
	}
}
