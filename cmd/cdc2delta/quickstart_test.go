package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
)

// TestQuickstart runs the quickstart on free ports and checks that its tables hold the
// sample database's current rows, then that a second run on the same folder (persisted
// broker and registry) generates nothing and leaves the tables as they are.
func TestQuickstart(t *testing.T) {
	dir := t.TempDir()
	const events = 2*quickstartKeys + 800 // the snapshot of both tables, then changes
	args := []string{"quickstart", "--dir", dir, "--events", strconv.Itoa(events), "--kafka-port", "0", "--registry-port", "0"}
	r := cli(t, args...)
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, fmt.Sprintf("generated %d Debezium change events", events))
	require.Contains(t, r.stdout, "cdc2delta show --limit 10 ")
	require.Contains(t, r.stdout, "delta_scan(")

	// The same workload, replayed in memory, says what the tables must hold.
	counts := map[string]int{}
	for _, src := range sampleRows(t, events) {
		d := src.def
		loc := filepath.Join(dir, "tables", d.Database, d.Schema, d.Name)
		r := cli(t, "show", "--format", "jsonl", "--limit", "0", loc)
		require.Equal(t, exitOK, r.code, r.stderr)
		counts[loc] = len(jsonLines(t, r.stdout))
		require.Equal(t, len(src.rows), counts[loc], "rows of %s", loc)
	}

	r = cli(t, args...)
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "not generating more")
	require.Contains(t, r.stdout, fmt.Sprintf("applied %d / %d events", events, events))
	for loc, n := range counts {
		r := cli(t, "show", "--format", "jsonl", "--limit", "0", loc)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), n)
	}
}

// sourceTable is a sample table's definition and its rows as the workload left them.
type sourceTable struct {
	def  dbzgen.TableDef
	rows []dbzgen.Row
}

// sampleRows replays the quickstart's workload (same seed and options) in memory
// and returns each table's rows by "schema.table".
func sampleRows(t *testing.T, events int) map[string]sourceTable {
	t.Helper()
	reg, err := registry.New()
	require.NoError(t, err)
	require.NoError(t, reg.Start(t.Context(), "127.0.0.1:0"))
	t.Cleanup(func() { _ = reg.Close() }) // closing a test registry cannot fail usefully
	src, err := sr.NewClient(sr.URLs(reg.URL()))
	require.NoError(t, err)
	gen := dbzgen.New(src, dbzgen.DefaultOptions())
	var tables []*dbzgen.Table
	for _, def := range dbzgen.SampleDatabase() {
		tb, err := gen.Table(def)
		require.NoError(t, err)
		tables = append(tables, tb)
	}
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 1, Keys: quickstartKeys, Snapshot: true}, tables...)
	require.NoError(t, err)
	for range events {
		w.Next()
	}
	out := map[string]sourceTable{}
	for _, tb := range tables {
		d := tb.Def()
		out[d.Schema+"."+d.Name] = sourceTable{def: d, rows: w.Rows(tb)}
	}
	return out
}

// TestQuickstartPortInUse: a port the quickstart needs that something else holds (a
// second quickstart) is named, with the flags that avoid it.
func TestQuickstartPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	for _, flags := range [][]string{
		{"--kafka-port", port, "--registry-port", "0"},
		{"--kafka-port", "0", "--registry-port", port},
	} {
		r := exe(t, append([]string{"quickstart", "--dir", t.TempDir()}, flags...)...)
		require.Equal(t, exitFailure, r.code, r.stdout+r.stderr)
		require.Contains(t, r.stderr, "port "+port+" is in use (another quickstart?): pass --kafka-port 0 --registry-port 0 "+
			"for free ports, or stop the other one")
	}
}

