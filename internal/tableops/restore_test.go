package tableops_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

func TestRestore(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	v0, v2 := f.snapshot(t, 0), f.snapshot(t, 2)
	var sizeAt0, sizeAt2 int64
	for _, a := range v0.Files() {
		sizeAt0 += a.Size
	}
	for _, a := range v2.Files() {
		sizeAt2 += a.Size
	}

	m, err := tableops.Restore(ctx, f.table, v2, v0, tableops.RestoreOptions{})
	require.NoError(t, err)
	require.Equal(t, tableops.RestoreMetrics{
		Version: 3, TableSizeAfterRestore: sizeAt0, NumOfFilesAfterRestore: 1,
		NumRemovedFiles: 3, NumRestoredFiles: 1, // A with its DV, B and C go; A comes back without it
		RemovedFilesSize: sizeAt2, RestoredFilesSize: sizeAt0,
	}, m)
	require.Equal(t, f.rows(t, 0), f.rows(t, -1))
	cur := f.snapshot(t, -1)
	v, _ := cur.TxnVersion("app-0")
	require.EqualValues(t, 10, v, "txn goes back to version 0's offset")
	v, _ = cur.TxnVersion("app-1")
	require.EqualValues(t, -1, v, "a partition version 0 had not consumed replays from the start")

	ci := f.commitInfo(t, 3)
	require.Equal(t, deltalog.OpRestore, ci.Operation)
	require.Equal(t, map[string]string{"version": "0"}, ci.OperationParameters.Texts())
	require.Equal(t, map[string]string{
		"tableSizeAfterRestore": strconv.FormatInt(sizeAt0, 10), "numOfFilesAfterRestore": "1",
		"numRemovedFiles": "3", "numRestoredFiles": "1",
		"removedFilesSize": strconv.FormatInt(sizeAt2, 10), "restoredFilesSize": strconv.FormatInt(sizeAt0, 10),
	}, ci.OperationMetrics.Texts(), "Spark's names and values")
	for _, a := range f.commit(t, 3) {
		require.Nil(t, a.Metadata, "the metadata did not change")
		switch {
		case a.Add != nil:
			require.True(t, a.Add.DataChange)
		case a.Remove != nil:
			require.True(t, a.Remove.DataChange)
		}
	}

	// Forward again to version 2, chosen by time.
	m, err = tableops.Restore(ctx, f.table, cur, v2, tableops.RestoreOptions{Timestamp: "2026-01-02T03:04:05Z"})
	require.NoError(t, err)
	require.EqualValues(t, 4, m.Version)
	require.Equal(t, []int64{1, 3, 4, 5, 6}, f.ids(t, -1))
	v, _ = f.snapshot(t, -1).TxnVersion("app-1")
	require.EqualValues(t, 5, v)
	require.Equal(t, map[string]string{"timestamp": `"2026-01-02T03:04:05Z"`}, f.commitInfo(t, 4).OperationParameters.Texts())
}

func TestRestoreMetadata(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	v2 := f.snapshot(t, 2)
	meta := v2.Metadata()
	meta.Description = "changed"
	_, err := f.table.Commit(ctx, v2, []deltalog.Action{{Metadata: &meta}}, deltalog.Operation{Name: deltalog.OpSetTblProps})
	require.NoError(t, err)

	_, err = tableops.Restore(ctx, f.table, f.snapshot(t, 3), v2, tableops.RestoreOptions{})
	require.NoError(t, err)
	require.True(t, f.snapshot(t, -1).Metadata().Equal(v2.Metadata()), "version 2's metadata is back")
}

func TestRestoreRefuses(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, f *fixture)
		target  int64
		wantErr error
	}{
		{"already at the target", func(*testing.T, *fixture) {}, 2, tableops.ErrSameVersion},
		{"a target file was vacuumed", func(t *testing.T, f *fixture) {
			a := f.snapshot(t, 0).Files()[0]
			require.NoError(t, f.store.Delete(t.Context(), a.Key().Path()))
		}, 0, tableops.ErrFileGone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.prepare(t, f)
			_, err := tableops.Restore(t.Context(), f.table, f.snapshot(t, 2), f.snapshot(t, tc.target), tableops.RestoreOptions{})
			require.ErrorIs(t, err, tc.wantErr)
			require.EqualValues(t, 2, f.snapshot(t, -1).Version(), "nothing committed")
		})
	}
}
