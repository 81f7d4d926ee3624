package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/backoff"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// errRevoked ends an apply whose partitions a rebalance took away.
var errRevoked = errors.New("processor: partitions revoked")

// runTable is a table's worker (ADR 0026): it opens the table, finds the
// start offsets of partitions assigned to it, and applies and commits its
// batches one at a time, in order, retrying transient failures. It returns
// when the table has had no partitions for idleClose, or at shutdown after
// committing what it holds.
func (p *Processor) runTable(t *table) {
	defer close(t.done)
	// Only this goroutine sets t.sink (openTable).
	defer func() {
		if t.sink != nil {
			if err := t.sink.Close(); err != nil {
				p.log.Warn("closing table", "table", t.path, "err", err)
			}
		}
	}()
	ctx := p.tablesCtx
	if !p.openTable(ctx, t) && ctx.Err() != nil {
		return
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if ctx.Err() != nil {
			p.finalFlush(t)
			return
		}
		now := p.now()
		p.mu.Lock()
		stopped := t.failed != nil
		starts := t.takeStarts()
		over := p.mu.buffered > p.opts.MaxBufferedBytes
		why, wait := p.commitDueLocked(t, now, stopped, over)
		due := why != ""
		if len(t.parts) == 0 && t.pend.empty() && (stopped || !t.idleSince.IsZero() && now.Sub(t.idleSince) >= p.idleClose) {
			p.closeTableLocked(t)
			p.mu.Unlock()
			return
		}
		if len(t.parts) == 0 {
			wait = min(wait, p.idleClose-now.Sub(t.idleSince))
		}
		p.mu.Unlock()
		switch {
		case stopped:
		case len(starts) > 0:
			p.startPartitions(ctx, t, starts)
			continue
		case due:
			p.commitNext(t, why)
			continue
		}
		timer.Reset(max(wait, time.Millisecond))
		select {
		case <-t.wake:
		case <-timer.C:
		case <-ctx.Done():
		}
	}
}

// Why a batch is committed, as the cdc2delta_commits_total reason label
// names it.
const (
	commitFull     = "full"      // it reached batch.max_records or max_bytes
	commitReady    = "ready"     // min_records and max_age, within the budget
	commitMaxDelay = "max_delay" // it waited the freshness bound
	commitMemory   = "memory"    // memory.max_buffered_bytes was exceeded
	commitPoison   = "poison"    // what precedes a poison record
	commitShutdown = "shutdown"
)

// commitDueLocked decides whether the table commits now, and why; if not,
// how long it may sleep before it looks again. A ready batch reserves a
// slot of the commit budget once, and waits for it or for MaxDelay,
// whichever comes first; a forced commit takes a slot without waiting. mu
// must be held.
func (p *Processor) commitDueLocked(t *table, now time.Time, stopped, over bool) (string, time.Duration) {
	l, pd := t.limits(p.opts.Batch), &t.pend
	var why string
	switch {
	case stopped || pd.empty():
		t.slot = time.Time{}
		return "", p.idleClose
	case over:
		why = commitMemory
	case pd.full(l):
		why = commitFull
	case pd.poisonFirst():
		why = commitPoison
	case pd.forced(now, l):
		why = commitMaxDelay
	case pd.ready(now, l, t.drained()):
		if t.slot.IsZero() {
			t.slot = p.mu.budget.reserve(now, pd.busy)
		}
		if now.Before(t.slot) {
			wake := t.slot
			if f := pd.forcedAt(l); f.Before(wake) {
				wake = f
			}
			return "", wake.Sub(now)
		}
		t.slot = time.Time{}
		return commitReady, 0
	default:
		return "", pd.wake(now, l).Sub(now)
	}
	// A forced commit uses up the budget too, but for one max_delay forced:
	// that floor, a commit per table per max_delay, is the tables' and not
	// the budget's to bound, and spending the budget on it would hold every
	// busy table to max_delay too once the tables are many (ADR 0030).
	if t.slot.IsZero() && why != commitMaxDelay {
		p.mu.budget.reserve(now, false)
	}
	t.slot = time.Time{}
	return why, 0
}

