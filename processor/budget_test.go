package processor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestCommitBudgetSlots: the budget hands out a slot every 1/rate, banks up
// to a second's worth while commits are fewer, and forced commits push the
// next slot at most MaxDelay ahead. Busy batches queue behind each other
// only, and each pushes the others back by a slot.
func TestCommitBudgetSlots(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name  string
		rate  float64
		delay time.Duration
		at    []int  // reserve at these ms
		busy  []bool // of each reservation; nil: none busy
		want  []int  // slots, in ms
	}{
		{name: "unlimited", rate: 0, at: []int{0, 0, 0}, want: []int{0, 0, 0}},
		{name: "one a second", rate: 1, delay: time.Hour, at: []int{0, 0, 0, 5000}, want: []int{-0, 1000, 2000, 5000}},
		{name: "banked burst", rate: 4, delay: time.Hour, at: []int{10_000, 10_000, 10_000, 10_000, 10_000},
			want: []int{9250, 9500, 9750, 10_000, 10_250}},
		{name: "forced spell capped at max delay", rate: 1, delay: 3 * time.Second, at: []int{0, 0, 0, 0, 0, 0},
			want: []int{0, 1000, 2000, 3000, 3000, 3000}},
		{name: "busy ahead of a queue", rate: 1, delay: time.Hour, at: []int{0, 0, 0, 0, 0},
			busy: []bool{false, false, false, true, false}, want: []int{0, 1000, 2000, 0, 4000}},
		{name: "busy behind busy", rate: 2, delay: time.Hour, at: []int{5000, 5000, 5000, 5000},
			busy: []bool{true, true, true, false}, want: []int{4500, 5000, 5500, 6000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newCommitBudget(BatchLimits{CommitsPerSecond: tc.rate, MaxDelay: tc.delay})
			for i, at := range tc.at {
				busy := tc.busy != nil && tc.busy[i]
				require.Equal(t, ms(tc.want[i]), b.reserve(ms(at), busy), "reservation %d at %dms", i, at)
			}
		})
	}
}

// TestPendingBudget: below the caps a batch is ready at Age only once it
// holds MinRecords entries, and forced at MaxDelay; the caps and a poison
// record force it at once.
func TestPendingBudget(t *testing.T) {
	l := BatchLimits{Records: 10, Age: time.Second, MinRecords: 3, MaxDelay: 10 * time.Second}.withDefaults()
	t0 := time.Unix(1000, 0)
	var p pending
	add := func(n int) {
		for range n {
			p.add(t0, l, entry{kind: entryChange, size: 1})
		}
	}
	add(2)
	require.False(t, p.due(t0.Add(5*time.Second), l, false), "2 of 3 records, 5s old: waits")
	require.Equal(t, t0.Add(10*time.Second), p.deadline(l))
	require.True(t, p.forced(t0.Add(10*time.Second), l), "forced at max delay")
	add(1)
	require.Equal(t, t0.Add(time.Second), p.deadline(l), "with min records, age decides")
	require.False(t, p.ready(t0.Add(999*time.Millisecond), l, false))
	require.True(t, p.ready(t0.Add(time.Second), l, false))
	require.False(t, p.ready(t0, l, true), "drained counts only with Drained")
	ld := l
	ld.Drained = true
	require.True(t, p.ready(t0, ld, true), "drained: ready before Age")
	require.False(t, p.ready(t0, ld, false))
	require.False(t, p.forced(t0.Add(time.Second), l), "ready is not forced: the budget may hold it")
	var few pending
	few.add(t0, l, entry{kind: entryChange, size: 1})
	require.False(t, few.ready(t0.Add(5*time.Second), ld, true), "drained, but below min records: waits")
	add(7)
	require.True(t, p.forced(t0, l), "full: forced at once")

	var q pending
	q.add(t0, l, entry{kind: entryPoison, size: 1})
	require.True(t, q.forced(t0, l), "a poison record at the head goes at once")

	require.Equal(t, 5*time.Second, BatchLimits{Age: 5 * time.Second, MaxDelay: time.Second}.withDefaults().MaxDelay,
		"max delay below age is raised to it")
}

