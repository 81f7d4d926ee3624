//go:build integration

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestBenchTinyEndToEnd runs the tiny preset of workloads 2b and 6 (local
// and S3) through the real peers (scripts/py/bench_peers.py: delta-rs and
// Spark with deletion vectors), moto and the Kafka broker, and checks that
// every system's final table is the same and the report is rendered.
func TestBenchTinyEndToEnd(t *testing.T) {
	python := fulltier.PythonPath(t)
	peers := filepath.Join(fulltier.ScriptsDir(t), "bench_peers.py")
	s3 := fulltier.S3Endpoint(t)
	brokers := strings.Join(fulltier.KafkaBrokers(t), ",")
	t.Setenv(helperEnv, "main") // the re-executed test binary runs cdc2bench
	out := t.TempDir()
	var stderr bytes.Buffer
	code := run(t.Context(), []string{"cdc2bench", "-preset", "tiny", "-out", out, "-workloads", "2b,6",
		"-systems", "cdc2delta-dv,cdc2delta-cow,deltars,spark-dv,cdc2delta-e2e",
		"-python", python, "-peers", peers, "-s3-endpoint", s3, "-brokers", brokers}, &stderr)
	t.Log(tail(stderr.String(), 4000))
	require.Equal(t, 0, code)

	var res results
	require.NoError(t, readJSON(filepath.Join(out, "results.json"), &res))
	require.Empty(t, res.Failures)
	want := map[string][]string{
		"2b":      {sysDV, sysCoW, sysRS, sysSpDV},
		"6-local": {sysDV, sysCoW, sysRS, sysSpDV},
		"6-s3":    {sysDV, sysRS},
	}
	require.Len(t, res.Workloads, len(want))
	for _, w := range res.Workloads {
		require.True(t, w.ChecksumsEqual, "workload %s", w.Name)
		var names []string
		for _, s := range w.Systems {
			names = append(names, s.System)
			require.Empty(t, s.Error)
			require.Equal(t, w.ExpectedRows, int(s.TableRows), "%s %s", w.Name, s.System)
			require.Equal(t, w.Systems[0].Checksum, s.Checksum, "%s %s", w.Name, s.System)
			require.Len(t, s.Batches, w.Batches)
			require.Positive(t, s.PeakRSSMiB)
			require.Positive(t, s.ReadSeconds)
		}
		require.Equal(t, want[w.Name], names)
	}
	// 6-local and 6-s3 apply the same batches to the same base.
	require.Equal(t, res.Workloads[1].Systems[0].Checksum, res.Workloads[2].Systems[0].Checksum)
	require.NotNil(t, res.E2E)
	require.Empty(t, res.E2E.Error)
	require.Positive(t, res.E2E.Result.EventsPerSecond)
	require.NotEmpty(t, res.Versions["deltalake"])

	md, err := os.ReadFile(filepath.Join(out, "BENCHMARKS.md"))
	require.NoError(t, err)
	for _, s := range []string{"## Workload 2b", "| spark-dv |", "## Workload 6-s3", "End to end from Kafka", "all equal"} {
		require.Contains(t, string(md), s)
	}
	require.NotContains(t, string(md), "FAILED")
	for _, p := range []string{"2b.png", "6-local.png", "6-s3.png"} {
		st, err := os.Stat(filepath.Join(out, "plots", p))
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