// openTable opens the table's store and sink, retrying transient failures.
// It reports whether the table opened; a permanent failure stops it.
func (p *Processor) openTable(ctx context.Context, t *table) bool {
	p.mu.Lock()
	failed := t.failed != nil
	p.mu.Unlock()
	if failed {
		return false
	}
	start := time.Now()
	var sink tableSink
	var changes *merge.ChangeLog
	var hist *merge.History
	err := p.withRetry(ctx, t, "opening", func(ctx context.Context) error {
		select {
		case p.openSlots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-p.openSlots }()
		store, err := p.opts.OpenStore(ctx, t.path)
		if err != nil {
			return fmt.Errorf("opening store of table %s: %w", t.path, err)
		}
		so := t.sinkOpts
		so.Store, so.TableName = store, t.path
		if so.Logger == nil {
			so.Logger = p.log
		}
		if t.histOnly {
			// The history table is the table (history: only).
			h, err := p.openHistory(ctx, t, t.path, so.Logger)
			if err != nil {
				return err
			}
			sink = historySink{h}
		} else {
			s, err := merge.Open(ctx, so)
			if err != nil {
				return err
			}
			sink = s
		}
		if t.histPath != "" {
			if hist, err = p.openHistory(ctx, t, t.histPath, so.Logger); err != nil {
				return err
			}
		}
		if t.logPath == "" {
			return nil
		}
		if store, err = p.opts.OpenStore(ctx, t.logPath); err != nil {
			return fmt.Errorf("opening store of change log %s: %w", t.logPath, err)
		}
		lo := merge.ChangeLogOptions{Store: store, TableName: t.logPath, ColumnNames: so.ColumnNames, Logger: so.Logger}
		if p.maint != nil {
			lo.TableOptions = []deltalog.Option{deltalog.DisableCheckpoints()} // the maintainer's (ADR 0032)
		}
		changes, err = merge.OpenChangeLog(ctx, lo)
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			p.stopTable(t, &TableError{Table: t.path, Offset: -1, Phase: "opening", Err: err, Hint: hint(err, "opening")})
		}
		return false
	}
	p.mu.Lock()
	t.sink, t.log, t.hist, t.opened = sink, changes, hist, true
	p.mu.Unlock()
	p.m.setTableState(t.path, TableRunning)
	p.registerTable(t) // an existing table's entry is checked once per start
	shape := "table"
	if t.histOnly {
		shape = "history only"
	}
	p.log.Info("table opened", "table", t.path, "topic", t.src.Topic, "shape", shape, "version", sink.Version(),
		"delete_mode", t.sinkOpts.DeleteMode, "merge_mode", t.sinkOpts.Mode, "bad_input", string(t.policy),
		"duration", time.Since(start).Round(time.Millisecond))
	return true
}

// takeStarts marks and returns the partitions that wait for their start
// offsets; mu must be held.
func (t *table) takeStarts() []*partition {
	if !t.opened || t.failed != nil {
		return nil
	}
	var out []*partition
	for _, pt := range t.parts {
		if !pt.starting {
			pt.starting = true
			out = append(out, pt)
		}
	}
	return out
}

