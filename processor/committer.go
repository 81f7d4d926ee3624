package processor

import (
	"context"
	"time"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// committer commits the tables' applied positions to the consumer group,
// off the tables' paths: a slow or failing group commit delays no table.
// Commits of many tables coalesce into one request. The group offsets are
// for lag tooling; the Delta txn stays the truth (ADR 0020).
type committer struct {
	p    *Processor
	wake chan struct{}
	// dirty holds the positions not committed yet; guarded by p.mu.
	dirty map[cdctable.TopicPartition]groupCommit
}

func newCommitter(p *Processor) *committer {
	return &committer{p: p, wake: make(chan struct{}, 1), dirty: map[cdctable.TopicPartition]groupCommit{}}
}

// markLocked queues a position to commit; p.mu must be held.
func (c *committer) markLocked(tp cdctable.TopicPartition, gc groupCommit) { c.dirty[tp] = gc }

// forgetLocked drops a revoked partition's queued position; p.mu must be held.
func (c *committer) forgetLocked(tp cdctable.TopicPartition) { delete(c.dirty, tp) }

func (c *committer) kick() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run commits queued positions as they come and, every RecommitInterval,
// every assigned partition's position (so the group's offsets do not
// expire while idle). When ctx ends it commits what is queued, briefly.
func (c *committer) run(ctx context.Context) {
	tick := time.NewTicker(c.p.opts.RecommitInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c.commit(fctx, false)
			cancel()
			return
		case <-c.wake:
			c.commit(ctx, false)
		case <-tick.C:
			c.commit(ctx, true)
		}
	}
}

// commit commits the queued positions, or with all every applied one. A
// failure is logged and counted, and the positions stay queued for the next
// try.
func (c *committer) commit(ctx context.Context, all bool) {
	p := c.p
	p.mu.Lock()
	offs := c.dirty
	c.dirty = map[cdctable.TopicPartition]groupCommit{}
	if all {
		for tp, pt := range p.mu.parts {
			if _, ok := offs[tp]; !ok && pt.started && pt.applied >= 0 {
				offs[tp] = groupCommit{Next: pt.applied + 1, Version: pt.version}
			}
		}
	}
	p.mu.Unlock()
	if len(offs) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := commitOffsets(cctx, p.client, offs); err != nil {
		if ctx.Err() != nil {
			// Shutting down: run commits what is queued once more, with a fresh
			// context, and warns if that fails.
			p.log.Debug("group offset commit interrupted by shutdown; committed again on the way out", "err", err)
		} else {
			p.m.groupCommits.WithLabelValues("error").Inc()
			p.log.Warn("group offset commit failed; retried with the next commit", "partitions", len(offs), "err", err)
		}
		p.mu.Lock()
		for tp, gc := range offs {
			if _, newer := c.dirty[tp]; !newer && p.mu.parts[tp] != nil {
				c.dirty[tp] = gc
			}
		}
		p.mu.Unlock()
		return
	}
	p.m.groupCommits.WithLabelValues("ok").Inc()
	for tp, o := range offs {
		p.m.groupOffset.WithLabelValues(partLabels(tp)...).Set(float64(o.Next))
	}
}
