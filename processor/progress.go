package processor

import (
	"context"
	"log/slog"
	"time"
)

// progressEvery is how often a replay or catch-up reports its progress.
const progressEvery = 10 * time.Second

// progress reports a catch-up at INFO: every interval while records are
// behind, how many, the rate over the interval and an ETA; and "caught up"
// once when the rest can be applied within an interval. A process that is
// current logs nothing: idle, or keeping up with a live stream whose few
// records behind are the batches being gathered. It is driven by observe,
// so the clock is the caller's.
type progress struct {
	log   *slog.Logger
	every time.Duration
	// since and appliedAt are the start of the current interval and the
	// records applied then; behind is set while catching up.
	since     time.Time
	appliedAt int64
	behind    bool
}

// observe takes the records behind (over the assigned partitions) and the
// records applied so far at now.
func (r *progress) observe(now time.Time, behind, applied int64) {
	if r.since.IsZero() {
		r.since, r.appliedAt = now, applied
	}
	if behind <= 0 && r.behind {
		r.log.Info("caught up", "records_applied", applied)
		r.behind = false
	}
	dt := now.Sub(r.since)
	if dt < r.every {
		return
	}
	rate := float64(applied-r.appliedAt) / dt.Seconds()
	r.since, r.appliedAt = now, applied
	if behind <= 0 {
		return
	}
	if rate > 0 && float64(behind)/rate < r.every.Seconds() {
		if r.behind {
			r.log.Info("caught up", "records_applied", applied)
			r.behind = false
		}
		return
	}
	r.behind = true
	eta := "unknown" // nothing applied in the interval
	if rate > 0 {
		eta = time.Duration(float64(behind) / rate * float64(time.Second)).Round(time.Second).String()
	}
	r.log.Info("catching up", "records_behind", behind, "records_per_s", int64(rate+0.5), "eta", eta)
}

// runProgress samples the processor's position once a second until ctx ends.
func (p *Processor) runProgress(ctx context.Context) {
	r := progress{log: p.log, every: progressEvery}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			behind, applied := p.position()
			r.observe(p.now(), behind, applied)
		}
	}
}

// position returns the records behind over the started partitions (high
// watermark minus the next offset to apply) and the records applied.
func (p *Processor) position() (behind, applied int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pt := range p.mu.parts {
		if !pt.started {
			continue
		}
		next := pt.applied + 1
		if pt.applied < 0 {
			next = pt.start
		}
		if next >= 0 && pt.hw > next {
			behind += pt.hw - next
		}
	}
	return behind, p.mu.stats.records
}

// runStats counts what a run applied, for the summary it logs on stop.
type runStats struct {
	records, versions int64
	tables            map[string]bool
}

func (s *runStats) add(table string, records int, committed bool) {
	if s.tables == nil {
		s.tables = map[string]bool{}
	}
	s.records += int64(records)
	if committed {
		s.versions++
		s.tables[table] = true
	}
}

// logSummary logs what the run applied, once it has shut down.
func (p *Processor) logSummary(start time.Time) {
	p.mu.Lock()
	s, tables := p.mu.stats, len(p.mu.stats.tables)
	p.mu.Unlock()
	p.log.Info("stopped", "records_applied", s.records, "versions_committed", s.versions,
		"tables", tables, "uptime", p.now().Sub(start).Round(time.Second))
}