// TestMaxDelayCommitsLeaveTheBudget: many trickling tables forced by
// max_delay at once, more than the budget holds, leave it to the ready
// batch of a busy table, which commits at once instead of waiting for the
// slots they would have taken. A full batch still takes a slot, so a slow
// table's ready batch waits for one, and a second busy batch waits for the
// slot after the first's.
func TestMaxDelayCommitsLeaveTheBudget(t *testing.T) {
	l := BatchLimits{Records: 10, Age: time.Second, MinRecords: 3, MaxDelay: 10 * time.Second, CommitsPerSecond: 1}.withDefaults()
	p := &Processor{opts: Options{Batch: l}}
	p.mu.budget = newCommitBudget(l)
	t0 := time.Unix(1000, 0)
	now := t0.Add(l.MaxDelay)
	for i := range 20 {
		trickle := &table{}
		trickle.pend.add(t0, l, entry{kind: entryChange, size: 1})
		why, _ := p.commitDueLocked(trickle, now, false, false)
		require.Equal(t, commitMaxDelay, why, "trickling table %d", i)
	}
	busy := &table{}
	for range 3 {
		busy.pend.add(now.Add(-l.Age), l, entry{kind: entryChange, size: 1})
	}
	why, wait := p.commitDueLocked(busy, now, false, false)
	require.Equal(t, commitReady, why, "the busy table's ready batch waits %s", wait)

	full := &table{}
	for range l.Records {
		full.pend.add(now, l, entry{kind: entryChange, size: 1})
	}
	why, _ = p.commitDueLocked(full, now, false, false)
	require.Equal(t, commitFull, why)
	// A batch that gathered min_records slowly is not busy: it waits for
	// the slot after the one the full batch took.
	slow := &table{}
	for i := range 3 {
		slow.pend.add(now.Add(time.Duration(i-5)*time.Second), l, entry{kind: entryChange, size: 1})
	}
	require.False(t, slow.pend.busy)
	why, wait = p.commitDueLocked(slow, now, false, false)
	require.Empty(t, why, "the full batch took the next slot")
	require.Positive(t, wait)
	// Another busy batch waits for the busy table's slot only.
	again := &table{}
	for range 3 {
		again.pend.add(now.Add(-l.Age), l, entry{kind: entryChange, size: 1})
	}
	why, wait = p.commitDueLocked(again, now, false, false)
	require.Empty(t, why)
	require.Equal(t, time.Second, wait, "one slot after the busy table's")
}

// producedAt produces the workload's next event and returns when, by
// partition and offset.
func (pl *pipeline) producedAt(at map[cdctable.TopicPartition]map[int64]time.Time) {
	pl.t.Helper()
	ctx := pl.t.Context()
	ev := pl.w.Next()
	key, value, err := pl.gen.Encode(ctx, ev)
	require.NoError(pl.t, err)
	r := &kgo.Record{Topic: ev.Table.Topic(), Key: key, Value: value}
	now := time.Now()
	require.NoError(pl.t, pl.producer.ProduceSync(ctx, r).FirstErr())
	tp := cdctable.TopicPartition{Topic: r.Topic, Partition: r.Partition}
	if at[tp] == nil {
		at[tp] = map[int64]time.Time{}
	}
	at[tp][r.Offset] = now
}

// commitStats reads every version of every table: the commits after the
// first (the snapshot's) and, per record, how long it waited from its
// produce to the commit that applied it (the commitInfo timestamp).
func (pl *pipeline) commitStats(at map[cdctable.TopicPartition]map[int64]time.Time) (commits int, worst time.Duration) {
	pl.t.Helper()
	for _, waits := range pl.commitWaits(at) {
		commits += len(waits)
		for _, w := range waits {
			worst = max(worst, w)
		}
	}
	return commits, worst
}

// commitWaits is, per table and version, the longest wait of a record the
// version applied, from its produce to the commitInfo timestamp (zero for
// a version that applied none of at's records).
func (pl *pipeline) commitWaits(at map[cdctable.TopicPartition]map[int64]time.Time) map[string][]time.Duration {
	pl.t.Helper()
	out := map[string][]time.Duration{}
	for _, tb := range pl.tables {
		store := pl.store(tb)
		prev := map[string]int64{}
		var waits []time.Duration
		for v := int64(0); ; v++ {
			ci, txns, ok := readCommit(pl.t, store, v)
			if !ok {
				break
			}
			ts := time.UnixMilli(*ci.Timestamp)
			var worst time.Duration
			for tp, offs := range at {
				app := tp.AppID()
				txn, ok := txns[app]
				if !ok {
					continue
				}
				for off, t := range offs {
					if from, seen := prev[app]; (!seen || off > from) && off <= txn {
						worst = max(worst, ts.Sub(t))
					}
				}
				prev[app] = txn
			}
			waits = append(waits, worst)
		}
		out[tablePath(tb)] = waits
	}
	return out
}

