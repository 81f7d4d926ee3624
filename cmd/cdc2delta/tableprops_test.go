package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// TestAlterCloneZOrderCommands checks the commands' lines: what they refuse (exit 2
// with the reason), what they print and what they commit.
func TestAlterCloneZOrderCommands(t *testing.T) {
	dir := t.TempDir()
	tbl := testTable(t, dir)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"alter", dir, "--set", "delta.logRetentionDuration=7 days"}, exitOK, "altered"},
		{[]string{"alter", dir, "--set", "delta.logRetentionDuration=7 days"}, exitOK, "nothing to change"},
		{[]string{"alter", dir, "--set", "delta.logRetention=7 days"}, exitUsage, `delta.logRetention="7 days": unknown Delta table property`},
		{[]string{"alter", dir, "--set", "delta.checkpointInterval=ten"}, exitUsage, "a positive integer"},
		{[]string{"alter", dir, "--set", "owner"}, exitUsage, "is not key=value"},
		{[]string{"alter", dir}, exitUsage, "give --set key=value or --unset key"},
		{[]string{"alter", dir, "--rename-column", "name=title"}, exitUsage, "needs column mapping"},
		{[]string{"alter", dir, "--set", "delta.columnMapping.mode=name"}, exitUsage, "run again with --upgrade-protocol"},
		{[]string{"alter", dir, "--set", "delta.columnMapping.mode=name", "--upgrade-protocol"}, exitOK, "column mapping enabled: 4 columns mapped"},
		{[]string{"alter", dir, "--rename-column", "name=title"}, exitOK, "renamed column name to title"},
		{[]string{"alter", dir, "--unset", "delta.columnMapping.mode"}, exitUsage, "cannot be turned off"},
		{[]string{"optimize", "--zorder-by", "id,title", dir}, exitOK, "compacted 2 files into 1"},
		{[]string{"optimize", "--zorder-by", "id", "--order-by-key", dir}, exitUsage, "not both"},
		{[]string{"clone", "--version", "1", dir, filepath.Join(t.TempDir(), "c")}, exitUsage, "pass one of --deep"},
		{[]string{"clone", "--deep", dir}, exitUsage, "expected SRC and DEST"},
		{[]string{"clone", "--deep", "--version", "1", dir, dir}, exitUsage, "already holds a table"},
	} {
		r := exe(t, tc.args...)
		require.Equal(t, tc.code, r.code, "%v: %s%s", tc.args, r.stdout, r.stderr)
		require.Contains(t, r.stdout+r.stderr, tc.want, tc.args)
	}
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Equal(t, "7 days", snap.Metadata().Configuration[deltalog.PropLogRetentionDuration])
	_, ok := snap.Schema().Field("title")
	require.True(t, ok)
	h := jsonLines(t, cli(t, "history", "--json", "--limit", "1", dir).stdout)[0]
	require.Equal(t, "OPTIMIZE", h["operation"])
	require.Equal(t, `["id","title"]`, h["operationParameters"].(map[string]any)["zOrderBy"])

	dest := filepath.Join(t.TempDir(), "orders_v1")
	r := exe(t, "clone", "--deep", "--version", "1", dir, dest)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "at version 1 to "+dest+": 2 files copied")
	require.Contains(t, r.stdout, "2 txn positions")
	ctbl := openDir(t, dest)
	require.Equal(t, []int64{1, 2, 3, 4, 5}, ids(t, ctbl, -1))
	h = jsonLines(t, cli(t, "history", "--json", dest).stdout)[0]
	require.Equal(t, "CLONE", h["operation"])
	require.Equal(t, map[string]any{"source": dir, "sourceVersion": "1", "isShallow": "false"}, h["operationParameters"])
}

func openDir(t *testing.T, dir string) *deltalog.Table {
	t.Helper()
	st, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), st)
	require.NoError(t, err)
	return tbl
}
