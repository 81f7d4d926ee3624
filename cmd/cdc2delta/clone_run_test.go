package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestCloneSwapThenRunResumesOnce is the create-and-swap restore of a table the
// pipeline maintains: clone version N, swap the clone in for the table, and the next
// `run` applies exactly the records after version N's txn positions, once.
func TestCloneSwapThenRunResumesOnce(t *testing.T) {
	f := newRunFixture(t, fixtureOptions{partitions: 2})
	f.produce(300)
	f.runUntilCaughtUp()
	snap, err := f.table().Snapshot(t.Context())
	require.NoError(t, err)
	cloneAt := snap.Version()
	rowsThen := f.rows()
	tombstonesThen := tombstoneFiles(t, f.dir)
	require.NotEmpty(t, tombstonesThen, "the workload deleted keys")

	changed := f.produce(200)
	f.runUntilCaughtUp()
	rowsNow := f.rows()
	require.NotEqual(t, rowsThen, rowsNow)

	dest := filepath.Join(t.TempDir(), "orders_restored")
	r := exe(t, "clone", "--version", strconv.FormatInt(cloneAt, 10), f.dir, dest)
	require.Equal(t, exitUsage, r.code, "a shallow clone is refused: %s", r.stderr)
	r = exe(t, "clone", "--deep", "--version", strconv.FormatInt(cloneAt, 10), f.dir, dest)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "tombstone")
	show := cli(t, "show", "--format", "csv", "--limit", "0", dest)
	require.Equal(t, exitOK, show.code, show.stderr)
	require.ElementsMatch(t, rowsThen, strings.Split(strings.TrimSpace(show.stdout), "\n"), "the clone reads as version %d", cloneAt)
	require.Len(t, tombstoneFiles(t, dest), 1, "the tombstones that count at version N, in one compacted file")

	// A shallow clone of the same version reads the same and passes verify; the
	// pipeline does not run on it (its files are the source's).
	shallow := filepath.Join(t.TempDir(), "orders_v")
	r = exe(t, "clone", "--shallow", "--version", strconv.FormatInt(cloneAt, 10), f.dir, shallow)
	require.Equal(t, exitOK, r.code, r.stderr)
	show = cli(t, "show", "--format", "csv", "--limit", "0", shallow)
	require.Equal(t, exitOK, show.code, show.stderr)
	require.ElementsMatch(t, rowsThen, strings.Split(strings.TrimSpace(show.stdout), "\n"))
	v := cli(t, "verify", shallow)
	require.Equal(t, exitOK, v.code, v.stdout+v.stderr)
	require.NoError(t, os.RemoveAll(shallow))

	// The swap, with the pipeline stopped: the old table aside, the clone in its place.
	require.NoError(t, os.Rename(f.dir, f.dir+".old"))
	require.NoError(t, os.Rename(dest, f.dir))

	f.runUntilCaughtUp()
	require.Equal(t, rowsNow, f.rows(), "the replay on the swapped table rebuilds the rows, none twice")
	h := cli(t, "history", "--json", f.dir)
	require.Equal(t, exitOK, h.code, h.stderr)
	replayed := 0
	for line := range strings.Lines(h.stdout) {
		var c historyEntry
		require.NoError(t, json.Unmarshal([]byte(line), &c))
		if c.Operation == "MERGE" {
			n, err := strconv.Atoi(c.OperationMetrics.Text("numSourceRows"))
			require.NoError(t, err)
			replayed += n
		}
	}
	require.Equal(t, changed, replayed, "the swapped table consumed exactly the records after version %d", cloneAt)
}

func tombstoneFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(cdctable.TombstoneDir), "*.json"))
	require.NoError(t, err)
	return m
}