// TestCommitBudgetTrickle: tables trickling an event every 100ms commit an
// event per commit with the budget off (min_records 1, the control: the
// policy under test could have failed), and with min_records above what
// arrives in max_delay, once per max_delay, no record waiting for its commit
// much longer than max_delay; the tables end equal to the model either way.
func TestCommitBudgetTrickle(t *testing.T) {
	const events, every = 40, 100 * time.Millisecond
	run := func(t *testing.T, minRecords int, maxDelay time.Duration) (int, time.Duration) {
		pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 21, Keys: 30})
		opts := pl.options("budget")
		opts.Maintenance.Disabled = true // every version counted is a batch's
		opts.Batch = BatchLimits{Records: 1000, Age: 20 * time.Millisecond, MinRecords: minRecords, MaxDelay: maxDelay}
		pl.start(opts)
		at := map[cdctable.TopicPartition]map[int64]time.Time{}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for range events {
			pl.producedAt(at)
			<-tick.C // the trickle's pace, not a wait for an outcome
		}
		pl.waitCaughtUp()
		pl.requireModel()
		return pl.commitStats(at)
	}
	t.Run("control", func(t *testing.T) {
		commits, worst := run(t, 1, 0)
		t.Logf("min_records 1: %d commits for %d events, worst wait %s", commits, events, worst)
		require.GreaterOrEqual(t, commits, events*3/4, "without the budget a trickle commits about once per event")
	})
	t.Run("budget", func(t *testing.T) {
		const maxDelay = 800 * time.Millisecond
		commits, worst := run(t, 1000, maxDelay)
		t.Logf("min_records 1000, max_delay %s: %d commits for %d events, worst wait %s", maxDelay, commits, events, worst)
		// 4s of trickle over two tables: about 5 commits each, plus
		// table creation; far fewer than one per event.
		require.LessOrEqual(t, commits, 16)
		// Slack for a loaded machine, still well below the 4s that
		// min_records alone would hold the first events.
		require.Less(t, worst, maxDelay+1500*time.Millisecond, "the freshness bound holds (min_records alone would hold them to the end)")
	})
}

// TestCommitBudgetShared: with tables always ready (a steady stream, min
// records 1), the commits of all tables stay within the shared
// commits-per-second budget, while without it they are several times more
// (the control); max_delay still bounds every wait.
func TestCommitBudgetShared(t *testing.T) {
	const events, every = 60, 25 * time.Millisecond // 1.5s at 40 events/s
	run := func(t *testing.T, rate float64) (int, time.Duration, time.Duration) {
		pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 22, Keys: 30})
		opts := pl.options("shared")
		opts.Maintenance.Disabled = true // every version counted is a batch's
		// MinRecords 1: every batch is due at Age, so only the rate holds it.
		opts.Batch = BatchLimits{Records: 1000, Age: 10 * time.Millisecond, MinRecords: 1, MaxDelay: 2 * time.Second, CommitsPerSecond: rate}
		start := time.Now()
		pl.start(opts)
		at := map[cdctable.TopicPartition]map[int64]time.Time{}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for range events {
			pl.producedAt(at)
			<-tick.C
		}
		pl.waitCaughtUp()
		took := time.Since(start)
		pl.requireModel()
		commits, worst := pl.commitStats(at)
		return commits, worst, took
	}
	unlimited, _, _ := run(t, 0)
	const rate = 4
	limited, worst, took := run(t, rate)
	t.Logf("unlimited: %d commits; %d/s: %d commits in %s, worst wait %s", unlimited, rate, limited, took.Round(time.Millisecond), worst)
	require.GreaterOrEqual(t, unlimited, 25, "the stream alone would commit far more often")
	// The budget allows rate a second over the run, plus a second's worth
	// banked at the start and each table's creation (version 0, which
	// takes a slot like any commit: +1 of slack).
	allowed := int(rate*took.Seconds()) + rate + 2 + 1 // 2 tables
	require.LessOrEqual(t, limited, allowed)
	require.Less(t, limited, unlimited/2)
	require.Less(t, worst, 2*time.Second+time.Second, "max_delay bounds every wait")
}

