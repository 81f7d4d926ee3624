package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestHistoryOnlyRun: `run` with history: only writes the history table at
// the table's own path and nothing beside it; verify names it a history
// table, describe and show read it; and validate and run refuse the same
// settings history: only cannot keep, with the same lines; delete and
// reconcile, which edit or compare a current-state table, refuse it.
func TestHistoryOnlyRun(t *testing.T) {
	f := newRunFixture(t, fixtureOptions{partitions: 2})
	cfg, err := os.ReadFile(f.cfg)
	require.NoError(t, err)
	withHistory := strings.Replace(string(cfg), `tables: {path: "`, `tables: {defaults: {history: only}, path: "`, 1)
	require.NotEqual(t, string(cfg), withHistory)
	require.NoError(t, os.WriteFile(f.cfg, []byte(withHistory), 0o600))
	f.produce(200)
	f.runUntilCaughtUp()

	snap, err := f.table().Snapshot(t.Context())
	require.NoError(t, err)
	require.Equal(t, cdctable.ShapeHistory, snap.Metadata().Configuration[cdctable.PropShape])
	require.Contains(t, snap.Metadata().SchemaString, cdctable.HistStartAt)
	_, err = os.Stat(f.dir + "_history")
	require.ErrorIs(t, err, os.ErrNotExist, "no second history table")

	r := cli(t, "verify", f.dir)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "is a history table")
	r = cli(t, "delete", "--where", "order_id = 1", f.dir)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "is a history table")
	r = cli(t, "reconcile", "--against", f.dir+"/missing.csv", f.dir)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "is a history table")
	r = cli(t, "describe", f.dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, cdctable.HistStartAt)
	require.Greater(t, len(f.rows()), 40, "versions of 40 keys")

	// Settings history: only cannot keep: validate and run refuse them alike.
	bad := strings.Replace(withHistory, `defaults: {history: only}`, `defaults: {history: only, delete_mode: soft, change_data_feed: true}`, 1)
	require.NoError(t, os.WriteFile(f.cfg, []byte(bad), 0o600))
	var stderr []string
	for _, cmd := range []string{"validate", "run"} {
		r := cli(t, cmd, "--config", f.cfg)
		require.Equal(t, exitUsage, r.code, "%s: %s", cmd, r.stderr)
		require.Contains(t, r.stderr, "tables.defaults.delete_mode: soft flags deleted rows in the current-state table, which history: only does not keep")
		require.Contains(t, r.stderr, "tables.defaults.change_data_feed: a history table has no change data feed")
		stderr = append(stderr, strings.Replace(r.stderr, "cdc2delta "+cmd+":", "", 1))
	}
	require.Equal(t, stderr[0], stderr[1])
}
