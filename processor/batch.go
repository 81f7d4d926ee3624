package processor

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// BatchLimits bound one table's micro-batch. A batch is flushed when any
// limit is reached.
type BatchLimits struct {
	// Records is the most records a batch holds (default 10,000).
	Records int
	// Bytes is the most Kafka key+value bytes a batch holds (default 64 MiB).
	Bytes int64
	// Age is how long the first record of a batch may wait (default 1s).
	Age time.Duration
}

func (l BatchLimits) withDefaults() BatchLimits {
	if l.Records <= 0 {
		l.Records = 10_000
	}
	if l.Bytes <= 0 {
		l.Bytes = 64 << 20
	}
	if l.Age <= 0 {
		l.Age = time.Second
	}
	return l
}

// pending is the micro-batch a table is accumulating. It is owned by the run
// loop (and by rebalance callbacks, which the loop's BlockRebalanceOnPoll
// keeps from running concurrently).
type pending struct {
	records []merge.Record
	sizes   []int64 // wire size of each record, parallel to records
	bytes   int64
	// last is the last consumed offset per partition, including records that
	// carry no change (tombstones, dead-lettered records), so the txn moves
	// past them.
	last    map[merge.TopicPartition]int64
	started time.Time // when the first entry arrived; zero when empty
	// oldestCommit is the smallest source commit time in ms, for the
	// end-to-end latency metric (0: none).
	oldestCommit int64
}

// empty reports whether nothing is pending, not even a skipped offset.
func (p *pending) empty() bool { return len(p.last) == 0 }

// add appends a decoded change of size bytes.
func (p *pending) add(now time.Time, r merge.Record, size int) {
	p.note(now, r.TopicPartition, r.Offset)
	p.records = append(p.records, r)
	p.sizes = append(p.sizes, int64(size))
	p.bytes += int64(size)
	if ms := r.Change.CommitMillis; ms > 0 && (p.oldestCommit == 0 || ms < p.oldestCommit) {
		p.oldestCommit = ms
	}
}

// note records that offset of tp was consumed without a change to apply.
func (p *pending) note(now time.Time, tp merge.TopicPartition, offset int64) {
	if p.last == nil {
		p.last = make(map[merge.TopicPartition]int64)
	}
	if p.started.IsZero() {
		p.started = now
	}
	p.last[tp] = offset
}

// due reports whether the batch must be flushed now.
func (p *pending) due(now time.Time, l BatchLimits) bool {
	if p.empty() {
		return false
	}
	return len(p.records) >= l.Records || p.bytes >= l.Bytes || now.Sub(p.started) >= l.Age
}

// deadline is when the batch becomes due by age (zero when empty).
func (p *pending) deadline(l BatchLimits) time.Time {
	if p.empty() {
		return time.Time{}
	}
	return p.started.Add(l.Age)
}

// take returns the batch and resets p.
func (p *pending) take() merge.Batch {
	b := merge.Batch{Records: p.records, LastOffsets: p.last}
	*p = pending{}
	return b
}

// drop forgets the entries of the given partitions (revoked or lost): their
// new owner re-reads them from the table's txn. It returns the bytes freed.
func (p *pending) drop(gone map[merge.TopicPartition]bool) int64 {
	if p.empty() {
		return 0
	}
	hit := false
	for tp := range p.last {
		if gone[tp] {
			hit = true
			delete(p.last, tp)
		}
	}
	if !hit {
		return 0
	}
	before := p.bytes
	n := 0
	var keptBytes int64
	for i, r := range p.records {
		if !gone[r.TopicPartition] {
			p.records[n], p.sizes[n] = r, p.sizes[i]
			keptBytes += p.sizes[i]
			n++
		}
	}
	clear(p.records[n:])
	p.records, p.sizes = p.records[:n], p.sizes[:n]
	p.bytes = keptBytes
	if len(p.last) == 0 {
		*p = pending{}
	}
	return before - p.bytes
}

// dueTables returns the tables whose batches must be flushed now: those at a
// limit, those of stopped tables (what preceded the failure), or all when
// the buffered bytes exceed MaxBufferedBytes.
func (p *Processor) dueTables() []*table {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	over := p.mu.buffered > p.opts.MaxBufferedBytes
	var due []*table
	for _, t := range p.mu.tables {
		if !t.pend.empty() && (over || t.failed != nil || t.pend.due(now, p.opts.Batch)) {
			due = append(due, t)
		}
	}
	return due
}

// flush applies the pending batches of tables and waits for them.
func (p *Processor) flush(ctx context.Context, tables []*table) error {
	if len(tables) == 0 {
		return nil
	}
	return p.finishFlush(ctx, p.startFlush(ctx, tables))
}

// flushJob is one table's batch being applied.
type flushJob struct {
	t      *table
	b      merge.Batch
	oldest int64 // smallest source commit time in ms
	res    merge.Result
	err    error
}

// inflight is a flush running in the background: one Sink.Apply per table,
// concurrently (one Delta commit each). done closes when all returned.
type inflight struct {
	jobs []*flushJob
	done chan struct{}
}

