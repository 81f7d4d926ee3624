package processor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
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
			quiet := at(tc.tail + l.Age/4)
			require.False(t, p.ready(quiet.Add(-time.Millisecond), l, true), "not quiet yet")
			require.Equal(t, tc.busy, p.ready(quiet, l, true), "busy, drained and quiet: the tail of a stream that stopped")
			require.False(t, p.ready(quiet, l, false), "quiet but not drained")
			require.Equal(t, tc.busy, p.ready(at(tc.tail+l.Age), l, false), "ready at Age")
			if tc.busy {
				require.Equal(t, at(tc.tail+l.Age), p.deadline(l))
				require.Equal(t, quiet, p.wake(at(tc.tail), l), "looked at again once quiet")
				require.Equal(t, quiet.Add(l.Age/4), p.wake(quiet, l), "not drained when quiet: looked at every quarter Age")
				return
			}
			require.Equal(t, p.deadline(l), p.wake(at(tc.tail), l))
			require.Equal(t, at(tc.tail+l.MaxDelay), p.deadline(l), "below MinRecords: waits for MaxDelay")
		})
	}
	t.Run("a flowing stream is never quiet (control)", func(t *testing.T) {
		// 100 entries a second, the least a busy table gets: 10 ms apart.
		var p pending
		spread(&p, 150, 0, 1500*time.Millisecond)
		require.Len(t, p.take(l).recs, 150)
		for i := range 99 {
			now := at(1500*time.Millisecond + time.Duration(i)*10*time.Millisecond)
			p.add(now, l, entry{kind: entryChange, size: 1})
			require.False(t, p.ready(now.Add(9*time.Millisecond), l, true), "entry %d", i)
		}
		require.True(t, p.busy)
		require.True(t, p.ready(p.arrivals.last.Add(l.Age/4), l, true), "once it stops, the tail commits")
	})
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

// TestLiveTailCommitsWhenQuiet: a busy table whose stream stops commits
// its last few records (fewer than min_records) once nothing has arrived
// for a quarter of max_age and its partitions are drained, instead of at
// max_age. A burst of 250 records makes the table busy and commits on
// drained; 30 more, 50 ms later, are the tail. With commit_when_drained off
// (the control) the same tail waits max_age, which the bound tells apart.
func TestLiveTailCommitsWhenQuiet(t *testing.T) {
	const age = time.Second
	for _, tc := range []struct {
		name    string
		drained bool
	}{{"drained", true}, {"max_age (control)", false}} {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPipelineOf(t, dbzgen.WorkloadOptions{Seed: 41, Keys: 200}, nil, "livetail", dbzgen.Customers())
			opts := pl.options("livetail")
			opts.Maintenance.Disabled = true
			opts.Batch = BatchLimits{Records: 10000, Age: age, MinRecords: 100, MaxDelay: 10 * time.Second,
				CommitsPerSecond: 50, Drained: tc.drained}
			pl.start(opts)
			pl.produce(250)
			time.Sleep(50 * time.Millisecond)
			pl.produce(30)
			last := time.Now()
			pl.waitCaughtUp()
			pl.requireModel()

			store := pl.store(pl.tables[0])
			var final *deltalog.CommitInfo
			for v := int64(0); ; v++ {
				ci, _, ok := readCommit(t, store, v)
				if !ok {
					break
				}
				final = ci
			}
			gap := time.UnixMilli(*final.Timestamp).Sub(last)
			t.Logf("the tail committed %s after its last record was produced", gap)
			if tc.drained {
				// A quarter of max_age (250 ms) and the commit; max_age on
				// the old rule. The bound leaves slack for a loaded machine.
				require.Less(t, gap, 700*time.Millisecond, "the tail of a stream that stopped waited for max_age")
				return
			}
			require.GreaterOrEqual(t, gap, 900*time.Millisecond, "without drained the tail waits max_age (the bound tells the rules apart)")
		})
	}
}
