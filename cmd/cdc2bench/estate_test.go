package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
)

// TestEstateGoalsJudge: each goal passes at its bound and fails past it,
// and the report renders both.
func TestEstateGoalsJudge(t *testing.T) {
	run := func() *e2ebench.EstateResult {
		return &e2ebench.EstateResult{
			Tables: 500, Rows: 5_545_000, Seconds: 600, Events: 12_000_000, CPUSeconds: 720, Cores: 1.2,
			DrainSeconds: 11, PeakRSSBytes: 4 << 30, KillRestartSeconds: 10,
			Lag:          []e2ebench.LagSample{{Seconds: 100, Records: 1000}, {Seconds: 500, Records: 21_500}},
			FreshnessHot: &e2ebench.Latency{Events: 10, P50Seconds: 1, P99Seconds: 2}, FreshnessRest: &e2ebench.Latency{Events: 10, P50Seconds: 5, P99Seconds: 11},
		}
	}
	rep := &estateReport{Rate: 20_000, MaxDelay: 10, Scale: 100, Classes: e2ebench.DefaultEstate(), Run: run(),
		Reads: []estateRead{{Table: "big_000", Seconds: 1.2, OptimizedSeconds: 1, Ratio: 1.2}}}
	for _, g := range estateGoals(rep) {
		require.True(t, g.Pass, "at the bound: %+v", g)
	}
	rep.Run.DrainSeconds = 11.5
	rep.Run.FreshnessHot.P99Seconds = 2.1
	rep.Run.FreshnessRest.P99Seconds = 11.1
	rep.Run.PeakRSSBytes++
	rep.Run.Cores = 1.21
	rep.Run.KillRestartSeconds = 10.1
	rep.Reads[0].Ratio = 1.21
	goals := estateGoals(rep)
	rep.Goals = goals
	require.Len(t, goals, 7)
	for _, g := range goals {
		require.False(t, g.Pass, "past the bound: %+v", g)
	}
	rep.Costs = estateCostsOf(rep.Run)
	require.InDelta(t, 60, rep.Costs.CPUMicrosPerEvent, 1e-9)
	require.InDelta(t, 4096.0/500, rep.Costs.RSSMiBPerTable, 1e-6)
	var buf bytes.Buffer
	renderEstate(&buf, rep)
	out := buf.String()
	require.Contains(t, out, "| SIGKILL to all ready | ≤ 10 s | 10.1 s | FAIL |")
	require.Contains(t, out, "60.0 CPU-µs per event")
	require.Contains(t, out, "5 × 1000000 rows (big)")
}

// TestLagHalves: a lag that keeps growing is caught by the halves.
func TestLagHalves(t *testing.T) {
	var s []e2ebench.LagSample
	for i := range 10 {
		s = append(s, e2ebench.LagSample{Seconds: float64(i * 10), Records: int64(i * 1000)})
	}
	first, second := lagHalves(s, 100)
	require.EqualValues(t, 5000, first)
	require.EqualValues(t, 9000, second)
}
