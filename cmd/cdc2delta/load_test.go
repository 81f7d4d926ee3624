package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// loadedTable runs the pipeline until it creates the orders table, then
// loads a snapshot CSV at a position above every row written, after
// deleting them as load asks. It returns the table, the CSV and the
// output of each step.
func loadedTable(t *testing.T) (dir, csvPath string, steps []result) {
	t.Helper()
	f := newRunFixture(t, fixtureOptions{partitions: 1})
	f.produce(60)
	f.runUntilCaughtUp()
	tbl := f.table()
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	posAt := -1
	for i, fd := range snap.Schema().Fields {
		if fd.Name == cdctable.ColPosition {
			posAt = i
		}
	}
	var last codecs.Position
	for _, r := range readRows(t, tbl, -1) {
		p, err := codecs.PositionFromHex(r[posAt].(string))
		require.NoError(t, err)
		if p.Compare(last) > 0 {
			last = p
		}
	}
	var csv strings.Builder
	csv.WriteString("order_id,customer_id,status,amount,order_date,updated_at\n")
	for id := 1; id <= 500; id++ {
		fmt.Fprintf(&csv, "%d,C%03d,shipped,%d.%02d,2024-02-%02d,2024-02-03 04:05:06.789\n", id, id%50, id, id%100, 1+id%28)
	}
	csvPath = filepath.Join(t.TempDir(), "orders.csv")
	require.NoError(t, os.WriteFile(csvPath, []byte(csv.String()), 0o644))
	lsn := last.Commit.String()
	steps = append(steps,
		cli(t, "load", f.dir, "--from", csvPath, "--position", lsn),
		cli(t, "delete", f.dir, "--where", "true"),
		cli(t, "load", f.dir, "--from", csvPath, "--position", lsn))
	return f.dir, csvPath, steps
}

// TestLoadCommand loads a snapshot into a table the pipeline created:
// refused while rows at or below the position are live, then loaded; the
// table then passes verify and equals the file for reconcile.
func TestLoadCommand(t *testing.T) {
	dir, csvPath, steps := loadedTable(t)
	require.Equal(t, exitUsage, steps[0].code, steps[0].stdout)
	require.Contains(t, steps[0].stderr, "live rows")
	require.Contains(t, steps[0].stderr, "delete them first (cdc2delta delete TABLE --where \"_cdc_position <= '")
	require.Equal(t, exitOK, steps[1].code, steps[1].stderr)
	require.Equal(t, exitOK, steps[2].code, steps[2].stderr)
	require.Regexp(t, `written 500 rows in 1 files \(.* read, 100%\) in \d+s\n`, steps[2].stdout)
	require.Regexp(t, `loaded 500 rows into .* at version \d+, position [0-9a-f:]+\n`, steps[2].stdout)

	res := cli(t, "verify", dir)
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	res = cli(t, "reconcile", dir, "--against", csvPath)
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "equal\n")

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{dir, "--from", csvPath}, "--position POS are required"},
		{[]string{dir, "--from", csvPath, "--position", "12"}, "is not an LSN"},
		{[]string{dir, "--from", csvPath, "--position", "00000000:00000000:0001"}, "a truncate or an earlier load at"},
	} {
		res = cli(t, append([]string{"load"}, tc.args...)...)
		require.Equal(t, exitUsage, res.code, res.stdout+res.stderr)
		require.Contains(t, res.stderr, tc.msg)
	}
}

func TestParseLoadPosition(t *testing.T) {
	a, err := parseLoadPosition("0000002b:00000d98:0002")
	require.NoError(t, err)
	b, err := parseLoadPosition("0x0000002B00000D980002")
	require.NoError(t, err)
	require.Equal(t, a, b)
	lsn, _ := codecs.ParseLSN("0000002b:00000d98:0002")
	next, _ := codecs.ParseLSN("0000002b:00000d98:0003")
	// Every change of that commit orders at or below it, none of the next.
	require.LessOrEqual(t, codecs.Position{Commit: lsn, Change: next, Serial: 1 << 40}.Compare(a), 0)
	require.Positive(t, codecs.Position{Commit: next}.Compare(a))
	p, err := parseLoadPosition("0000002b:00000d98:0002/0000002b:00000d90:0001/3")
	require.NoError(t, err)
	require.Equal(t, int64(3), p.Serial)
}
