package processor

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
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
	var elapsed time.Duration
	for b.Loop() {
		i++
		pl.root = b.TempDir()
		opts := pl.options("bench-" + time.Now().Format("150405.000000"))
		opts.Batch = BatchLimits{Records: 10_000, Age: 200 * time.Millisecond}
		opts.ClientOptions = append(opts.ClientOptions, kgo.FetchMaxWait(10*time.Millisecond))
		r := pl.start(opts)
		for r.p.Status().Partitions < 2*testPartitions {
			time.Sleep(time.Millisecond)
		}
		// The clock starts once the group is joined: a join is a fixed
		// cost that says nothing about throughput.
		start := time.Now()
		for !r.applied(ends) {
			time.Sleep(2 * time.Millisecond)
		}
		elapsed += time.Since(start)
		b.Logf("caught up in %v: %s", time.Since(start), histSummary(b, r, "cdc2delta_commit_seconds"))
		r.close(pl.t)
		require.True(b, pl.caughtUp())
	}
	b.ReportMetric(float64(total)*float64(i)/elapsed.Seconds(), "events/s")
	require.Positive(b, total)
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
func (r *running) applied(ends map[TopicPartition]int64) bool {
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
