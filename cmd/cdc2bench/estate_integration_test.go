//go:build integration

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestEstateSmoke runs the estate scenario tiny (20 tables of three sizes,
// loaded in bulk, 500 updates/s over them for 15 s, change logs, control
// table and maintenance on, then a SIGKILL and a restart) against the real
// broker and binary, and checks that every goal was measured and the
// numbers are sane. Whether the goals are met is the benchmark's business,
// not this test's: on a loaded machine they may not be.
func TestEstateSmoke(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cdc2delta")
	msg, err := exec.Command("go", "build", "-o", bin, "github.com/cdc2delta/cdc2delta/cmd/cdc2delta").CombinedOutput()
	require.NoError(t, err, "%s", msg)
	out := t.TempDir()
	var stderr bytes.Buffer
	code := run(t.Context(), []string{"cdc2bench", "estate", "-bin", bin, "-out", out,
		"-brokers", strings.Join(fulltier.KafkaBrokers(t), ","),
		"-big-tables", "1", "-big-rows", "20000", "-medium-tables", "3", "-medium-rows", "2000",
		"-small-tables", "16", "-small-rows", "100", "-hot", "3",
		"-rate", "500", "-duration", "15s", "-max-delay", "2s",
		"-python", fulltier.PythonPath(t), "-peers", filepath.Join(fulltier.ScriptsDir(t), "bench_peers.py")}, &stderr)
	t.Log(tail(stderr.String(), 3000))
	require.Equal(t, 0, code)

	var rep estateReport
	require.NoError(t, readJSON(filepath.Join(out, "results.json"), &rep))
	require.Empty(t, rep.Error)
	r := rep.Run
	require.NotNil(t, r)
	require.Equal(t, 20, r.Tables)
	require.EqualValues(t, 20000+3*2000+16*100, r.Rows)
	require.Len(t, r.TableStates, 20)
	hot := 0
	for _, ts := range r.TableStates {
		require.Positive(t, ts.Events, "every table gets updates: %s", ts.Name)
		require.Positive(t, ts.LiveFiles, ts.Name)
		if ts.Hot {
			hot++
		}
	}
	require.Equal(t, 3, hot)
	// 500/s for 15 s on a ticker, less what a loaded machine keeps the
	// source from producing (the report says how much).
	require.LessOrEqual(t, r.Events, 7_600)
	require.Greater(t, r.Events, 2_000)
	require.InDelta(t, float64(r.Events)/r.Seconds, r.EventsPerSecond, 1e-6)
	require.Positive(t, r.CPUSeconds)
	require.Positive(t, r.PeakRSSBytes)
	require.Positive(t, r.KillRestartSeconds)
	require.NotEmpty(t, r.Lag)
	for _, f := range []*struct{ p50, p99 float64 }{
		{r.FreshnessHot.P50Seconds, r.FreshnessHot.P99Seconds}, {r.FreshnessRest.P50Seconds, r.FreshnessRest.P99Seconds},
	} {
		require.Positive(t, f.p50)
		require.LessOrEqual(t, f.p50, f.p99)
		require.Less(t, f.p99, 60.0, "freshness within the run")
	}
	require.Len(t, r.FreshnessClass, 3)
	require.Len(t, rep.Reads, 3, "the busiest table of each class is read")
	for _, rd := range rep.Reads {
		require.Empty(t, rd.Error)
		require.Positive(t, rd.Seconds)
		require.Positive(t, rd.OptimizedSeconds)
	}
	names := map[string]bool{}
	for _, g := range rep.Goals {
		names[g.Name] = true
	}
	for _, n := range []string{"lag bounded", "p99 freshness, hot tables", "p99 freshness, other tables", "peak RSS", "CPU",
		"SIGKILL to all ready", "full scan against OPTIMIZE"} {
		require.True(t, names[n], "goal %q reported", n)
	}
	require.NotNil(t, rep.Costs)
	require.Positive(t, rep.Costs.CPUMicrosPerEvent)
	require.Positive(t, rep.Costs.RSSMiBPerTable)
	require.Positive(t, rep.Costs.RSSMiBPerMillionRows)

	md, err := os.ReadFile(filepath.Join(out, "ESTATE.md"))
	require.NoError(t, err)
	for _, s := range []string{"| SIGKILL to all ready |", "Per-unit costs:", "| small |", "after OPTIMIZE"} {
		require.Contains(t, string(md), s)
	}
	require.NotContains(t, string(md), "FAILED")
}
