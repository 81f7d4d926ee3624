package e2ebench

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"
)

// Result is what one run measured. Durations are in seconds and sizes in
// bytes, so the JSON needs no unit parsing.
type Result struct {
	Config ResultConfig `json:"config"`
	// ProduceSeconds is how long producing the backlog took (untimed
	// otherwise: it is not part of the throughput).
	ProduceSeconds float64 `json:"produce_seconds"`
	// Events is the backlog consumed in the timed catch-up.
	Events int64 `json:"events"`
	// CatchUpSeconds runs from the group owning every partition to the
	// last Delta commit reaching each partition's end.
	CatchUpSeconds float64 `json:"catch_up_seconds"`
	// EventsPerSecond is Events / CatchUpSeconds: sustained throughput.
	EventsPerSecond float64 `json:"events_per_second"`
	// CPUSeconds is the process CPU time (user+system) of the catch-up;
	// EventsPerCPUSecond divides Events by it (throughput per core).
	CPUSeconds         float64 `json:"cpu_seconds"`
	EventsPerCPUSecond float64 `json:"events_per_cpu_second"`
	// Commits is the number of Delta commits over all tables.
	Commits int `json:"commits"`
	// CommitsByReason counts the catch-up's batches by why each was
	// committed (full, ready, max_delay, ...: the reason label of
	// cdc2delta_commits_total). A max_delay one waited with the CPU idle.
	CommitsByReason map[string]int `json:"commits_by_reason,omitempty"`
	// PeakHeapBytes is the largest heap in use sampled during the
	// catch-up; PeakRSSBytes the process's peak resident set (Linux
	// VmHWM, reset before the catch-up when the kernel allows it). Both
	// include the harness's workload model (tens of MiB for 3×20,000
	// keys; none without a live phase) and garbage not yet collected.
	PeakHeapBytes uint64 `json:"peak_heap_bytes"`
	PeakRSSBytes  uint64 `json:"peak_rss_bytes"`
	// CPUShares maps category (see Category) to its share of the
	// catch-up's CPU samples, when profiled.
	CPUShares map[string]float64 `json:"cpu_shares,omitempty"`
	// Latency is the live phase's source-commit-to-visible latency.
	Latency *Latency `json:"latency,omitempty"`
	// GOMAXPROCS and NumCPU describe the machine.
	GOMAXPROCS int `json:"gomaxprocs"`
	NumCPU     int `json:"num_cpu"`
}

// ResultConfig is the part of Config a reader of the result needs.
type ResultConfig struct {
	Tables     int     `json:"tables"`
	Partitions int     `json:"partitions"`
	Keys       int     `json:"keys"`
	Redeliver  float64 `json:"redeliver"`
	Fsync      bool    `json:"fsync"`
	BatchRecs  int     `json:"batch_records"`
	LiveRate   int     `json:"live_rate"`
}

// Latency summarises per-event latencies.
type Latency struct {
	Events     int     `json:"events"`
	P50Seconds float64 `json:"p50_seconds"`
	P99Seconds float64 `json:"p99_seconds"`
	MaxSeconds float64 `json:"max_seconds"`
}

// String renders the headline numbers on one line.
func (r Result) String() string {
	s := fmt.Sprintf("%d events in %.2fs: %.0f events/s, %.0f events/cpu-s, %d commits, peak heap %d MiB, peak RSS %d MiB",
		r.Events, r.CatchUpSeconds, r.EventsPerSecond, r.EventsPerCPUSecond, r.Commits, r.PeakHeapBytes>>20, r.PeakRSSBytes>>20)
	if len(r.CommitsByReason) > 0 {
		s += "; commits by reason"
		for _, k := range slices.Sorted(maps.Keys(r.CommitsByReason)) {
			s += fmt.Sprintf(" %s %d", k, r.CommitsByReason[k])
		}
	}
	if r.Latency != nil {
		s += fmt.Sprintf("; latency p50 %v p99 %v", seconds(r.Latency.P50Seconds), seconds(r.Latency.P99Seconds))
	}
	if len(r.CPUShares) > 0 {
		s += "; cpu"
		for _, c := range Categories() {
			s += fmt.Sprintf(" %s %.1f%%", c, 100*r.CPUShares[c])
		}
	}
	return s
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}

// WriteJSON writes the result, indented, to path.
func (r Result) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding result: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing result: %w", err)
	}
	return nil
}
