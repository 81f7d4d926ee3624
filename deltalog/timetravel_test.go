package deltalog_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestSnapshotAtTime(t *testing.T) {
	ctx := t.Context()
	tbl, st, _ := newMemTable(t, deltalog.DisableCheckpoints())
	snap := createTable(t, tbl, nil)
	for i := range 4 {
		_, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile(fmt.Sprintf("f%d.parquet", i))}, deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
	}
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// Versions 0..4 at base+0,10,20,20,15 minutes: v3 ties v2 and v4 goes backwards, so
	// monotonization gives v3 = v2+1ms and v4 = v3+1ms.
	mins := []int{0, 10, 20, 20, 15}
	for v, m := range mins {
		require.NoError(t, st.SetModTime(fmt.Sprintf("_delta_log/%020d.json", v), base.Add(time.Duration(m)*time.Minute)))
	}
	tests := []struct {
		at      time.Time
		want    int64
		wantErr bool
	}{
		{base.Add(-time.Second), 0, true},
		{base, 0, false},
		{base.Add(9 * time.Minute), 0, false},
		{base.Add(10 * time.Minute), 1, false},
		{base.Add(20 * time.Minute), 2, false},
		{base.Add(20*time.Minute + time.Millisecond), 3, false},
		{base.Add(20*time.Minute + 2*time.Millisecond), 4, false},
		{base.Add(16 * time.Minute), 1, false},
		{base.Add(time.Hour), 4, false},
	}
	for _, tc := range tests {
		t.Run(tc.at.Format(time.RFC3339Nano), func(t *testing.T) {
			s, err := tbl.SnapshotAtTime(ctx, tc.at)
			if tc.wantErr {
				var vr *deltalog.VersionRangeError
				require.ErrorAs(t, err, &vr)
				require.Equal(t, tc.at, vr.Timestamp)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, s.Version())
			require.Len(t, s.Files(), int(tc.want))
		})
	}
}

func TestInCommitTimestamps(t *testing.T) {
	ctx := t.Context()
	tbl, st, clk := newMemTable(t, deltalog.DisableCheckpoints())
	snap := createTable(t, tbl, map[string]string{"delta.enableInCommitTimestamps": "true"})
	require.True(t, snap.Protocol().HasWriterFeature(deltalog.FeatureInCommitTimestamp))
	var times []time.Time
	times = append(times, snap.CommitTimestamp())
	for i := range 5 {
		clk.Advance(time.Minute)
		res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile(fmt.Sprintf("f%d.parquet", i))}, deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
		s, err := tbl.SnapshotAt(ctx, res.Version)
		require.NoError(t, err)
		require.True(t, s.CommitTimestamp().After(times[len(times)-1]), "ICT strictly increases")
		times = append(times, s.CommitTimestamp())
	}
	// File mtimes are irrelevant with ICT: scramble them.
	for v := range 6 {
		require.NoError(t, st.SetModTime(fmt.Sprintf("_delta_log/%020d.json", v), time.Unix(int64(1000-v), 0)))
	}
	for v, ts := range times {
		s, err := tbl.SnapshotAtTime(ctx, ts)
		require.NoError(t, err)
		require.Equal(t, int64(v), s.Version())
		s, err = tbl.SnapshotAtTime(ctx, ts.Add(30*time.Second))
		require.NoError(t, err)
		require.Equal(t, int64(v), s.Version())
	}
	_, err := tbl.SnapshotAtTime(ctx, times[0].Add(-time.Millisecond))
	require.ErrorIs(t, err, deltalog.ErrNotExist)
}

func TestInCommitTimestampRecomputedOnRetry(t *testing.T) {
	ctx := t.Context()
	tbl, st, _ := newMemTable(t, deltalog.DisableCheckpoints())
	snap := createTable(t, tbl, map[string]string{"delta.enableInCommitTimestamps": "true"})
	// A second writer whose clock is an hour behind.
	late := func() time.Time { return time.Date(2026, 1, 1, 11, 0, 0, 0, time.UTC) }
	tbl2, err := deltalog.Open(ctx, st, deltalog.WithClock(late), deltalog.DisableCheckpoints())
	require.NoError(t, err)

	_, err = tbl.Commit(ctx, snap, []deltalog.Action{addFile("a.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	res, err := tbl2.Commit(ctx, snap, []deltalog.Action{addFile("b.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	require.Equal(t, int64(2), res.Version)
	s1, err := tbl.SnapshotAt(ctx, 1)
	require.NoError(t, err)
	s2, err := tbl.SnapshotAt(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, s1.CommitTimestamp().Add(time.Millisecond), s2.CommitTimestamp(), "ICT = winner's ICT + 1ms despite the slow clock")
}

// TestHistoryTimesSelectTheirVersions: History, CommitTime and SnapshotAtTime share one
// clock, so each time History gives selects its version, also where file times carry
// nanoseconds, tie or go backwards.
func TestHistoryTimesSelectTheirVersions(t *testing.T) {
	ctx := t.Context()
	tbl, st, _ := newMemTable(t, deltalog.DisableCheckpoints())
	snap := createTable(t, tbl, nil)
	for i := range 4 {
		_, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile(fmt.Sprintf("f%d.parquet", i))}, deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
	}
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for v, d := range []time.Duration{123456789, 10*time.Minute + 1, 20*time.Minute + 999999, 20*time.Minute + 999999, 15 * time.Minute} {
		require.NoError(t, st.SetModTime(fmt.Sprintf("_delta_log/%020d.json", v), base.Add(d)))
	}
	h, err := tbl.History(ctx, 0)
	require.NoError(t, err)
	require.Len(t, h, 5)
	for i, e := range h {
		require.Equal(t, int64(4-i), e.Version, "newest first")
		require.NotNil(t, e.Info)
		require.Equal(t, e.Timestamp, e.Timestamp.Truncate(time.Millisecond), "milliseconds, as Delta keeps them")
		s, err := tbl.SnapshotAtTime(ctx, e.Timestamp)
		require.NoError(t, err)
		require.Equal(t, e.Version, s.Version(), "History gives %v for version %d", e.Timestamp, e.Version)
		ct, err := tbl.CommitTime(ctx, e.Version)
		require.NoError(t, err)
		require.Equal(t, e.Timestamp, ct)
	}
	h, err = tbl.History(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, []int64{4, 3}, []int64{h[0].Version, h[1].Version})
}