// finished reports whether every apply of f returned.
func (f *inflight) finished() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// startFlush takes the pending batches of tables and applies them in the
// background. At most one flush is in flight (the run loop's invariant), so
// the batches of one table are applied in order.
func (p *Processor) startFlush(ctx context.Context, tables []*table) *inflight {
	f := &inflight{jobs: make([]*flushJob, len(tables)), done: make(chan struct{})}
	p.mu.Lock()
	for i, t := range tables {
		p.mu.buffered -= t.pend.bytes
		oldest := t.pend.oldestCommit // read before take resets it
		f.jobs[i] = &flushJob{t: t, oldest: oldest, b: t.pend.take()}
	}
	p.m.bufferedBytes.Set(float64(p.mu.buffered))
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range f.jobs {
		wg.Go(func() { j.res, j.err = p.apply(ctx, j.t, j.b) })
	}
	go func() {
		wg.Wait()
		close(f.done)
	}()
	return f
}

// finishFlush waits for f, records the applied positions, stops the tables
// whose batch cannot be applied (their batch stays unapplied), and commits
// the applied offsets to the group. Only the end of ctx is returned.
func (p *Processor) finishFlush(ctx context.Context, f *inflight) error {
	<-f.done // the applies end with ctx, so this wait is bounded by it
	commits := make(map[merge.TopicPartition]groupCommit)
	var stop []*flushJob
	p.mu.Lock()
	for _, j := range f.jobs {
		if j.err != nil {
			// The records polled meanwhile follow the unapplied batch:
			// applying them would move the txn past it and lose it. Drop
			// them; the table is stopped (or the run is ending), so they
			// are re-read from the txn on the next start.
			p.mu.buffered -= j.t.pend.bytes
			j.t.pend = pending{}
			// An apply ended by its context is abandoned, not a table
			// failure.
			if ctx.Err() == nil && !errors.Is(j.err, context.Canceled) && !errors.Is(j.err, context.DeadlineExceeded) {
				stop = append(stop, j)
			} else {
				j.t.abandoned = true
			}
			continue
		}
		p.m.observeApply(j.t.path, len(j.b.Records), j.res)
		p.log.Debug("batch applied", "table", j.t.path, "records", len(j.b.Records), "version", j.res.Version,
			"committed", j.res.Committed, "duration", j.res.Duration)
		if j.oldest > 0 && j.res.Committed {
			p.m.endToEnd.WithLabelValues(j.t.path).Observe(p.now().Sub(time.UnixMilli(j.oldest)).Seconds())
		}
		for tp, off := range j.b.LastOffsets {
			st := p.mu.parts[tp]
			if st == nil || st.table != j.t {
				continue // revoked meanwhile; its new owner commits
			}
			st.applied, st.version = off, j.res.Version
			p.m.deltaOffset.WithLabelValues(partLabels(tp)...).Set(float64(off))
			commits[tp] = groupCommit{Next: off + 1, Version: j.res.Version}
		}
	}
	p.mu.Unlock()
	for _, j := range stop {
		te := &TableError{Table: j.t.path, Offset: -1, Err: j.err}
		if len(j.b.Records) > 0 {
			// The whole batch stays unapplied; name its first record.
			te.TopicPartition, te.Offset = j.b.Records[0].TopicPartition, j.b.Records[0].Offset
		}
		p.stopTable(j.t, te)
	}
	p.commitGroup(ctx, commits)
	return ctx.Err()
}

// apply applies one batch, retrying transient failures (storage or registry
// outages) with backoff until they end: a batch is never dropped or
// reordered. Re-applying is safe because the sink ignores records at or
// below its partitions' txn versions.
func (p *Processor) apply(ctx context.Context, t *table, b merge.Batch) (merge.Result, error) {
	for attempt := 0; ; attempt++ {
		res, err := t.sink.Apply(ctx, b)
		switch {
		case err == nil:
			return res, nil
		case ctx.Err() != nil:
			return res, ctx.Err()
		case !isRetryable(err):
			return res, err
		}
		p.m.applyRetries.WithLabelValues(t.path).Inc()
		p.log.Warn("applying batch failed; retrying", "table", t.path, "records", len(b.Records), "attempt", attempt+1, "err", err)
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return res, err
		}
	}
}

// isRetryable decides, for the whole processor, whether an apply error may
// be cured by waiting: everything except what the data or the table itself
// rules out (an unsafe schema change, a value out of range, a table that is
// not ours).
func isRetryable(err error) bool {
	for _, perm := range []error{
		merge.ErrSchema, merge.ErrNoKey, merge.ErrNotCDCTable,
		codecs.ErrSchemaChange, codecs.ErrOutOfRange,
		deltalog.ErrInvalidSchema, deltalog.ErrUnsupportedFeature, deltalog.ErrAppendOnly,
	} {
		if errors.Is(err, perm) {
			return false
		}
	}
	return true
}
