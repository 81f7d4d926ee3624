package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHistory(t *testing.T) {
	dir := t.TempDir()
	testTable(t, dir)
	r := cli(t, "history", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 4)
	require.True(t, strings.HasPrefix(lines[0], "VERSION"))
	require.True(t, strings.HasPrefix(lines[1], "2 "), lines[1])
	require.Contains(t, lines[1], "DELETE")
	require.Contains(t, lines[1], "numDeletedRows=1")
	require.Contains(t, lines[2], "WRITE")
	require.Contains(t, lines[3], "CREATE TABLE")

	r = cli(t, "history", "--json", "--limit", "2", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	h := jsonLines(t, r.stdout)
	require.Len(t, h, 2)
	require.EqualValues(t, 2, h[0]["version"])
	require.Equal(t, "DELETE", h[0]["operation"])
	require.Equal(t, `["id = 2"]`, h[0]["operationParameters"].(map[string]any)["predicate"])
	require.EqualValues(t, 1, h[1]["version"])
}

func TestDescribe(t *testing.T) {
	dir := t.TempDir()
	testTable(t, dir)
	r := cli(t, "describe", "--json", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	var d tableDescription
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	require.EqualValues(t, 2, d.Version)
	require.Equal(t, 2, d.NumFiles)
	require.NotNil(t, d.NumRows)
	require.EqualValues(t, 4, *d.NumRows)
	require.Equal(t, 1, d.DeletionVectors)
	require.Equal(t, "orders table", d.Description)
	require.Equal(t, columnInfo{Name: "id", Type: "long", Comment: "order id"}, d.Columns[0])
	require.Len(t, d.Txns, 2)
	require.Equal(t, "orders-0", d.Txns[0].AppID)
	require.EqualValues(t, 30, d.Txns[0].Version)
	require.EqualValues(t, 5, d.Txns[1].Version)
	require.Contains(t, d.Protocol.ReaderFeatureSet(), "deletionVectors")

	r = cli(t, "describe", "--version", "0", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Regexp(t, `\nData: +1 file, [^,]+, 3 rows, 0 deletion vectors\n`, r.stdout)
	require.Contains(t, r.stdout, "3 rows")
	require.Contains(t, r.stdout, "order id")
	require.Contains(t, r.stdout, "orders-0  10")
	require.Contains(t, r.stdout, "cdc2delta.keyColumns = [\"id\"]")
}

func TestShow(t *testing.T) {
	dir := t.TempDir()
	testTable(t, dir)

	r := cli(t, "show", "--format", "jsonl", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	rows := jsonLines(t, r.stdout)
	var got []float64
	for _, m := range rows {
		got = append(got, m["id"].(float64))
	}
	require.ElementsMatch(t, []float64{1, 3, 4, 5}, got, "id 2 is deleted by the deletion vector")
	require.Contains(t, strings.Split(r.stdout, "\n"), `{"id":1,"name":"a","amount":12.50,"ts":"2023-11-14T22:13:20.000001Z"}`)

	r = cli(t, "show", "--version", "0", "--format", "csv", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "id,name,amount,ts\n3,c,3.00,2023-11-14T22:13:20.000003Z\n1,a,12.50,2023-11-14T22:13:20.000001Z\n2,b,2.00,2023-11-14T22:13:20.000002Z\n", r.stdout)

	r = cli(t, "show", dir, "--limit", "2") // flags after the table work too
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "id  name  amount  ts")
	require.Contains(t, r.stdout, "(2 rows)")

	r = cli(t, "show", "--version", "9", dir)
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, r.stderr, "version 9")

	r = cli(t, "show", "--timestamp", "2000-01-01", dir)
	require.Equal(t, exitFailure, r.code)
}

func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	tbl := testTable(t, dir)
	before := ids(t, tbl, -1)
	r := exe(t, "checkpoint", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "checkpoint written at version 2")
	require.FileExists(t, filepath.Join(dir, "_delta_log", "00000000000000000002.checkpoint.parquet"))
	lc, err := os.ReadFile(filepath.Join(dir, "_delta_log", "_last_checkpoint"))
	require.NoError(t, err)
	require.Contains(t, string(lc), `"version":2`)

	// The table reads the same from the checkpoint alone.
	for v := range 3 {
		require.NoError(t, os.Remove(filepath.Join(dir, "_delta_log", "0000000000000000000"+string(rune('0'+v))+".json")))
	}
	require.Equal(t, before, ids(t, tbl, -1))
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	v, _ := snap.TxnVersion("orders-0")
	require.EqualValues(t, 30, v)
}

func TestRestore(t *testing.T) {
	dir := t.TempDir()
	tbl := testTable(t, dir)
	r := exe(t, "restore", "--version", "0", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "to version 0 as version 3")

	ctx := t.Context()
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 3, snap.Version())
	require.Equal(t, readRows(t, tbl, 0), readRows(t, tbl, -1))
	v, _ := snap.TxnVersion("orders-0")
	require.EqualValues(t, 10, v, "txn goes back to version 0's offset")
	v, _ = snap.TxnVersion("orders-1")
	require.EqualValues(t, -1, v, "a partition version 0 had not consumed replays from the start")

	h := jsonLines(t, cli(t, "history", "--json", "--limit", "1", dir).stdout)[0]
	require.Equal(t, "RESTORE", h["operation"])
	m := h["operationMetrics"].(map[string]any)
	require.Equal(t, "2", m["numRemovedFiles"]) // A with its DV, and B
	require.Equal(t, "1", m["numRestoredFiles"])
	require.Equal(t, "1", m["numOfFilesAfterRestore"])

	// Forward again to version 2: rows and txns of version 2 come back.
	r = exe(t, "restore", "--version", "2", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, []int64{1, 3, 4, 5}, ids(t, tbl, -1))
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	v, _ = snap.TxnVersion("orders-1")
	require.EqualValues(t, 5, v)

	r = exe(t, "restore", "--version", "4", dir)
	require.Equal(t, exitUsage, r.code, "already at the target")
}
