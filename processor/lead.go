package processor

import "time"

// leadWindow is how many of a table's latest forced commits its lead
// follows: the longest of them, so a spike is forgotten after as many.
const leadWindow = 8

// commitLead is how much sooner than MaxDelay a table's batches are
// forced, so that a forced batch is visible by MaxDelay (ADR 0030's
// amendment): the longest a recent forced commit took from its forced
// time to its landing.
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

// learnLead updates the lead from a batch forced by MaxDelay whose oldest
// entry was produced at produced (pending.produced) and whose commit
// landed at landed. The lead
// stays within half of MaxDelay - Age, so that batches still gather when
// commits are very slow. mu must be held.
func (t *table) learnLead(l BatchLimits, produced, landed time.Time) {
	span := l.MaxDelay - l.Age
	late := min(max(landed.Sub(produced)-t.limits(l).MaxDelay, 0), span/2)
	c := &t.lead
	c.late[c.next] = late
	c.next = (c.next + 1) % leadWindow
	c.max = 0
	for _, d := range c.late {
		c.max = max(c.max, d)
	}
}