// TestDrainedCommitsBeforeAge: with Drained, a table whose partitions are
// read to their high watermarks commits without waiting for Age; without it
// (the control) every batch waits Age, so the test could fail.
func TestDrainedCommitsBeforeAge(t *testing.T) {
	const events, every, age = 12, 100 * time.Millisecond, 3 * time.Second
	run := func(t *testing.T, drained bool) (int, time.Duration) {
		pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 23, Keys: 30})
		opts := pl.options("drained")
		opts.Maintenance.Disabled = true
		opts.Batch = BatchLimits{Records: 1000, Age: age, MinRecords: 1, Drained: drained}
		pl.start(opts)
		at := map[cdctable.TopicPartition]map[int64]time.Time{}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for range events {
			pl.producedAt(at)
			<-tick.C
		}
		pl.waitCaughtUp()
		pl.requireModel()
		return pl.commitStats(at)
	}
	t.Run("control", func(t *testing.T) {
		commits, worst := run(t, false)
		t.Logf("age %s: %d commits for %d events, worst wait %s", age, commits, events, worst)
		// The two runs are told apart at age/2, far from both: a loaded machine's
		// delays do not move either across it.
		require.GreaterOrEqual(t, worst, age/2, "without Drained the first event waits Age")
	})
	t.Run("drained", func(t *testing.T) {
		commits, worst := run(t, true)
		t.Logf("age %s, drained: %d commits for %d events, worst wait %s", age, commits, events, worst)
		require.Less(t, worst, age/2, "a drained table commits at once")
	})
	// A backlog fetched a little at a time is not drained until its end:
	// its batches still gather for Age instead of committing per fetch.
	t.Run("backlog", func(t *testing.T) {
		brokers, fetches := fetchCounting(t)
		pl := newPipelineOn(t, dbzgen.WorkloadOptions{Seed: 24, Keys: 200}, brokers, "backlog")
		for range 300 {
			pl.produce(1) // a record batch each, so a small fetch takes few
		}
		opts := pl.options("backlog")
		opts.Maintenance.Disabled = true
		opts.ClientOptions = append(opts.ClientOptions, kgo.FetchMaxPartitionBytes(1), kgo.FetchMaxWait(10*time.Millisecond))
		opts.Batch = BatchLimits{Records: 1000, Age: time.Second, MinRecords: 1, Drained: true}
		pl.start(opts)
		pl.waitCaughtUp()
		pl.requireModel()
		commits, _ := pl.commitStats(nil)
		t.Logf("300 events in %d fetches: %d commits", fetches.Load(), commits)
		require.Greater(t, fetches.Load(), int64(30), "the backlog took many fetches")
		require.LessOrEqual(t, commits, 12, "about one commit per table per Age and one at the end, not one per fetch")
	})
}

// slowDataFiles takes delay to write each data file, as a slow disk or
// bucket would: the time a commit spends before its log entry.
type slowDataFiles struct {
	deltalog.Store
	delay time.Duration
}

func (s slowDataFiles) Put(ctx context.Context, p string, data []byte) error {
	if strings.HasSuffix(p, ".parquet") && !strings.Contains(p, "_delta_log/") {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Store.Put(ctx, p, data)
}

// TestMaxDelayCountsCommitTime: a trickle's batches are forced by
// max_delay, and each commit takes about a second before its log entry. The
// first forced batch is visible well after max_delay (nothing was learnt
// yet: the bound could fail); from the third on, the table forces its
// batches sooner by half again that time, and they are visible within
// max_delay. The same decisions on a fake clock, to the millisecond and
// with a control, are TestMaxDelayLeadOnFakeClock; this one shows that the
// pipeline learns the lead from its real commits.
func TestMaxDelayCountsCommitTime(t *testing.T) {
	// A commit's time (slow) is large enough that the late first batch (about
	// maxDelay+slow) and the later ones (about maxDelay-slow/2, the lead being
	// half again the commit time) are told apart at maxDelay+slow/3 with more
	// than a second each side: a loaded machine stretches a commit by more
	// than a third of a second. The lead stays within half of maxDelay.
	const maxDelay, slow, every = 6 * time.Second, 2 * time.Second, 100 * time.Millisecond
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 23, Keys: 30})
	pl.mem = map[string]memTable{}
	opts := pl.options("lead")
	opts.OpenStore = func(_ context.Context, path string) (deltalog.Store, error) {
		return slowDataFiles{pl.memStore(path), slow}, nil
	}
	opts.Maintenance.Disabled = true
	opts.Batch = BatchLimits{Records: 1000, Age: 20 * time.Millisecond, MinRecords: 1000, MaxDelay: maxDelay}
	pl.start(opts)
	at := map[cdctable.TopicPartition]map[int64]time.Time{}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for range 330 { // 33s: about 5 forced batches per table
		pl.producedAt(at)
		<-tick.C
	}
	pl.waitCaughtUp()
	pl.requireModel()
	for table, waits := range pl.commitWaits(at) {
		t.Logf("%s: waits %v", table, waits)
		var forced []time.Duration
		for _, w := range waits {
			if w > 0 {
				forced = append(forced, w)
			}
		}
		require.GreaterOrEqual(t, len(forced), 4, table)
		// (The generator's source times are old, so the first batch
		// counts from produceCredit before its arrival.)
		require.Greater(t, forced[0], maxDelay+slow/3, "%s: the first forced batch is late by its commit time", table)
		// The last batch may be cut short by waitCaughtUp's end; the
		// others were forced.
		for i, w := range forced[2:] {
			require.LessOrEqual(t, w, maxDelay+slow/3, "%s: forced batch %d is visible within max_delay", table, i+2)
		}
	}
}
