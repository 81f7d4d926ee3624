package processor

import (
	"fmt"
	rtmetrics "runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// BenchmarkEndToEnd measures consuming a backlog from the in-process broker
// into two tables: decode, route, MERGE and commit, per iteration a fresh
// group over the same records into fresh tables.
func BenchmarkEndToEnd(b *testing.B) {
	const events = 50_000
	pl := newPipeline(b, dbzgen.WorkloadOptions{Seed: 9, Keys: 5000, Snapshot: true, MaxTxEvents: 5})
	pl.produce(events)
	total := pl.totalRecords()
	ends := pl.endOffsets(pl.topics()...)
	i := 0
	var elapsed, cpu time.Duration
	var gcCPU, allCPU float64
	for b.Loop() {
		i++
		pl.root = b.TempDir()
		opts := pl.options("bench-" + time.Now().Format("150405.000000"))
		opts.Batch = DefaultBatchLimits() // what users run
		opts.ClientOptions = append(opts.ClientOptions, kgo.FetchMaxWait(10*time.Millisecond))
		r := pl.start(opts)
		require.Eventually(b, func() bool { return r.p.Status().Partitions == 2*testPartitions }, time.Minute, time.Millisecond)
		// The clock starts once the group is joined: a join is a fixed
		// cost that says nothing about throughput.
		start, cpu0 := time.Now(), cpuTime(b)
		gc0, all0 := gcCPUSeconds()
		require.Eventually(b, func() bool { return r.applied(ends) }, 5*time.Minute, 2*time.Millisecond)
		elapsed += time.Since(start)
		// On a shared machine wall time says little; CPU time per event
		// (all of the process: the in-process broker's share included)
		// does.
		cpu += cpuTime(b) - cpu0
		gc1, all1 := gcCPUSeconds()
		gcCPU, allCPU = gcCPU+gc1-gc0, allCPU+all1-all0
		b.Logf("caught up in %v: %s; commits: full %.0f, ready %.0f, max_delay %.0f", time.Since(start), histSummary(b, r, "cdc2delta_commit_seconds"),
			metricWith(b, r.reg, "cdc2delta_commits_total", "reason", "full"), metricWith(b, r.reg, "cdc2delta_commits_total", "reason", "ready"),
			metricWith(b, r.reg, "cdc2delta_commits_total", "reason", "max_delay"))
		r.close(pl.t)
		require.True(b, pl.caughtUp())
	}
	b.ReportMetric(float64(total)*float64(i)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(total)*float64(i)/cpu.Seconds(), "events/cpu-s")
	// The runtime's estimate of the GC's share of the process's CPU
	// (the in-process broker's allocations included).
	b.ReportMetric(100*gcCPU/allCPU, "gc-%")
	require.Positive(b, total)
}

// gcCPUSeconds is the runtime's estimate of the CPU time spent in the GC
// and in total so far (runtime/metrics /cpu/classes).
func gcCPUSeconds() (gc, total float64) {
	s := []rtmetrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}
	rtmetrics.Read(s)
	return s[0].Value.Float64(), s[1].Value.Float64()
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(tb, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// histSummary renders a histogram family's total count and sum.
func histSummary(tb testing.TB, r *running, name string) string {
	mfs, err := r.reg.Gather()
	require.NoError(tb, err)
	var n uint64
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				n += m.GetHistogram().GetSampleCount()
				sum += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return fmt.Sprintf("%s: %d batches, %.3fs", name, n, sum)
}

// applied reports whether the processor applied every partition up to its
// end offset (cheaper than reading the tables' logs while measuring).
func (r *running) applied(ends map[cdctable.TopicPartition]int64) bool {
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	for tp, end := range ends {
		if end == 0 {
			continue
		}
		st := r.p.mu.parts[tp]
		if st == nil || st.applied < end-1 {
			return false
		}
	}
	return true
}
