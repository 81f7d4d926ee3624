package processor

import "time"

// leadWindow is how many of a table's latest commits its lead follows, so
// a slow one is forgotten after as many.
const leadWindow = 8

// commitLead is how much sooner than MaxDelay a table's batches are
// forced, so that a forced batch is visible by MaxDelay (ADR 0030's
// amendment): half again the longest of its recent commits' times. The
// longest of 8 alone is exceeded by about one commit in 9 when their
// times vary at random; the half covers them.
type commitLead struct {
	late [leadWindow]time.Duration
	next int
	max  time.Duration
}

// limits are the batch limits the table's batches follow: MaxDelay less
// the table's lead, but never below Age. mu must be held.
func (t *table) limits(l BatchLimits) BatchLimits {
	l.MaxDelay = max(l.MaxDelay-t.lead.max, l.Age)
	return l
}

// learnLead updates the lead from a commit that started at start and
// landed at landed. The lead takes its time, and for a batch forced by
// MaxDelay whose oldest entry was produced at produced (pending.produced),
// how long after its forced time it landed, which adds the worker's own
// delay. Every commit counts, so the first forced batches after a snapshot
// already have a lead. The lead stays within half of MaxDelay - Age, so
// that batches still gather when commits are very slow. mu must be held.
func (t *table) learnLead(l BatchLimits, produced, start, landed time.Time, forced bool) {
	span := l.MaxDelay - l.Age
	late := landed.Sub(start)
	if forced {
		late = max(late, landed.Sub(produced)-t.limits(l).MaxDelay)
	}
	c := &t.lead
	c.late[c.next] = max(late, 0)
	c.next = (c.next + 1) % leadWindow
	c.max = 0
	for _, d := range c.late {
		c.max = max(c.max, d)
	}
	c.max = max(0, min(c.max*3/2, span/2))
}
