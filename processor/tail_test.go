package processor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// TestBacklogTailSkipsMaxDelay: a backlog read to its end, whose last few
// records are fewer than min_records once the caps have cut it into full
// batches (a restart after downtime, a catch-up), commits its tail at
// max_age, not at max_delay with the CPU idle. MinRecords
// equals Records so that every commit before the tail is a full one and the
// tail is the backlog's records modulo Records, whatever the fetches bring: on the old rule it waits
// max_delay (the failure is certain, not a race).
func TestBacklogTailSkipsMaxDelay(t *testing.T) {
	const events, records, maxDelay = 1030, 100, 8 * time.Second
	pl := newPipelineOf(t, dbzgen.WorkloadOptions{Seed: 31, Keys: 300}, nil, "tail", dbzgen.Customers())
	pl.produce(events)
	var total int64
	for _, end := range pl.endOffsets(pl.tables[0].Topic()) {
		total += end
	}
	require.NotZero(t, total%records, "the backlog leaves a tail below min_records")
	opts := pl.options("tail")
	opts.Maintenance.Disabled = true // every version after the first is a batch
	opts.Batch = BatchLimits{Records: records, Age: 200 * time.Millisecond, MinRecords: records,
		MaxDelay: maxDelay, CommitsPerSecond: 50, Drained: true}
	pl.start(opts)
	pl.waitCaughtUp()
	pl.requireModel()

	store := pl.store(pl.tables[0])
	var stamps []time.Time
	for v := int64(0); ; v++ {
		ci, _, ok := readCommit(t, store, v)
		if !ok {
			break
		}
		stamps = append(stamps, time.UnixMilli(*ci.Timestamp))
	}
	require.Greater(t, len(stamps), 3, "the table's creation, full batches and the tail")
	tail := stamps[len(stamps)-1].Sub(stamps[len(stamps)-2])
	t.Logf("%d versions; the tail of %d records committed %s after the last full batch", len(stamps), total%records, tail)
	// On the old rule the tail waited max_delay less the produce credit
	// and the lead (about 7 s here); now max_age at most (200 ms). The bound
	// leaves seconds of slack for a loaded machine on both sides.
	require.Less(t, tail, 2*time.Second, "the backlog's tail waited for max_delay with nothing left to read")
}

// TestBusyTableTail: on a fake clock, a batch that starts when MinRecords
// or more entries arrived over the last Age (the end of a stream), or that
// is what is left of a batch that filled within Age (the end of a backlog),
// commits at Age whatever its count, and drained only once it holds
// MinRecords; a trickle's (the control: fewer than MinRecords per Age) and
// one after a pause still wait for MinRecords or MaxDelay.
func TestBusyTableTail(t *testing.T) {
	l := BatchLimits{Records: 1000, Age: time.Second, MinRecords: 100, MaxDelay: 10 * time.Second, Drained: true}.withDefaults()
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	// spread adds n entries evenly over [from, from+over).
	spread := func(p *pending, n int, from, over time.Duration) {
		for i := range n {
			p.add(at(from+over*time.Duration(i)/time.Duration(n)), l, entry{kind: entryChange, size: 1})
		}
	}
	for _, tc := range []struct {
		name string
		// 150 entries over the first 'over' are taken at 'over', then one
		// entry arrives at 'tail'.
		over, tail time.Duration
		busy       bool
	}{
		{"end of a stream", 500 * time.Millisecond, 700 * time.Millisecond, true},
		{"end of a stream, 300 ms on", 900 * time.Millisecond, 1200 * time.Millisecond, true},
		{"trickle (control)", 5 * time.Second, 5200 * time.Millisecond, false},
		{"after a pause", 500 * time.Millisecond, 2100 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p pending
			spread(&p, 150, 0, tc.over)
			require.Len(t, p.take(l).recs, 150)
			spread(&p, 1, tc.tail, 0)
			require.False(t, p.ready(at(tc.tail), l, true), "below MinRecords, drained does not count")
			require.Equal(t, tc.busy, p.ready(at(tc.tail+l.Age), l, false), "ready at Age")
			if tc.busy {
				require.Equal(t, at(tc.tail+l.Age), p.deadline(l))
				return
			}
			require.Equal(t, at(tc.tail+l.MaxDelay), p.deadline(l), "below MinRecords: waits for MaxDelay")
		})
	}
	t.Run("end of a backlog", func(t *testing.T) {
		var p pending
		spread(&p, 2030, 0, 0) // one poll
		for range 2 {
			require.Len(t, p.take(l).recs, 1000)
		}
		// Taken 3 s later: the arrivals are long past, the batch was busy.
		require.True(t, p.ready(at(3*time.Second), l, false), "the backlog's 30 left commit at Age")
	})
}
