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
