package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRestoreThenRunReplays checks that after `restore --version N` the next `run`
// re-applies exactly the events after version N's txn positions: the table ends as it
// was before the restore, and the commits after the restore consumed exactly the
// records produced after version N.
func TestRestoreThenRunReplays(t *testing.T) {
	f := newRunFixture(t, fixtureOptions{partitions: 2})
	f.produce(300)
	f.runUntilCaughtUp()
	tbl := f.table()
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	restoreTo := snap.Version()
	rowsThen := f.rows()
	txnThen := snap.Txns()

	changed := f.produce(200)
	f.runUntilCaughtUp()
	rowsBefore := f.rows()
	require.NotEqual(t, rowsThen, rowsBefore, "the second run changed the table")

	r := exe(t, "restore", "--version", strconv.FormatInt(restoreTo, 10), f.dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	snap, err = f.table().Snapshot(t.Context())
	require.NoError(t, err)
	restored := snap.Version()
	require.Equal(t, rowsThen, f.rows(), "restore brings back version %d's rows", restoreTo)
	for id, txn := range txnThen {
		got, ok := snap.TxnVersion(id)
		require.True(t, ok, id)
		require.Equal(t, txn.Version, got, "restore rewinds txn %s", id)
	}

	f.runUntilCaughtUp()
	require.Equal(t, rowsBefore, f.rows(), "the replay after the restore rebuilds the table")

	// The commits after the restore consumed exactly the records after the restored
	// positions: not the whole topic, not nothing.
	h := cli(t, "history", "--json", f.dir)
	require.Equal(t, exitOK, h.code, h.stderr)
	replayed := 0
	for line := range strings.Lines(h.stdout) {
		var c historyEntry
		require.NoError(t, json.Unmarshal([]byte(line), &c))
		if c.Version > restored && c.Operation == "MERGE" {
			n, err := strconv.Atoi(c.OperationMetrics.Text("numSourceRows"))
			require.NoError(t, err)
			replayed += n
		}
	}
	require.Equal(t, changed, replayed)
}
