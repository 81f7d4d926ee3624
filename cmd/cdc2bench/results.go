package main

import (
	"math"
	"slices"
	"time"
)

// results is everything one run measured: OUTDIR/results.json.
type results struct {
	Preset    string            `json:"preset"`
	Command   string            `json:"command"`
	Started   time.Time         `json:"started"`
	Seconds   float64           `json:"seconds"`
	Machine   machine           `json:"machine"`
	Versions  map[string]string `json:"versions"`
	Workloads []workloadResult  `json:"workloads"`
	// E2E is cdc2delta-e2e's run from the broker, when selected.
	E2E *e2eResult `json:"e2e,omitempty"`
	// Failures lists what went wrong; a run with failures exits non-zero.
	Failures []string `json:"failures,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// machine describes where the run happened.
type machine struct {
	CPUs     int     `json:"cpus"`
	CPUModel string  `json:"cpu_model"`
	MemGiB   float64 `json:"mem_gib"`
	OS       string  `json:"os"`
	Go       string  `json:"go"`
}

// workloadResult is one workload's systems side by side.
type workloadResult struct {
	Name      string `json:"name"`
	Title     string `json:"title"`
	BatchSize int    `json:"batch_size"`
	Batches   int    `json:"batches"`
	BaseRows  int    `json:"base_rows"`
	// ExpectedRows is the live row count after all batches, from the generator.
	ExpectedRows int            `json:"expected_rows"`
	Systems      []systemResult `json:"systems"`
	// ChecksumsEqual is true when every system's final table had the same
	// row-set checksum and the expected row count.
	ChecksumsEqual bool     `json:"checksums_equal"`
	Notes          []string `json:"notes,omitempty"`
}

// systemResult is one system's figures on one workload.
type systemResult struct {
	System         string             `json:"system"`
	Error          string             `json:"error,omitempty"`
	Table          string             `json:"table"`
	SetupSeconds   float64            `json:"setup_seconds"`
	Batches        []batchTiming      `json:"batches"`
	Events         int                `json:"events"`
	ApplySeconds   float64            `json:"apply_seconds"`
	RowsPerSecond  float64            `json:"rows_per_second"`
	P50Millis      float64            `json:"p50_ms"`
	P99Millis      float64            `json:"p99_ms"`
	CPUSeconds     float64            `json:"cpu_seconds"`
	PeakRSSMiB     float64            `json:"peak_rss_mib"`
	WallSeconds    float64            `json:"wall_seconds"`
	BytesWritten   int64              `json:"bytes_written"`
	BytesPerChange float64            `json:"bytes_per_changed_row"`
	TableRows      int64              `json:"table_rows"`
	Checksum       string             `json:"checksum"`
	ReadSeconds    float64            `json:"read_seconds"`
	Versions       map[string]string  `json:"versions,omitempty"`
	Settings       map[string]any     `json:"settings,omitempty"`
	Extra          map[string]float64 `json:"extra,omitempty"`
}

// summarize fills the derived figures from the batch timings.
func (s *systemResult) summarize() {
	secs := make([]float64, len(s.Batches))
	s.Events, s.ApplySeconds = 0, 0
	for i, b := range s.Batches {
		secs[i] = b.Seconds
		s.Events += b.Rows
		s.ApplySeconds += b.Seconds
	}
	if s.ApplySeconds > 0 {
		s.RowsPerSecond = float64(s.Events) / s.ApplySeconds
	}
	s.P50Millis = percentile(secs, 50) * 1000
	s.P99Millis = percentile(secs, 99) * 1000
}

// percentile is the nearest-rank percentile p of xs (0 when empty).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// system returns the named system's result, if it ran.
func (w *workloadResult) system(name string) (*systemResult, bool) {
	for i := range w.Systems {
		if w.Systems[i].System == name {
			return &w.Systems[i], true
		}
	}
	return nil, false
}
