package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReconcileCommand: equal as values (decimals and timestamps written
// other ways), then differences with exit 1, then bad input with exit 2.
func TestReconcileCommand(t *testing.T) {
	dir := t.TempDir()
	testTable(t, dir) // ids 1, 3, 4, 5 live
	write := func(content string) string {
		p := filepath.Join(t.TempDir(), "expected.csv")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	equal := write("id,name,amount,ts\n" +
		"1,a,12.5,2023-11-14 22:13:20.000001\n" +
		"3,c,3,2023-11-14T23:13:20.000003+01:00\n" +
		"4,d,4.00,2023-11-14 22:13:20.000004\n" +
		"5,e,5.000,2023-11-14T22:13:20.000005Z\n")
	res := cli(t, "reconcile", dir, "--against", equal)
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, ": 4 rows; ")
	require.Contains(t, res.stdout, "compared name, amount, ts\n")
	require.Contains(t, res.stdout, "\nequal\n")

	differ := write("id,name,amount\n1,a,12.51\n2,b,2.00\n3,c,3.00\n4,d,4.00\n")
	res = cli(t, "reconcile", dir, "--against", differ, "--key", "id")
	require.Equal(t, exitFailure, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "missing (in the file, not in the table): 1\n  id=2\n")
	require.Contains(t, res.stdout, "extra (in the table, not in the file): 1\n  id=5\n")
	require.Contains(t, res.stdout, "different: 1\n  id=1: amount table=12.50 file=12.51\n")
	require.Contains(t, res.stderr, "the table and the file differ")

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{dir, "--against", write("id,colour\n1,red\n")}, `column "colour" of`},
		{[]string{dir, "--against", write("id,amount\n1,x\n")}, `line 2 column amount: "x" is not a decimal(10,2)`},
		{[]string{dir, "--against", "/nonexistent.csv"}, "no such file"},
		{[]string{filepath.Join(dir, "nope"), "--against", equal}, "no table at"},
		{[]string{dir}, "--against FILE is required"},
	} {
		res = cli(t, append([]string{"reconcile"}, tc.args...)...)
		require.Equal(t, exitUsage, res.code, "%v: %s", tc.args, res.stderr)
		require.Contains(t, res.stderr, tc.msg)
	}
}