// startPartitions finds where newly assigned partitions resume (ADR 0020):
// it reads the table's txn from a fresh snapshot (another instance may have
// committed since this one last looked) and hands the offsets to the loop.
// A table that dead-letters checks its dead-letter topics first.
func (p *Processor) startPartitions(ctx context.Context, t *table, parts []*partition) {
	var pos, logged, hist map[cdctable.TopicPartition]int64
	err := p.withRetry(ctx, t, "reading start offsets", func(ctx context.Context) (err error) {
		if pos, err = t.sink.Positions(ctx); err != nil {
			return err
		}
		if t.hist != nil {
			if hist, err = t.hist.Positions(ctx); err != nil {
				return err
			}
		}
		if t.log == nil {
			return nil
		}
		logged, err = t.log.Positions(ctx)
		return err
	})
	if err == nil && t.policy == PolicyDeadLetter {
		topics := map[string]bool{}
		for _, pt := range parts {
			topics[pt.tp.Topic] = true
		}
		for topic := range topics {
			if err = p.withRetry(ctx, t, "checking the dead-letter topic", func(ctx context.Context) error {
				return p.dlq.prepare(ctx, topic)
			}); err != nil {
				break
			}
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			p.stopTable(t, &TableError{Table: t.path, Offset: -1, Phase: "opening", Err: err, Hint: hint(err, "opening")})
		}
		return
	}
	version := t.sink.Version()
	p.mu.Lock()
	for _, pt := range parts {
		if p.mu.parts[pt.tp] != pt {
			continue // revoked meanwhile
		}
		txn, hasTxn := pos[pt.tp]
		from := txn
		if v, ok := logged[pt.tp]; ok && hasTxn && v < txn {
			// The change log gets each batch first, so it lags the table
			// only where the table moved alone (cdc2delta skip, or the log
			// turned off for a while): the partition resumes from the log,
			// and the table ignores what it already holds.
			from = v
		}
		if v, ok := hist[pt.tp]; ok && hasTxn && v < from {
			// The history table gets each batch before the table, too
			// (ADR 0046): it resumes from its own txn.
			from = v
		}
		next, why := cdctable.StartOffset(from, hasTxn, pt.committed)
		pt.start, pt.version = next, version
		if hasTxn {
			pt.txn = txn
		}
		if next >= 0 {
			pt.applied = next - 1
		}
		p.mu.starts = append(p.mu.starts, pt)
		if hasTxn {
			p.m.deltaOffset.WithLabelValues(partLabels(pt.tp)...).Set(float64(txn))
		}
		p.log.Log(ctx, startLevel(why), "partition assigned", "table", t.path, "topic", pt.tp.Topic, "partition", pt.tp.Partition,
			"start", next, "reason", string(why), "txn", txnAttr(txn, hasTxn), "group_offset", committedAttr(pt.committed))
	}
	p.mu.Unlock()
	p.wake()
}

