package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
)

func TestSummarize(t *testing.T) {
	s := systemResult{Batches: []batchTiming{{Rows: 100, Seconds: 0.1}, {Rows: 100, Seconds: 0.3}, {Rows: 200, Seconds: 0.2}}}
	s.summarize()
	require.Equal(t, 400, s.Events)
	require.InDelta(t, 0.6, s.ApplySeconds, 1e-9)
	require.InDelta(t, 400/0.6, s.RowsPerSecond, 1e-6)
	require.InDelta(t, 200, s.P50Millis, 1e-9)
	require.InDelta(t, 300, s.P99Millis, 1e-9)
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{xs: nil, p: 50, want: 0},
		{xs: []float64{5}, p: 99, want: 5},
		{xs: []float64{4, 1, 3, 2}, p: 50, want: 2},
		{xs: []float64{4, 1, 3, 2}, p: 99, want: 4},
		{xs: []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, p: 90, want: 90},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, percentile(tt.xs, tt.p), "%v p%v", tt.xs, tt.p)
	}
}

func TestRatio(t *testing.T) {
	require.Equal(t, "40×", ratio(4000, 100))
	require.Equal(t, "2.5×", ratio(250, 100))
	require.Equal(t, "0.5×", ratio(50, 100))
	require.Equal(t, "–", ratio(0, 100))
	require.Equal(t, "–", ratio(100, 0))
}

func sampleResults() *results {
	sys := func(name string, rps, p50, rss float64) systemResult {
		return systemResult{System: name, RowsPerSecond: rps, P50Millis: p50, P99Millis: 2 * p50, PeakRSSMiB: rss, CPUSeconds: 1.5, BytesPerChange: 120, ReadSeconds: 0.25, Checksum: "00000000deadbeef"}
	}
	spark := sys(sysSpDV, 10_000, 900, 2_000)
	spark.Settings = map[string]any{"spark.driver.memory": "2g"}
	return &results{
		Preset: "small", Command: "cdc2bench -preset small", Started: time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC), Seconds: 600,
		Machine:  machine{CPUs: 2, CPUModel: "Test CPU", MemGiB: 8, OS: "linux/amd64", Go: "go1.26"},
		Versions: map[string]string{"deltalake": "1.6.6", "pyspark": "4.1.1"},
		Workloads: []workloadResult{
			{Name: "2b", Title: "uniform upserts", BatchSize: 10_000, Batches: 6, BaseRows: 200_000, ExpectedRows: 212_000, ChecksumsEqual: true,
				Systems: []systemResult{sys(sysDV, 100_000, 50, 100), sys(sysRS, 2_500, 2_000, 1_000), spark}},
			{Name: "6-s3", Title: "small batches, S3", BatchSize: 100, Batches: 30, BaseRows: 200_000, ExpectedRows: 200_600,
				Systems: []systemResult{sys(sysDV, 1_000, 20, 50), {System: sysRS, Error: "deltars | crashed"}},
				Notes:   []string{"Spark is not run on S3"}},
		},
	}
}

func TestRenderReport(t *testing.T) {
	r := sampleResults()
	var b strings.Builder
	renderReport(&b, r, func(name string) bool { return name == "2b" })
	md := b.String()
	for _, want := range []string{
		"Preset `small`",
		"2 CPUs (Test CPU), 8.0 GiB memory",
		"deltalake 1.6.6, pyspark 4.1.1",
		// 2b: rows/s 100000/2500, p50 2000/50, RSS 1000/100; spark: 10×, 18×, 20×.
		"| 2b | 40×, 40×, 10× | 10×, 18×, 20× | – | – |",
		"| 6-s3 | – | – | – | – |",
		"| cdc2delta-dv | 50.0 | 100.0 | 100000 | 1.5 | 100 | 120 | 0.250 |",
		"| deltars | failed: deltars / crashed |",
		"all equal, 212000 rows, checksum `00000000deadbeef`",
		"**NOT EQUAL**",
		"- Spark is not run on S3",
		"![time per batch against table size, workload 2b](plots/2b.png)",
		"- spark-dv: `{\"spark.driver.memory\":\"2g\"}`",
	} {
		require.Contains(t, md, want)
	}
	require.NotContains(t, md, "plots/6-s3.png")
	require.NotContains(t, md, "FAILED**")

	r.Failures = []string{"workload 2b: final tables differ"}
	b.Reset()
	renderReport(&b, r, func(string) bool { return false })
	require.Contains(t, b.String(), "**This run FAILED**")
	require.Contains(t, b.String(), "- workload 2b: final tables differ")
}

func TestCompareTables(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	s := func(v string) *string { return &v }
	ok := tableCheck{Rows: n(10), Checksum: s("aa")}
	tests := []struct {
		name   string
		tables map[string]tableCheck
		extra  string   // a third system to compare
		want   []string // substrings of the error; nil: no error
	}{
		{name: "equal", tables: map[string]tableCheck{"a": ok, "b": ok}},
		{name: "checksum", tables: map[string]tableCheck{"a": ok, "b": ok, "c": {Rows: n(10), Checksum: s("bb")}}, extra: "c",
			want: []string{"[a+b: 10 rows, checksum aa]", "[c: 10 rows, checksum bb]"}},
		{name: "rows", tables: map[string]tableCheck{"a": {Rows: n(9), Checksum: s("aa")}, "b": {Rows: n(9), Checksum: s("aa")}},
			want: []string{"[a: 9 rows, want 10]", "[b: 9 rows, want 10]"}},
		{name: "read error", tables: map[string]tableCheck{"a": ok, "b": {Error: s("boom")}}, want: []string{"[b: boom]"}},
		{name: "missing", tables: map[string]tableCheck{"a": ok}, want: []string{"[b: not checked]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			systems := []string{"a", "b"}
			if tt.extra != "" {
				systems = append(systems, tt.extra)
			}
			err := compareTables("2b", checkOutput{Tables: tt.tables}, systems, 10)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrTablesDiffer)
			var me *MismatchError
			require.ErrorAs(t, err, &me)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestRenderE2E(t *testing.T) {
	res := &e2ebench.Result{Events: 300_000, CatchUpSeconds: 3, EventsPerSecond: 100_000, EventsPerCPUSecond: 60_000, Commits: 12,
		PeakRSSBytes: 200 << 20, CPUShares: map[string]float64{e2ebench.CatDecode: 0.5, e2ebench.CatMerge: 0.25},
		Latency: &e2ebench.Latency{Events: 20_000, P50Seconds: 0.8, P99Seconds: 1.5, MaxSeconds: 2}}
	res.Config.LiveRate = 2_000
	var b strings.Builder
	renderE2E(&b, &e2eResult{Result: res, PeakRSSMiB: 210})
	for _, want := range []string{
		"| 300000 | 3.00 | 100000 | 60000 | 12 | 200 | 210 |",
		"catch-up): decode 50%, merge 25%.",
		"at 2000 events/s: p50 800 ms, p99 1500 ms, max 2000 ms over 20000 events",
	} {
		require.Contains(t, b.String(), want)
	}
	b.Reset()
	renderE2E(&b, &e2eResult{Error: "broker down"})
	require.Contains(t, b.String(), "Failed: broker down")
}
