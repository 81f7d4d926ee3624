package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakePeers stands in for bench_peers.py: `check` reports every table with
// FAKE_ROWS rows and one checksum, except cdc2delta-cow's when
// FAKE_CHECK=differ; `plot` does nothing.
const fakePeers = `cmd=$1; shift
case $cmd in
check)
  out=""; tables=""
  while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$2; shift 2;;
    --table) tables="$tables ${2%%=*}"; shift 2;;
    *) shift;;
    esac
  done
  printf '{"tables": {' > "$out"; sep=""
  for t in $tables; do
    sum=0123456789abcdef
    if [ "$FAKE_CHECK" = differ ] && [ "$t" = cdc2delta-cow ]; then sum=fedcba9876543210; fi
    printf '%s"%s": {"rows": %s, "checksum": "%s", "read_seconds": 0.5}' "$sep" "$t" "$FAKE_ROWS" "$sum" >> "$out"; sep=","
  done
  printf '}, "versions": {"fake": "1"}}' >> "$out";;
plot) exit 0;;
*) exit 9;;
esac
`

// runFakeBench runs the orchestrator on workload 2b of the tiny preset with
// the cdc2delta systems and the fake check.
func runFakeBench(t *testing.T, check string, rows int) (code int, out string, stderr string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "peers.sh")
	require.NoError(t, os.WriteFile(script, []byte(fakePeers), 0o755))
	t.Setenv(helperEnv, "main") // the re-executed test binary runs cdc2bench
	t.Setenv("FAKE_CHECK", check)
	t.Setenv("FAKE_ROWS", strconv.Itoa(rows))
	out = filepath.Join(dir, "out")
	var errBuf bytes.Buffer
	code = run(t.Context(), []string{"cdc2bench", "-preset", "tiny", "-out", out, "-workloads", "2b",
		"-systems", "cdc2delta-dv,cdc2delta-cow", "-python", "/bin/sh", "-peers", script}, &errBuf)
	return code, out, errBuf.String()
}

// tinyRows is the row count the generator expects after workload name.
func tinyRows(t *testing.T, name string) int {
	ws, err := selectWorkloads(workloads(presets["tiny"]), name)
	require.NoError(t, err)
	g := newGenerator(workloadSeed(1, name), presets["tiny"].BaseRows)
	g.batches(ws[0])
	return g.rows
}

func TestBenchPasses(t *testing.T) {
	rows := tinyRows(t, "2b")
	code, out, stderr := runFakeBench(t, "equal", rows)
	require.Equal(t, 0, code, stderr)
	var res results
	require.NoError(t, readJSON(filepath.Join(out, "results.json"), &res))
	require.Empty(t, res.Failures)
	require.Len(t, res.Workloads, 1)
	w := res.Workloads[0]
	require.True(t, w.ChecksumsEqual)
	require.Equal(t, rows, w.ExpectedRows)
	require.Len(t, w.Systems, 2)
	for _, s := range w.Systems {
		require.Empty(t, s.Error)
		require.Equal(t, 2*200, s.Events)
		require.Positive(t, s.RowsPerSecond)
		require.Positive(t, s.PeakRSSMiB)
		require.Positive(t, s.BytesWritten)
		require.Equal(t, 0.5, s.ReadSeconds)
		require.Equal(t, []int{2000, w.Systems[0].Batches[1].TableRowsBefore}, []int{s.Batches[0].TableRowsBefore, s.Batches[1].TableRowsBefore})
	}
	require.Equal(t, "1", res.Versions["fake"])
	md, err := os.ReadFile(filepath.Join(out, "BENCHMARKS.md"))
	require.NoError(t, err)
	require.NotContains(t, string(md), "FAILED")
	require.Contains(t, string(md), "| cdc2delta-dv |")
	require.Contains(t, string(md), "all equal, "+strconv.Itoa(rows)+" rows")
	require.Contains(t, stderr, "cdc2delta-dv: batch 2/2")
}

func TestBenchFailsOnDifferentChecksums(t *testing.T) {
	code, out, stderr := runFakeBench(t, "differ", tinyRows(t, "2b"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "final tables differ")
	require.Contains(t, stderr, "[cdc2delta-cow: ")
	require.Contains(t, stderr, "[cdc2delta-dv: ")
	md, err := os.ReadFile(filepath.Join(out, "BENCHMARKS.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "**This run FAILED**")
	require.Contains(t, string(md), "**NOT EQUAL**")
}

func TestBenchFailsOnWrongRowCount(t *testing.T) {
	code, _, stderr := runFakeBench(t, "equal", tinyRows(t, "2b")+1)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "rows, want")
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"cdc2bench", "-preset", "huge", "-out", "x"},
		{"cdc2bench", "-preset", "tiny"},
		{"cdc2bench", "-preset", "tiny", "-out", "x", "-systems", "duckdb"},
		{"cdc2bench", "-preset", "tiny", "-out", "x", "-workloads", "9"},
		{"cdc2bench", "-preset", "tiny", "-out", "x", "-systems", "deltars", "-python", ""},
	} {
		var errBuf bytes.Buffer
		require.Equal(t, 2, run(t.Context(), args, &errBuf), "%v: %s", args, errBuf.String())
	}
}