// commitNext commits the next batch of the table: it dead-letters the bad
// records among it, applies its changes with one Delta commit (txn moving
// past every offset it covers), and stops the table at a poison record.
func (p *Processor) commitNext(t *table, why string) {
	start := p.now()
	p.mu.Lock()
	before := t.pend.bytes
	w := t.pend.take(p.opts.Batch)
	p.mu.buffered -= before - t.pend.bytes
	p.m.bufferedBytes.Set(float64(p.mu.buffered))
	fl := &flight{parts: map[cdctable.TopicPartition]bool{}, done: make(chan struct{})}
	for i := range w.recs {
		fl.parts[w.recs[i].TopicPartition] = true
	}
	for i := range w.marks {
		fl.parts[w.marks[i].tp] = true
	}
	ctx, cancel := context.WithCancelCause(p.applyCtx)
	fl.cancel = cancel
	t.flight = fl
	p.mu.Unlock()
	p.wake() // the table may fetch again
	defer func() {
		cancel(nil)
		p.mu.Lock()
		t.flight = nil
		p.mu.Unlock()
		close(fl.done)
	}()

	what, err := p.apply(ctx, t, &w, why)
	switch {
	case err == nil:
		p.mu.Lock()
		t.learnLead(p.opts.Batch, w.produced, start, p.now(), why == commitMaxDelay)
		// Committed: nothing refers to the batch's records any more (a
		// failed batch's may live on in its error, so only this case).
		// Its array serves the next batch if one is waiting.
		if t.pend.empty() {
			t.pend.arrays.drop()
		} else {
			t.pend.arrays.put(w.arr)
		}
		p.mu.Unlock()
		w.recs, w.arr = nil, nil
	case errors.Is(context.Cause(ctx), errRevoked):
		p.mu.Lock()
		before := t.pend.bytes
		t.pend.requeue(w, func(tp cdctable.TopicPartition) bool { return t.parts[tp] == nil })
		p.mu.buffered += t.pend.bytes - before
		p.mu.Unlock()
		p.log.Info("apply gave way to a rebalance; the rest of its batch is applied again", "table", t.path)
		return
	case ctx.Err() != nil:
		// Shutdown ran out of time: nothing after this batch may be
		// applied by this run; the next one re-reads it from the txn.
		p.mu.Lock()
		p.mu.buffered -= t.pend.clear()
		p.mu.Unlock()
		p.log.Warn("batch abandoned at shutdown; it is re-read on restart", "table", t.path, "err", err)
		return
	default:
		te := &TableError{Table: t.path, Offset: -1, Phase: what, Err: err, Hint: hint(err, what)}
		var se *merge.SchemaError
		switch {
		case errors.As(err, &se) && se.Record != nil:
			// The whole batch stays unapplied, but name the record whose
			// schema stopped it, not the batch's first (of any partition).
			te.TopicPartition, te.Offset = se.Record.TopicPartition, se.Record.Offset
		default:
			// The whole batch stays unapplied; name its first record.
			if tp, off, ok := w.first(); ok {
				te.TopicPartition, te.Offset = tp, off
			}
		}
		p.stopTable(t, te)
		return
	}
	if w.poison != nil {
		e := w.poison
		h := hint(e.cause, "decoding")
		if h == "" {
			h = fmt.Sprintf("bad_input is fail: fix the record's producer, or move past it with "+
				"`cdc2delta skip --config FILE --topic %s --partition %d --offset %d`, or set bad_input: dead-letter; then restart",
				e.tp.Topic, e.tp.Partition, e.offset)
		}
		p.stopTable(t, &TableError{Table: t.path, TopicPartition: e.tp, Offset: e.offset, Phase: "decoding", Err: e.cause, Hint: h})
	}
}

// apply dead-letters the work's bad records, then applies its batch. It
// returns what it was doing when it failed.
func (p *Processor) apply(ctx context.Context, t *table, w *work, why string) (string, error) {
	for i := range w.marks {
		e := &w.marks[i].entry
		if e.kind != entryDeadLetter {
			continue
		}
		if err := p.withRetry(ctx, t, "dead-lettering", func(ctx context.Context) error {
			return p.dlq.send(ctx, t, e)
		}); err != nil {
			return "dead-lettering", err
		}
	}
	b := w.batch()
	if len(b.LastOffsets) == 0 {
		return "", nil
	}
	p.mu.Lock()
	b.Owned = t.owned()
	p.mu.Unlock()
	if t.log != nil {
		// Before the table: the log then always holds what the table does.
		if err := p.withRetry(ctx, t, "logging changes", func(ctx context.Context) error {
			_, err := t.log.Append(ctx, b)
			return err
		}); err != nil {
			return "logging changes", err
		}
	}
	if t.hist != nil {
		// Before the table, after the log: a fault here stops this table
		// only, and the history never lags what the table holds.
		if err := p.withRetry(ctx, t, "applying history", func(ctx context.Context) error {
			_, err := t.hist.Apply(ctx, b)
			return err
		}); err != nil {
			return "applying history", err
		}
	}
	var res merge.Result
	if err := p.withRetry(ctx, t, "applying", func(ctx context.Context) (err error) {
		res, err = t.sink.Apply(ctx, b)
		return err
	}); err != nil {
		return "applying", err
	}
	p.applied(t, w, b, res, why)
	return "", nil
}

