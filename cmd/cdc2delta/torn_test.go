package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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

	ctx, cancel := context.WithCancel(t.Context())
	var log syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runEnv(ctx, []string{"cdc2delta", "run", "--config", f.cfg}, &env{stdout: &log, stderr: &log,
			lookup: func(string) (string, bool) { return "", false }})
	}()
	step := regexp.MustCompile(`the table's latest commit (\S+) is torn: move that file out of the table; the table is then whole at version (\d+)`)
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "table stopped") }, 60*time.Second, 50*time.Millisecond)
	cancel()
	require.Equal(t, exitOK, <-done, log.String())
	m := step.FindStringSubmatch(log.String())
	require.NotNil(t, m, log.String())
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
