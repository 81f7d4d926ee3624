//go:build integration

package e2ebench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor"
)

func TestIntegrationRun(t *testing.T) {
	res, err := Run(t.Context(), Config{
		Brokers: fulltier.KafkaBrokers(t), Prefix: "h25e2e" + strconv.FormatInt(time.Now().UnixNano(), 36),
		Tables: 3, Events: 20_000, Partitions: 3, Keys: 2000, Profile: true,
		LiveRate: 500, LiveDuration: 3 * time.Second,
	})
	require.NoError(t, err)
	t.Log(res)
	require.EqualValues(t, 20_000, res.Events)
	require.Positive(t, res.EventsPerSecond)
	require.Positive(t, res.Commits)
	require.NotEmpty(t, res.CommitsByReason, "the catch-up's commits by reason")
	require.Positive(t, res.PeakHeapBytes)
	require.NotNil(t, res.Latency)
	require.Greater(t, res.Latency.Events, 1000)
	require.Positive(t, res.Latency.P50Seconds)
	require.LessOrEqual(t, res.Latency.P50Seconds, res.Latency.P99Seconds)
	sum := 0.0
	for _, s := range res.CPUShares {
		sum += s
	}
	require.InDelta(t, 1, sum, 1e-9)
	require.Positive(t, res.CPUShares[CatDecode], "decoding must show in the profile")
	require.NoError(t, res.WriteJSON(filepath.Join(t.TempDir(), "result.json")))
}

// TestIntegrationScaleOut runs the scale-out harness small: one and then
// two `cdc2delta run` instances, each held to a core, on one backlog from
// the real broker; the harness fails unless both write the same table. The
// backlog must outlast the second instance's join, a second or two on a
// loaded machine.
func TestIntegrationScaleOut(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cdc2delta")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/cdc2delta/cdc2delta/cmd/cdc2delta").CombinedOutput()
	require.NoError(t, err, "%s", out)
	res, err := RunScaleOut(t.Context(), ScaleOutConfig{Brokers: fulltier.KafkaBrokers(t), Binary: bin, Root: t.TempDir(),
		Events: 400_000, Keys: 20_000, Timeout: 5 * time.Minute})
	require.NoError(t, err)
	require.Len(t, res.Runs, 2)
	for _, r := range res.Runs {
		t.Log(r)
		require.Positive(t, r.Events)
		require.Positive(t, r.Commits)
		require.Len(t, r.CPUSeconds, r.Instances)
	}
	require.Positive(t, res.Ratio)
}

// BenchmarkE2E is the performance check of issue #4: a backlog of events
// over three tables, from the real broker, on this machine's cores. Set
// CDC2DELTA_E2E_EVENTS to change the backlog, CDC2DELTA_E2E_JSON to keep
// the result, CDC2DELTA_E2E_PROFILE and CDC2DELTA_E2E_HEAP_PROFILE to keep
// the CPU and heap profiles, and
// CDC2DELTA_E2E_BATCH to set the batch records limit.
func BenchmarkE2E(b *testing.B) {
	events, batch := envInt(b, "CDC2DELTA_E2E_EVENTS", 300_000), envInt(b, "CDC2DELTA_E2E_BATCH", 0)
	var last Result
	for b.Loop() {
		res, err := Run(b.Context(), Config{
			Brokers: fulltier.KafkaBrokers(b), Prefix: "e2ebench" + strconv.FormatInt(time.Now().UnixNano(), 36),
			Tables: 3, Events: events, Profile: true, ProfilePath: os.Getenv("CDC2DELTA_E2E_PROFILE"),
			HeapProfilePath: os.Getenv("CDC2DELTA_E2E_HEAP_PROFILE"),
			Batch:           processor.BatchLimits{Records: batch},
		})
		require.NoError(b, err)
		b.Log(res)
		last = res
	}
	b.ReportMetric(last.EventsPerSecond, "events/s")
	b.ReportMetric(last.EventsPerCPUSecond, "events/cpu-s")
	b.ReportMetric(float64(last.PeakHeapBytes>>20), "peak-heap-MiB")
	if last.Latency != nil {
		b.ReportMetric(last.Latency.P50Seconds*1000, "p50-ms")
		b.ReportMetric(last.Latency.P99Seconds*1000, "p99-ms")
	}
	if p := os.Getenv("CDC2DELTA_E2E_JSON"); p != "" {
		require.NoError(b, last.WriteJSON(p))
	}
}

func envInt(tb testing.TB, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	require.NoError(tb, err, name)
	return n
}
