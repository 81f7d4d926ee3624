package merge

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestManualEdits: a manual UPDATE keeps positions, so a newer event overwrites it and
// an older one does not; a manual DELETE leaves tombstones at the stored positions, so
// an older re-delivered event does not resurrect the row and a newer one does; the
// sink that lost the race to the commands re-applies its batch.
func TestManualEdits(t *testing.T) {
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := t.Context()
			store := newMemStore()
			s := newTestSink(t, store, mode, DeleteHard)
			_, err := s.Apply(ctx, batchOf(
				ev{op: opC, id: 1, pos: 10, name: "a", offset: 0},
				ev{op: opC, id: 2, pos: 11, name: "b", offset: 1},
				ev{op: opC, id: 3, pos: 12, name: "c", offset: 2},
			))
			require.NoError(t, err)

			tbl, err := deltalog.Open(ctx, store)
			require.NoError(t, err)
			snap, err := tbl.Snapshot(ctx)
			require.NoError(t, err)
			rules, err := cdctable.ManualEditsFor(snap.Metadata(), store, nil)
			require.NoError(t, err)
			opts := tableops.DMLOptions{Protected: rules.Protected(), OnDelete: rules.RecordDeletes}
			_, err = tableops.Update(ctx, tbl, snap, []string{"id = 9"}, "true", opts)
			require.ErrorContains(t, err, "key column")
			_, err = tableops.Update(ctx, tbl, snap, []string{"_cdc_position = 'x'"}, "true", opts)
			require.ErrorContains(t, err, "cannot be set")

			m, err := tableops.Update(ctx, tbl, snap, []string{"name = 'edited'"}, "id IN (1, 2)", opts)
			require.NoError(t, err)
			require.EqualValues(t, 2, m.NumUpdatedRows)
			snap, err = tbl.Snapshot(ctx)
			require.NoError(t, err)
			m, err = tableops.Delete(ctx, tbl, snap, "id = 3", opts)
			require.NoError(t, err)
			require.EqualValues(t, 1, m.NumDeletedRows)
			ci, err := tbl.CommitInfo(ctx, m.Version)
			require.NoError(t, err)
			require.NotEmpty(t, deltalog.OperationValues(ci.Extra).Text(cdctable.TombstonesField), "the DELETE names its tombstones")

			items := readItems(t, store)
			require.Equal(t, "edited", items[1].name)
			require.Equal(t, pos(10).Hex(), items[1].pos, "UPDATE keeps the position")
			require.NotContains(t, items, int32(3))

			// The sink lost the race to both commands: it re-applies on the new snapshot.
			res, err := s.Apply(ctx, batchOf(
				ev{op: opU, id: 1, pos: 10, name: "old again", offset: 3},  // a re-delivery: stale
				ev{op: opU, id: 2, pos: 13, name: "newer", offset: 4},      // newer: overwrites
				ev{op: opU, id: 3, pos: 12, name: "resurrect?", offset: 5}, // at the deleted position: stale
			))
			require.NoError(t, err)
			require.EqualValues(t, 2, res.SkippedStale)
			items = readItems(t, store)
			require.Equal(t, "edited", items[1].name)
			require.Equal(t, "newer", items[2].name)
			require.NotContains(t, items, int32(3), "a deleted key stays deleted against older events")

			// A fresh sink (a restart) reads the manual DELETE's tombstones too.
			s2 := newTestSink(t, store, mode, DeleteHard)
			res, err = s2.Apply(ctx, batchOf(ev{op: opC, id: 3, pos: 11, name: "older", offset: 6}))
			require.NoError(t, err)
			require.EqualValues(t, 1, res.SkippedStale)
			res, err = s2.Apply(ctx, batchOf(ev{op: opC, id: 3, pos: 14, name: "reinserted", offset: 7}))
			require.NoError(t, err)
			require.EqualValues(t, 1, res.Inserted)
			require.Equal(t, "reinserted", readItems(t, store)[3].name)
		})
	}
}
