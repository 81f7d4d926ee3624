package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCloneAtTimestamp checks `clone --timestamp T`: the clone at a time between two
// commits equals the clone at the version that was current then (the latest
// committed at or before T), deep and shallow; a time before the first commit is
// refused.
func TestCloneAtTimestamp(t *testing.T) {
	dir := t.TempDir()
	tbl := testTable(t, dir) // versions 0, 1 and 2
	base := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for v := range 3 {
		at := base.Add(time.Duration(v) * time.Hour)
		p := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v))
		require.NoError(t, os.Chtimes(p, at, at))
	}
	clone := func(t *testing.T, mode, flag, value string) (string, string) {
		t.Helper()
		dest := filepath.Join(t.TempDir(), "c")
		r := exe(t, "clone", mode, flag, value, dir, dest)
		require.Equal(t, exitOK, r.code, "%s %s %s: %s", mode, flag, value, r.stderr)
		return dest, r.stdout
	}
	show := func(t *testing.T, args ...string) []string {
		t.Helper()
		r := cli(t, append([]string{"show", "--format", "csv", "--limit", "0"}, args...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		rows := strings.Split(strings.TrimSpace(r.stdout), "\n")
		slices.Sort(rows)
		return rows
	}
	txns := func(t *testing.T, dest string) string {
		t.Helper()
		d := cli(t, "describe", "--json", dest)
		require.Equal(t, exitOK, d.code, d.stderr)
		var got struct {
			Txns []struct {
				AppID   string `json:"appId"`
				Version int64  `json:"version"`
			} `json:"txns"`
		}
		require.NoError(t, json.Unmarshal([]byte(d.stdout), &got))
		return fmt.Sprint(got.Txns)
	}
	for _, tc := range []struct {
		at      time.Time
		version int64
	}{
		{base.Add(30 * time.Minute), 0},
		{base.Add(time.Hour), 1}, // committed at exactly T: that version
		{base.Add(90 * time.Minute), 1},
		{base.Add(5 * time.Hour), 2},
	} {
		ts := tc.at.Format(time.RFC3339)
		t.Run(ts, func(t *testing.T) {
			for _, mode := range []string{"--deep", "--shallow"} {
				byTime, outTime := clone(t, mode, "--timestamp", ts)
				byVersion, outVersion := clone(t, mode, "--version", fmt.Sprint(tc.version))
				require.Contains(t, outTime, fmt.Sprintf("at version %d to ", tc.version), "%s: the version current at %s", mode, ts)
				require.Equal(t, strings.ReplaceAll(outVersion, byVersion, byTime), outTime, mode)
				want := show(t, "--version", fmt.Sprint(tc.version), dir)
				require.Len(t, want, 1+len(ids(t, tbl, tc.version)), "the header and the rows")
				require.Equal(t, want, show(t, byTime), "%s: the rows of version %d", mode, tc.version)
				require.Equal(t, show(t, byVersion), show(t, byTime), mode)
				require.Equal(t, txns(t, byVersion), txns(t, byTime), "%s: the txn positions of version %d", mode, tc.version)
				for _, d := range []string{byTime, byVersion} {
					h := jsonLines(t, cli(t, "history", "--json", d).stdout)[0]
					require.Equal(t, fmt.Sprint(tc.version), h["operationParameters"].(map[string]any)["sourceVersion"], mode)
				}
			}
		})
	}
	r := exe(t, "clone", "--deep", "--timestamp", base.Add(-time.Minute).Format(time.RFC3339), dir, filepath.Join(t.TempDir(), "c"))
	require.NotEqual(t, exitOK, r.code, "a time before the first commit")
	require.Contains(t, r.stderr, "is not available (versions 0..2 can be read)")
}
