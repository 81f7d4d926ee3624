package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestVerifyCommand runs verify on a table the pipeline wrote, then on the
// same table with a data file added twice.
func TestVerifyCommand(t *testing.T) {
	f := newRunFixture(t, fixtureOptions{partitions: 2})
	f.produce(300)
	f.runUntilCaughtUp()
	res := cli(t, "verify", f.dir)
	require.Equal(t, exitOK, res.code, res.stderr)
	require.Regexp(t, `^ok: .* version \d+: \d+ files, \d+ live rows, .* 0 problems\n$`, res.stdout)

	tbl := f.table()
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	add := snap.Files()[0]
	data, err := os.ReadFile(filepath.Join(f.dir, add.Path))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "part-copy.parquet"), data, 0o644))
	add.Path = "part-copy.parquet"
	_, err = tbl.Commit(t.Context(), snap, []deltalog.Action{{Add: &add}}, deltalog.Operation{Name: "WRITE"})
	require.NoError(t, err)

	res = cli(t, "verify", "--max-problems", "2", f.dir)
	require.Equal(t, exitFailure, res.code, res.stdout)
	require.Regexp(t, `^duplicate key: file part-copy.parquet row (\d+) key \(order_id=\d+\): also live in file part-\S+ row \d+\n`, res.stdout)
	require.Contains(t, res.stderr, "problems (2 listed)")

	plain := t.TempDir()
	testTable(t, plain)
	res = cli(t, "verify", plain)
	require.Equal(t, exitUsage, res.code, res.stderr)
	require.Contains(t, res.stderr, "is not a table cdc2delta maintains")
}
