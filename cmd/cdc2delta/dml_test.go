package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUpdateDeleteCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders")
	tbl := testTable(t, dir)

	r := cli(t, "delete", dir, "--where", "amount > 3.5", "--dry-run", "--sample", "1")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "dry run: 3 rows in 2 files match")
	require.Contains(t, r.stdout, "(1 row)")
	require.Equal(t, []int64{1, 3, 4, 5}, ids(t, tbl, -1), "a dry run changes nothing")

	r = cli(t, "update", dir, "--set", "name = upper(name)", "--set", "amount = amount * 2", "--where", "id >= 3")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "updated 3 rows")
	r = cli(t, "delete", dir, "--where", "name = 'D'")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "deleted 1 row in 1 file")
	require.Equal(t, []int64{1, 3, 5}, ids(t, tbl, -1))
	r = cli(t, "show", "--format", "csv", dir)
	require.Contains(t, r.stdout, "5,E,10.00")

	r = cli(t, "history", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "UPDATE")
	require.Contains(t, r.stdout, "DELETE")

	r = cli(t, "delete", dir, "--where", "nmae = 'x'")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "--where: column nmae does not exist")
	require.Contains(t, r.stderr, "^")
	r = cli(t, "update", dir, "--set", "amount = name", "--where", "true")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "--set: cannot assign STRING column name to DECIMAL(10,2) column amount")
	r = cli(t, "delete", dir)
	require.Equal(t, exitUsage, r.code)
	r = cli(t, "update", dir, "--where", "true")
	require.Equal(t, exitUsage, r.code)
	r = cli(t, "delete", dir, "--where", "10 / (id - 1) > 0")
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, r.stderr, "DIVIDE_BY_ZERO")
	r = cli(t, "delete", dir, "--where", "id > 100")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "no row matches")
}

// TestEditCDCTable: on a table the processor maintains, keys and _cdc_* columns cannot
// be set, and a DELETE records its tombstones; the processor resumes on the edited table.
func TestEditCDCTable(t *testing.T) {
	f := newRunFixture(t, fixtureOptions{partitions: 1})
	f.produce(120)
	f.runUntilCaughtUp()

	r := cli(t, "update", f.dir, "--set", "order_id = 1", "--where", "true")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "key column")
	r = cli(t, "update", f.dir, "--set", "_cdc_op = 'x'", "--where", "true")
	require.Equal(t, exitUsage, r.code)
	r = cli(t, "delete", f.dir, "--where", "order_id % 3 = 0")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "tombstones")
	f.produce(60)
	f.runUntilCaughtUp()
}
