package tableops_test

import (
	"io"
	"path"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

const week = 7 * 24 * time.Hour

// vacuumFixture optimizes the fixture table an hour after it was written, which
// tombstones A (with its deletion vector file) and B, then adds an orphan, a change data
// file and hidden files. It returns the paths a VACUUM past the retention deletes.
func vacuumFixture(t *testing.T) (f *fixture, doomed []string) {
	t.Helper()
	ctx := t.Context()
	f = newFixture(t)
	f.advance(time.Hour)
	for _, a := range f.snapshot(t, -1).Files() {
		if *a.PartitionValues["region"] != "eu" {
			continue
		}
		doomed = append(doomed, a.Key().Path())
		if a.DeletionVector != nil {
			dv, err := a.DeletionVector.RelativePath()
			require.NoError(t, err)
			doomed = append(doomed, dv)
		}
	}
	_, err := tableops.Optimize(ctx, f.table, f.snapshot(t, -1), tableops.OptimizeOptions{TargetSize: 1 << 20})
	require.NoError(t, err)
	for _, p := range []string{"orphan.parquet", "_change_data/cdc-1.parquet", "_hidden/x.parquet", ".staging/y.parquet"} {
		require.NoError(t, f.store.Put(ctx, p, []byte("x")))
	}
	doomed = append(doomed, "orphan.parquet", "_change_data/cdc-1.parquet")
	slices.Sort(doomed)
	return f, doomed
}

func TestVacuum(t *testing.T) {
	retain := func(d time.Duration) *time.Duration { return &d }
	tests := []struct {
		name      string
		after     time.Duration // since the OPTIMIZE
		opts      tableops.VacuumOptions
		wantFiles bool // the doomed files, else none
		wantRet   time.Duration
		params    map[string]string
	}{
		{name: "within the table's retention nothing goes", after: 6 * 24 * time.Hour, wantRet: week,
			params: map[string]string{"retentionCheckEnabled": "true", "defaultRetentionMillis": "604800000"}},
		{name: "past it, unreferenced and removed files go", after: 8 * 24 * time.Hour, wantFiles: true, wantRet: week,
			params: map[string]string{"retentionCheckEnabled": "true", "defaultRetentionMillis": "604800000"}},
		{name: "a longer retention keeps them", after: 8 * 24 * time.Hour, opts: tableops.VacuumOptions{Retention: retain(2 * week)}, wantRet: 2 * week,
			params: map[string]string{"retentionCheckEnabled": "true", "defaultRetentionMillis": "604800000", "specifiedRetentionMillis": "1209600000"}},
		{name: "a forced zero retention releases them at once", after: time.Minute,
			opts: tableops.VacuumOptions{Retention: retain(0), SkipRetentionCheck: true}, wantFiles: true,
			params: map[string]string{"retentionCheckEnabled": "false", "defaultRetentionMillis": "604800000", "specifiedRetentionMillis": "0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			f, doomed := vacuumFixture(t)
			f.advance(tc.after)
			var want []string
			if tc.wantFiles {
				want = doomed
			}

			var wantSize int64
			dirs := map[string]bool{}
			for _, p := range want {
				wantSize += objectSize(t, f.store, p)
				dirs[path.Dir(p)] = true
			}

			tc.opts.Now = f.now
			dry := tc.opts
			dry.DryRun = true
			res, err := tableops.Vacuum(ctx, f.table, f.snapshot(t, -1), dry)
			require.NoError(t, err)
			require.Equal(t, want, res.Files)
			require.Equal(t, wantSize, res.SizeOfDataToDelete)
			require.Zero(t, res.NumDeletedFiles)
			require.EqualValues(t, 3, f.snapshot(t, -1).Version(), "a dry run commits nothing")

			res, err = tableops.Vacuum(ctx, f.table, f.snapshot(t, -1), tc.opts)
			require.NoError(t, err)
			require.Equal(t, want, res.Files)
			require.Equal(t, len(want), res.NumDeletedFiles)
			require.Equal(t, tc.wantRet, res.Retention)
			require.EqualValues(t, 5, res.Version)
			require.Equal(t, wantSize, res.SizeOfDataToDelete)
			require.Equal(t, len(dirs), res.NumVacuumedDirectories)
			for _, p := range want {
				_, err := f.store.Get(ctx, p)
				require.ErrorIs(t, err, deltalog.ErrNotExist, "%s is deleted", p)
			}
			for _, p := range []string{"_hidden/x.parquet", ".staging/y.parquet"} {
				_, err := f.store.Get(ctx, p)
				require.NoError(t, err, "%s is hidden and kept", p)
			}
			require.Equal(t, []int64{1, 3, 4, 5, 6}, f.ids(t, -1), "the latest version reads")

			startCI, endCI := f.commitInfo(t, 4), f.commitInfo(t, 5)
			require.Equal(t, deltalog.OpVacuumStart, startCI.Operation)
			require.Equal(t, tc.params, startCI.OperationParameters.Texts())
			require.Equal(t, map[string]string{
				"numFilesToDelete": strconv.Itoa(len(want)), "sizeOfDataToDelete": strconv.FormatInt(res.SizeOfDataToDelete, 10),
			}, startCI.OperationMetrics.Texts())
			require.Equal(t, deltalog.OpVacuumEnd, endCI.Operation)
			require.Equal(t, map[string]string{"status": "COMPLETED"}, endCI.OperationParameters.Texts())
			require.Equal(t, map[string]string{
				"numDeletedFiles": strconv.Itoa(len(want)), "numVacuumedDirectories": strconv.Itoa(len(dirs)),
			}, endCI.OperationMetrics.Texts())
		})
	}
}

func objectSize(t *testing.T, s deltalog.Store, p string) int64 {
	t.Helper()
	rc, err := s.Get(t.Context(), p)
	require.NoError(t, err)
	defer rc.Close()
	n, err := io.Copy(io.Discard, rc)
	require.NoError(t, err)
	return n
}

func TestVacuumRefusesShortRetention(t *testing.T) {
	f, _ := vacuumFixture(t)
	hour := time.Hour
	_, err := tableops.Vacuum(t.Context(), f.table, f.snapshot(t, -1), tableops.VacuumOptions{Retention: &hour, DryRun: true})
	var re *tableops.RetentionError
	require.ErrorAs(t, err, &re)
	require.Equal(t, tableops.RetentionError{Retention: time.Hour, TableRetention: week}, *re)
	require.EqualValues(t, 3, f.snapshot(t, -1).Version())
}

func TestVacuumDeleteFails(t *testing.T) {
	ctx := t.Context()
	f, doomed := vacuumFixture(t)
	f.advance(8 * 24 * time.Hour)
	f.store.Inject(faultstore.Fault{Ops: faultstore.OpDelete, Nth: 2})
	res, err := tableops.Vacuum(ctx, f.table, f.snapshot(t, -1), tableops.VacuumOptions{Now: f.now})
	require.ErrorIs(t, err, faultstore.ErrInjected)
	require.ErrorContains(t, err, "1 of 5 deleted")
	require.Equal(t, doomed, res.Files)
	require.Equal(t, 1, res.NumDeletedFiles)
	end := f.commitInfo(t, res.Version)
	require.Equal(t, map[string]string{"status": "FAILED"}, end.OperationParameters.Texts())
	require.Equal(t, "1", end.OperationMetrics.Text("numDeletedFiles"))
	_, err = f.store.Get(ctx, doomed[1])
	require.NoError(t, err, "the file whose delete failed is still there")
}

// TestVacuumKeepsFilesOfACommitInFlight: a writer wrote late.parquet long
// ago (past the retention) and commits it only after VACUUM listed the
// table and read its snapshot, as a slow commit of this process's own
// writer does. The file is kept; orphan.parquet, as old and never
// committed, goes in the same run (the run deletes a file of that age).
func TestVacuumKeepsFilesOfACommitInFlight(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	for _, p := range []string{"region=eu/late.parquet", "orphan.parquet"} {
		require.NoError(t, f.store.Put(ctx, p, []byte("x")))
	}
	f.advance(week + time.Hour)
	snap := f.snapshot(t, -1)
	eu := "eu"
	late := deltalog.Add{Path: "region=eu/late.parquet", PartitionValues: map[string]*string{"region": &eu},
		Size: 1, ModificationTime: start.UnixMilli(), DataChange: true}
	landed := false
	res, err := tableops.Vacuum(ctx, f.table, snap, tableops.VacuumOptions{Now: f.now, Listed: func() {
		_, err := f.table.Commit(ctx, snap, []deltalog.Action{{Add: &late}}, deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
		landed = true
	}})
	require.NoError(t, err)
	require.True(t, landed)
	require.Equal(t, []string{"orphan.parquet"}, res.Files)
	require.Equal(t, 1, res.NumDeletedFiles)
	_, err = f.store.Get(ctx, "region=eu/late.parquet")
	require.NoError(t, err, "the file the commit in flight added is kept")
	_, err = f.store.Get(ctx, "orphan.parquet")
	require.ErrorIs(t, err, deltalog.ErrNotExist)
}
