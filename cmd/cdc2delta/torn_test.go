package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTornLatestCommit tears the table's latest commit, as a crash mid-write
// does where the file system has no hard links, and follows what `run` says to
// do: afterwards the table holds every source row. `restore`, which cannot read
// the log past the torn commit, says the same.
func TestTornLatestCommit(t *testing.T) {
	f := newRunFixture(t, fixtureOptions{partitions: 2})
	f.produce(200)
	f.runUntilCaughtUp()
	snap, err := f.table().Snapshot(t.Context())
	require.NoError(t, err)
	latest := snap.Version()
	rel := fmt.Sprintf("_delta_log/%020d.json", latest)
	data, err := os.ReadFile(filepath.Join(f.dir, rel))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, rel), data[:len(data)/2], 0o644))
	f.produce(100)

	log := f.runUntilLogged("table stopped")
	step := regexp.MustCompile(`the table's latest commit (\S+) is torn: move that file out of the table; the table is then whole at version (\d+)`)
	m := step.FindStringSubmatch(log)
	require.NotNil(t, m, log)
	require.Equal(t, []string{rel, strconv.FormatInt(latest-1, 10)}, m[1:])

	r := cli(t, "restore", "--version", strconv.FormatInt(latest-1, 10), f.dir)
	require.Equal(t, exitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, fmt.Sprintf("move %s out of the table: the table is then whole at version %d", rel, latest-1))

	// Follow the hint.
	require.NoError(t, os.Rename(filepath.Join(f.dir, m[1]), filepath.Join(t.TempDir(), "torn.json")))
	f.runUntilCaughtUp()
	f.requireSourceRows()
	r = cli(t, "restore", "--version", strconv.FormatInt(latest-2, 10), f.dir)
	require.Equal(t, exitOK, r.code, "restore reads the table again: %s", r.stderr)
}