// applied records a committed batch: the partitions' positions, the group
// offsets to commit, and the metrics.
func (p *Processor) applied(t *table, w *work, b merge.Batch, res merge.Result, why string) {
	p.m.observeApply(t.path, len(b.Records), res, why)
	if oldest := w.oldestCommit(); oldest > 0 && res.Committed {
		p.m.endToEnd.WithLabelValues(t.path).Observe(p.now().Sub(time.UnixMilli(oldest)).Seconds())
	}
	if res.Committed {
		p.observeCost(t, res)
		p.maint.committed(t)
		p.registerTable(t)
	}
	p.log.Debug("batch applied", "table", t.path, "records", len(b.Records), "version", res.Version,
		"committed", res.Committed, "duration", res.Duration)
	p.mu.Lock()
	p.mu.stats.add(t.path, len(b.Records), res.Committed)
	for tp, off := range b.LastOffsets {
		pt := t.parts[tp]
		if pt == nil || p.mu.parts[tp] != pt {
			continue // revoked meanwhile; its new owner commits
		}
		pt.applied, pt.version = off, res.Version
		p.m.deltaOffset.WithLabelValues(partLabels(tp)...).Set(float64(off))
		p.commit.markLocked(tp, groupCommit{Next: off + 1, Version: res.Version})
	}
	p.mu.Unlock()
	p.commit.kick()
}

// costEvery is how often a table's live-file gauges are refreshed: Stats
// walks the live files, as a commit's plan already does once.
const costEvery = 10 * time.Second

// observeCost sets the table's live-file gauges after a commit (at most
// every p.costEvery) and logs once when its debt (the files and deletion
// vectors a full scan reads beyond what OPTIMIZE would leave) reaches
// Options.DebtWarnFiles, and again only after it has fallen below half of
// it.
func (p *Processor) observeCost(t *table, res merge.Result) {
	now := p.now()
	p.mu.Lock()
	skip := !t.costAt.IsZero() && now.Sub(t.costAt) < p.costEvery
	if !skip {
		t.costAt = now
	}
	p.mu.Unlock()
	if skip {
		return
	}
	st := t.sink.Stats()
	p.m.observeCost(t.path, st)
	limit := p.opts.DebtWarnFiles
	if limit <= 0 {
		return
	}
	debt := st.SmallFileDebt + st.DeletionVectors
	p.mu.Lock()
	warn := !t.debtWarned && debt >= limit
	switch {
	case warn:
		t.debtWarned = true
	case t.debtWarned && debt < limit/2:
		t.debtWarned = false
	}
	p.mu.Unlock()
	if warn {
		do := "run `cdc2delta optimize` on it (or OPTIMIZE with Spark or delta-rs), or turn maintenance on"
		if p.maint != nil {
			do = "maintenance is not keeping up: see cdc2delta_maintenance_total and the maintenance log lines"
		}
		p.log.Warn("table's small-file and deletion-vector debt is high: readers open and filter ever more objects; "+do,
			"table", t.path, "version", res.Version,
			"live_files", st.Files, "small_file_debt", st.SmallFileDebt, "deletion_vectors", st.DeletionVectors,
			"deleted_rows", st.DeletedRows, "threshold", limit)
	}
}

// finalFlush commits what the table holds at shutdown, in batches, until it
// is empty, it stops, or applyCtx ends.
func (p *Processor) finalFlush(t *table) {
	for p.applyCtx.Err() == nil {
		p.mu.Lock()
		done := t.failed != nil || !t.opened || t.pend.empty()
		p.mu.Unlock()
		if done {
			return
		}
		p.commitNext(t, commitShutdown)
	}
}

// withRetry runs fn until it succeeds, fails permanently or ctx ends,
// waiting the retry policy's backoff between transient failures. The
// table's retry state shows the run of failures; past the budget the table
// is reported stalled. A run of failures starts when its first failed
// attempt began: a call that hung until its deadline counts from the hang.
func (p *Processor) withRetry(ctx context.Context, t *table, what string, fn func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		start := p.now()
		err := fn(ctx)
		if err == nil || ctx.Err() != nil || !transient(err) {
			p.retryEnded(t, attempt)
			if err != nil && ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return err
		}
		d := p.retry.Delay(attempt)
		p.retryFailed(t, what, err, start, attempt, d)
		if err := backoff.Sleep(ctx, d); err != nil {
			p.retryEnded(t, attempt)
			return err
		}
	}
}

