package processor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLearnLead: a table's lead is half again the longest of its last
// leadWindow commits' times (for a forced one, from its forced time),
// within half of MaxDelay - Age, and it shortens the MaxDelay its batches
// follow, never below Age.
func TestLearnLead(t *testing.T) {
	l := BatchLimits{Age: time.Second, MaxDelay: 10 * time.Second}
	t0 := time.Unix(1_000_000, 0)
	var tb table
	land := func(after time.Duration) time.Duration { // a forced commit that landed after its forced time
		forcedAt := t0.Add(tb.limits(l).MaxDelay)
		tb.learnLead(l, t0, forcedAt, forcedAt.Add(after), true)
		return tb.limits(l).MaxDelay
	}
	require.Equal(t, 10*time.Second, tb.limits(l).MaxDelay, "nothing learnt")
	require.Equal(t, 9550*time.Millisecond, land(300*time.Millisecond))
	require.Equal(t, 9550*time.Millisecond, land(100*time.Millisecond), "the longest of the window")
	require.Equal(t, 9250*time.Millisecond, land(500*time.Millisecond))
	for range leadWindow {
		land(100 * time.Millisecond)
	}
	require.Equal(t, 9850*time.Millisecond, tb.limits(l).MaxDelay, "a spike is forgotten after the window")
	require.Equal(t, 5500*time.Millisecond, land(time.Minute), "at most half of MaxDelay - Age")
	require.Equal(t, 5500*time.Millisecond, land(-time.Second), "landing early learns nothing")

	var fresh table
	fresh.learnLead(l, time.Time{}, t0, t0.Add(200*time.Millisecond), false)
	require.Equal(t, 9700*time.Millisecond, fresh.limits(l).MaxDelay, "any commit's own time counts")
	start := t0.Add(fresh.limits(l).MaxDelay + time.Second) // the worker woke late
	fresh.learnLead(l, t0, start, start.Add(100*time.Millisecond), true)
	require.Equal(t, 8350*time.Millisecond, fresh.limits(l).MaxDelay, "a forced commit counts from its forced time")

	same := BatchLimits{Age: time.Second, MaxDelay: time.Second}
	var old table
	old.learnLead(same, t0, t0, t0.Add(5*time.Second), true)
	require.Equal(t, time.Second, old.limits(same).MaxDelay, "MaxDelay = Age (the old behaviour) is left alone")
}

// TestMaxDelayLeadOnFakeClock drives a table's commit decisions
// (commitDueLocked, the worker's) and its lead on a fake clock: a trickle
// of an event every 100ms, min_records above what arrives, each commit
// taking slow to land, the worker waking when the decision says. The first
// forced batch is visible at max_delay plus its commit time (nothing
// learnt yet), and from the second on every forced batch within max_delay,
// to the millisecond; without the lead (the control) none is.
func TestMaxDelayLeadOnFakeClock(t *testing.T) {
	const maxDelay, slow, every = 4 * time.Second, time.Second, 100 * time.Millisecond
	l := BatchLimits{Records: 1000, Age: 20 * time.Millisecond, MinRecords: 1000, MaxDelay: maxDelay}.withDefaults()
	run := func(lead bool) []time.Duration {
		p := &Processor{opts: Options{Batch: l}, idleClose: time.Minute}
		p.mu.budget = newCommitBudget(l)
		var tb table
		now := time.Unix(1_000_000, 0)
		end := now.Add(30 * time.Second)
		nextEvent := now
		var waits []time.Duration
		var landing time.Time // the commit in flight lands then; zero: none
		var flight work
		var flightStart time.Time
		for now.Before(end) {
			if now.Equal(nextEvent) {
				tb.pend.add(now, l, entry{kind: entryChange, size: 1, produced: now})
				nextEvent = now.Add(every)
			}
			if !landing.IsZero() && !now.Before(landing) {
				waits = append(waits, landing.Sub(flight.produced))
				if lead {
					tb.learnLead(l, flight.produced, flightStart, landing, true)
				}
				landing = time.Time{}
			}
			wake := nextEvent
			if landing.IsZero() {
				why, sleep := p.commitDueLocked(&tb, now, false, false)
				if why != "" {
					require.Equal(t, commitMaxDelay, why)
					flight, flightStart, landing = tb.pend.take(tb.limits(l)), now, now.Add(slow)
				} else if at := now.Add(sleep); at.Before(wake) {
					wake = at
				}
			}
			if !landing.IsZero() && landing.Before(wake) {
				wake = landing
			}
			now = wake
		}
		return waits
	}
	waits := run(true)
	t.Logf("forced batches visible after %v", waits)
	require.GreaterOrEqual(t, len(waits), 5)
	require.Equal(t, maxDelay+slow, waits[0], "the first forced batch is late by its commit time")
	for i, w := range waits[1:] {
		require.LessOrEqual(t, w, maxDelay, "forced batch %d is visible within max_delay", i+1)
	}
	for i, w := range run(false) {
		require.Greater(t, w, maxDelay, "without the lead, forced batch %d is late", i)
	}
}
