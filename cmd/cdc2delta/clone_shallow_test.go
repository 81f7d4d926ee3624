package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShallowCloneReadsSourceFilesAndVacuumKeepsThem: a shallow clone names the
// source's files by absolute path (the source's directory name escaped), reads as the
// source at that version, is refused by commands that write, and the source's vacuum
// keeps the files it names until the clone is gone.
func TestShallowCloneReadsSourceFilesAndVacuumKeepsThem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "src table%")
	testTable(t, dir)
	dest := filepath.Join(t.TempDir(), "orders_v2")
	r := exe(t, "clone", "--shallow", "--version", "2", dir, dest)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "(shallow): 2 files named by absolute URI, 2 txn positions")

	log, err := os.ReadFile(filepath.Join(dest, "_delta_log", "00000000000000000000.json"))
	require.NoError(t, err)
	require.Contains(t, string(log), `"path":"`+filepath.ToSlash(filepath.Dir(dir))+`/src%20table%25/`)
	require.Contains(t, string(log), `"storageType":"p","pathOrInlineDv":"file://`+filepath.ToSlash(filepath.Dir(dir))+`/src%20table%25/deletion_vector_`)
	require.Contains(t, string(log), `"isShallow":"true"`)

	show := func(args ...string) string {
		r := cli(t, append([]string{"show", "--format", "csv", "--limit", "0"}, args...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		return r.stdout
	}
	atV2 := show("--version", "2", dir)
	require.Equal(t, atV2, show(dest), "the clone reads as the source at version 2")
	r = cli(t, "describe", dest)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "Read, not written, by cdc2delta: 2 live data files have an absolute path")

	r = cli(t, "optimize", dest)
	require.Equal(t, exitFailure, r.code, r.stdout)
	require.Contains(t, r.stderr, "is read but not written")
	r = cli(t, "clone", "--deep", dest, filepath.Join(t.TempDir(), "deep"))
	require.Equal(t, exitFailure, r.code, r.stdout)
	require.Contains(t, r.stderr, "deep-clone the table that holds the files")

	// The source drops every row; its vacuum keeps what the clone names.
	r = cli(t, "delete", dir, "--where", "id > 0")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = cli(t, "vacuum", "--retain", "0h", "--force", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "keeping 3 files that the shallow clone "+dest+" names")
	require.Equal(t, atV2, show(dest), "the clone still reads after the source's vacuum")

	require.NoError(t, os.RemoveAll(dest))
	r = cli(t, "vacuum", "--retain", "0h", "--force", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stderr, "shallow clone "+dest+" (recorded in _cdc2delta/shallow_clones/")
	t.Log(r.stdout)
	require.Contains(t, r.stdout, "deleted 3 files")
}