// TestQuickstartNextSteps runs the built binary's quickstart as a new user does, in a
// fresh folder, then every cdc2delta command it prints, exactly as printed (through sh,
// comments and all): the table commands at once, and the consumer group's commands
// (offsets, replay, run --config) against the `quickstart --keep-running` it says to
// start. With the defaults, its metrics URL answers while it runs, the tables have
// several versions and deletion vectors, the change log and status --group (a cut)
// are shown, optimize compacts, the configuration it writes validates, and a rerun
// warns about nothing.
func TestQuickstartNextSteps(t *testing.T) {
	work := t.TempDir()
	sh := func(line string) result {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "sh", "-c", line)
		cmd.Dir = work
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return result{code, out.String(), errb.String()}
	}
	// The first run in the background, to reach its metrics URL while it runs.
	qs := exec.CommandContext(t.Context(), "sh", "-c", "exec "+shellQuote(binary)+" quickstart --kafka-port 0 --registry-port 0") // the defaults a user keeps
	qs.Dir = work
	var firstOut, firstErr syncBuffer
	qs.Stdout, qs.Stderr = &firstOut, &firstErr
	require.NoError(t, qs.Start())
	defer func() { _ = qs.Process.Kill() }() // a test that failed early; Wait below otherwise
	var metricsURL string
	assert.Eventually(t, func() bool {
		m := regexp.MustCompile(`\nmetrics: +(http://127\.0\.0\.1:\d+)/metrics and /readyz`).FindStringSubmatch(firstOut.String())
		if m != nil {
			metricsURL = m[1]
		}
		return m != nil
	}, 30*time.Second, 20*time.Millisecond)
	require.NotEmpty(t, metricsURL, "no metrics URL printed: %s%s", firstOut.String(), firstErr.String())
	for _, path := range []string{"/metrics", "/readyz"} {
		resp, err := http.Get(metricsURL + path)
		require.NoError(t, err, "%s answers while the quickstart runs", path)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		_ = resp.Body.Close() // read to the end
		if path == "/metrics" {
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
			require.Contains(t, string(body), "cdc2delta_")
		} else { // ready, or not yet (before the group's first assignment), naming why
			require.Contains(t, []int{http.StatusOK, http.StatusServiceUnavailable}, resp.StatusCode, "%s: %s", path, body)
			require.NotEmpty(t, body, path)
		}
	}
	require.NoError(t, qs.Wait(), "%s%s", firstOut.String(), firstErr.String())
	require.Empty(t, firstErr.String())
	out := firstOut.String()
	require.Contains(t, out, "round 5/5: produced 10000 change events")
	require.Contains(t, out, "\nConsumer group: cdc2delta-quickstart ")
	cfg := filepath.Join(work, "cdc2delta-quickstart", "cdc2delta.yaml")
	require.Contains(t, out, "\nConfiguration:  "+cfg+" ")

	var now, broker []string // the lines to run now, and those that need the broker
	keepLine := ""
	for _, line := range strings.Split(out, "\n") {
		cmd, ok := strings.CutPrefix(line, "  "+shellQuote(binary)+" ")
		switch {
		case !ok:
		case strings.HasPrefix(cmd, "quickstart --keep-running"):
			keepLine = strings.TrimSpace(line)
		case keepLine != "":
			broker = append(broker, strings.TrimSpace(line))
		default:
			now = append(now, strings.TrimSpace(line))
		}
	}
	require.Len(t, now, 9, out)
	require.Len(t, broker, 3, out)
	require.NotEmpty(t, keepLine, out)

	orders := filepath.Join(work, "cdc2delta-quickstart", "tables", "sales", "dbo", "orders")
	first, err := os.ReadFile(filepath.Join(orders, "_delta_log", "00000000000000000000.json"))
	require.NoError(t, err)
	require.Contains(t, string(first), `source._cdc_position > target._cdc_position`, "predicates stored as Spark stores them")
	require.NotContains(t, string(first), `u003e`)
	h := cli(t, "history", "--json", orders)
	require.Equal(t, exitOK, h.code, h.stderr)
	versions := jsonLines(t, h.stdout)
	require.GreaterOrEqual(t, len(versions), 3, "several versions to look back at, restore to and optimize")
	dvs := 0
	for _, v := range versions {
		m, _ := v["operationMetrics"].(map[string]any)
		n, _ := strconv.Atoi(fmt.Sprint(m["numTargetDeletionVectorsAdded"]))
		dvs += n
	}
	require.Positive(t, dvs, "the pipeline wrote deletion vectors: %s", h.stdout)
	ran := map[string]string{} // the output of each printed command, by subcommand
	for _, line := range now {
		r := sh(line)
		require.Equal(t, exitOK, r.code, "%s\n%s%s", line, r.stdout, r.stderr)
		require.NotEmpty(t, r.stdout, line)
		ran[strings.Fields(strings.TrimPrefix(line, shellQuote(binary)+" "))[0]] += r.stdout
	}
	require.Contains(t, ran["describe"], "deletionVectors")
	require.Contains(t, strings.Join(now, "\n"), filepath.Join("tables", "sales", "dbo", "orders_changes"), "the change log is shown")
	require.Contains(t, ran["status"], "cut of group sales: every transaction through commit LSN")
	require.NotContains(t, ran["optimize"], "nothing to optimize")
	h = cli(t, "history", "--json", "--limit", "2", orders)
	ops := jsonLines(t, h.stdout)
	require.Equal(t, "RESTORE", ops[0]["operation"])
	require.Equal(t, "OPTIMIZE", ops[1]["operation"], "optimize compacted what the run left")
	require.Equal(t, exitOK, exe(t, "validate", "--config", cfg).code)

	// The keep-running quickstart, in the background as in another terminal.
	keep := exec.CommandContext(t.Context(), "sh", "-c", "exec "+keepLine)
	keep.Dir = work
	var keepOut, keepErr syncBuffer
	keep.Stdout, keep.Stderr = &keepOut, &keepErr
	require.NoError(t, keep.Start())
	defer func() { _ = keep.Process.Kill() }() // a test that failed early; Wait below otherwise
	require.Eventually(t, func() bool { return strings.Contains(keepOut.String(), "keep running until Ctrl-C") },
		60*time.Second, 50*time.Millisecond, "%s%s", keepOut.String(), keepErr.String())
	require.Contains(t, keepOut.String(), "not generating more")
	for _, line := range broker {
		rest := strings.TrimPrefix(line, shellQuote(binary)+" ")
		require.Contains(t, keepOut.String(), "  "+line+"\n", "the keep-running run prints the same commands")
		if !strings.HasPrefix(rest, "run ") {
			r := sh(line)
			require.Equal(t, exitOK, r.code, "%s\n%s%s", line, r.stdout, r.stderr)
			continue
		}
		run := exec.CommandContext(t.Context(), "sh", "-c", "exec "+line)
		run.Dir = work
		var runLog syncBuffer
		run.Stdout, run.Stderr = &runLog, &runLog
		require.NoError(t, run.Start())
		require.Eventually(t, func() bool { return strings.Contains(runLog.String(), `reason="operator offset reset (replay)"`) },
			30*time.Second, 50*time.Millisecond, runLog.String())
		require.NoError(t, run.Process.Signal(os.Interrupt))
		require.NoError(t, run.Wait(), runLog.String())
	}
	require.NoError(t, keep.Process.Signal(os.Interrupt))
	require.NoError(t, keep.Wait(), "%s%s", keepOut.String(), keepErr.String())
	require.NotContains(t, keepErr.String(), "retr", "a rerun warns about nothing")

	r := sh(shellQuote(binary) + " quickstart --kafka-port 0 --registry-port 0")
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	require.Empty(t, r.stderr, "a rerun warns about nothing")
}
