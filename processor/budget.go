package processor

import "time"

// commitBudget is the commits-per-second budget all tables share (ADR
// 0030), kept as the time of the next free commit slot (GCRA): a slot comes
// every 1/CommitsPerSecond, and up to a second's worth may be used at once
// after a quiet spell. A table whose batch is ready reserves the next slot
// and commits when it comes (tables get their turns in the order they
// asked, and each sleeps until its own); a forced commit takes a slot
// without waiting, but for one forced by MaxDelay, the floor of the
// tables' commits, which the budget does not bound. It is guarded by
// Processor.mu.
type commitBudget struct {
	every time.Duration // between slots; 0: unlimited
	// burst is how far behind now the next slot may lag: the slots a quiet
	// spell banks.
	burst time.Duration
	// ahead is how far past now forced commits may push the next slot, so
	// a spell of them does not starve ready batches for longer than
	// MaxDelay, which forces them anyway.
	ahead time.Duration
	next  time.Time
	// busyNext is the next slot of busy batches (pending.busy): they
	// queue behind each other only, and each takes a slot from the rest.
	busyNext time.Time
}

func newCommitBudget(l BatchLimits) commitBudget {
	if l.CommitsPerSecond <= 0 {
		return commitBudget{}
	}
	every := max(time.Duration(float64(time.Second)/l.CommitsPerSecond), time.Microsecond)
	return commitBudget{every: every, burst: max(time.Second-every, 0), ahead: l.MaxDelay}
}

// reserve takes the next free slot and returns when it is: at or before
// now, the commit may go at once. A busy batch takes the next slot of busy
// batches and pushes the others' back by one, so that tables of
// min_records per max_age or more commit every max_age while the budget
// holds them, however many slower tables wait (ADR 0030).
func (b *commitBudget) reserve(now time.Time, busy bool) time.Time {
	if b.every == 0 {
		return now
	}
	if busy {
		slot := b.take(&b.busyNext, now)
		b.take(&b.next, now)
		return slot
	}
	return b.take(&b.next, now)
}

// take takes the slot next says, at most burst behind now, and moves next
// one slot on, at most ahead of now.
func (b *commitBudget) take(next *time.Time, now time.Time) time.Time {
	slot := *next
	if floor := now.Add(-b.burst); slot.Before(floor) {
		slot = floor
	}
	*next = slot.Add(b.every)
	if limit := now.Add(b.ahead); next.After(limit) {
		*next = limit
	}
	return slot
}