func (p *Processor) retryFailed(t *table, what string, err error, start time.Time, attempt int, next time.Duration) {
	now := p.now()
	p.mu.Lock()
	r := &t.retry
	if !r.failing() {
		r.since = start
	}
	r.attempts, r.last, r.what = attempt+1, err, what
	failingFor := now.Sub(r.since)
	state := t.state(p.retry.budget, now)
	p.mu.Unlock()
	p.m.retries.WithLabelValues(t.path, what).Inc()
	p.m.retrySeconds.WithLabelValues(t.path).Set(failingFor.Seconds())
	p.m.setTableState(t.path, state)
	if state == TableStalled {
		p.log.Error("table stalled: a transient failure outlasted the retry budget; still retrying", "table", t.path,
			"while", what, "failing_for", failingFor.Round(time.Second), "attempt", attempt+1, "retry_in", next.Round(time.Millisecond), "err", err)
		return
	}
	p.log.Warn(what+" failed; retrying", "table", t.path, "attempt", attempt+1, "retry_in", next.Round(time.Millisecond), "err", err)
}

func (p *Processor) retryEnded(t *table, attempts int) {
	if attempts == 0 {
		return
	}
	p.mu.Lock()
	t.retry = retryState{}
	state := t.state(p.retry.budget, p.now())
	p.mu.Unlock()
	p.m.retrySeconds.WithLabelValues(t.path).Set(0)
	p.m.setTableState(t.path, state)
}

// stopTable stops a table: it drops what it holds (re-read from its txn
// after a restart) and its partitions stop fetching.
func (p *Processor) stopTable(t *table, te *TableError) {
	p.mu.Lock()
	if t.failed != nil {
		p.mu.Unlock()
		return
	}
	t.failed = te
	p.mu.buffered -= t.pend.clear()
	p.mu.Unlock()
	p.m.tableFailed.WithLabelValues(t.path).Set(1)
	p.m.setTableState(t.path, TableStopped)
	p.log.Error("table stopped", "table", t.path, "while", te.Phase, "topic", te.Topic, "partition", te.Partition,
		"offset", te.Offset, "err", te.Err, "what_to_do", te.Hint)
	p.wake()
}

// closeTableLocked forgets a table that has no partitions left; mu must be
// held. A later assignment opens it afresh.
func (p *Processor) closeTableLocked(t *table) {
	if p.mu.tables[t.path] == t {
		delete(p.mu.tables, t.path)
	}
	p.m.forgetTable(t.path)
	p.log.Info("table closed: no partitions assigned", "table", t.path)
}

// startLevel is the level a partition's start is logged at: a replay the
// operator asked for is expected (INFO); a group offset ahead of the table,
// which is ignored, is news (WARN).
func startLevel(why cdctable.StartReason) slog.Level {
	if why == cdctable.StartAheadOfDelta {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// openHistory opens the table's history table (ADR 0046) at path: its
// histPath, or its own path when it keeps only the history table.
func (p *Processor) openHistory(ctx context.Context, t *table, path string, logger *slog.Logger) (*merge.History, error) {
	store, err := p.opts.OpenStore(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("opening store of history table %s: %w", path, err)
	}
	ho := t.histOpts
	ho.Store, ho.TableName, ho.Logger = store, path, logger
	ho.Only = t.histOnly
	if p.maint != nil {
		ho.TableOptions = []deltalog.Option{deltalog.DisableCheckpoints()} // the maintainer's (ADR 0032)
	}
	if ho.ColumnNames == "" {
		ho.ColumnNames = t.sinkOpts.ColumnNames
	}
	return merge.OpenHistory(ctx, ho)
}
