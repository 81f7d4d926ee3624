package processor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sync/errgroup"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// clientOptions builds the franz-go consumer: cooperative-sticky group,
// manual commits, rebalances blocked while a polled batch is processed, and
// start offsets taken from the Delta txn (ADR 0020).
func (p *Processor) clientOptions() []kgo.Opt {
	o := p.opts
	reset := kgo.NewOffset().AtStart()
	if o.ResetOffset == "latest" {
		reset = kgo.NewOffset().AtEnd()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(o.Brokers...),
		kgo.WithLogger(kafkaLogger{p.log}),
		kgo.ConsumerGroup(o.Group),
		kgo.ConsumeTopics(o.Topics...),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(reset),
		kgo.FetchMaxBytes(o.FetchMaxBytes),
		kgo.OnOffsetsFetched(p.onOffsetsFetched),
		kgo.AdjustFetchOffsetsFn(p.adjustOffsets),
		kgo.OnPartitionsAssigned(p.onAssigned),
		kgo.OnPartitionsRevoked(p.onRevoked),
		kgo.OnPartitionsLost(p.onRevoked),
		kgo.OnPartitionsCallbackBlocked(func(context.Context, *kgo.Client) {
			p.rebalanceWanted.Store(true)
			if give := p.giveWay.Load(); give != nil {
				(*give)(errGiveWay)
			}
		}),
	}
	if o.TopicRegex {
		opts = append(opts, kgo.ConsumeRegex())
	}
	if o.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(o.InstanceID))
	}
	return append(opts, o.ClientOptions...)
}

// onOffsetsFetched keeps the group's committed offsets with their metadata,
// which adjustOffsets needs to tell an operator's reset from our own commit.
func (p *Processor) onOffsetsFetched(_ context.Context, _ *kgo.Client, resp *kmsg.OffsetFetchResponse) error {
	got := make(map[merge.TopicPartition]committedOffset)
	add := func(topic string, part int32, off int64, meta *string) {
		if off < 0 {
			return
		}
		c := committedOffset{Offset: off}
		if meta != nil {
			c.Meta = *meta
		}
		got[merge.TopicPartition{Topic: topic, Partition: part}] = c
	}
	for _, t := range resp.Topics {
		for _, pt := range t.Partitions {
			add(t.Topic, pt.Partition, pt.Offset, pt.Metadata)
		}
	}
	for _, g := range resp.Groups { // OffsetFetch v8+ answers per group
		for _, t := range g.Topics {
			for _, pt := range t.Partitions {
				add(t.Topic, pt.Partition, pt.Offset, pt.Metadata)
			}
		}
	}
	p.mu.Lock()
	p.mu.fetched = got
	p.mu.Unlock()
	return nil
}

// adjustOffsets runs on every assignment before fetching starts: each
// partition resumes from its table's txn + 1, else the group's offset, else
// the reset policy; an operator's reset below the txn is honoured as a
// replay.
func (p *Processor) adjustOffsets(ctx context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	positions := make(map[string]map[merge.TopicPartition]int64) // per table path
	for topic, parts := range offsets {
		t, err := p.tableFor(ctx, topic)
		if err != nil {
			if errors.Is(err, ErrRoute) || errors.Is(err, ErrOptions) {
				// No table can be opened for it as configured; waiting
				// will not change that.
				p.refuseTopic(topic, parts, err)
				continue
			}
			// A storage outage: fail this session; kgo rejoins and we
			// try again rather than start from a guess.
			return nil, err
		}
		pos, ok := positions[t.path]
		if !ok {
			if pos, err = t.sink.Positions(ctx); err != nil {
				return nil, err
			}
			positions[t.path] = pos
		}
		p.mu.Lock()
		for part := range parts {
			tp := merge.TopicPartition{Topic: topic, Partition: part}
			txn, hasTxn := pos[tp]
			var committed *committedOffset
			if c, ok := p.mu.fetched[tp]; ok {
				committed = &c
			}
			next, why := startOffset(txn, hasTxn, committed)
			st := &partition{tp: tp, table: t, applied: -1, version: t.sink.Version(), groupNext: -1}
			if committed != nil {
				st.groupNext = committed.Offset
			}
			if next >= 0 {
				parts[part] = kgo.NewOffset().At(next).WithEpoch(-1)
				st.applied = next - 1
			}
			p.mu.parts[tp] = st
			if hasTxn {
				p.m.deltaOffset.WithLabelValues(partLabels(tp)...).Set(float64(txn))
			}
			log := p.log.Info
			if why == startReplay || why == startAheadOfDelta {
				log = p.log.Warn
			}
			log("partition assigned", "table", t.path, "topic", topic, "partition", part,
				"start", next, "reason", string(why), "txn", txnAttr(txn, hasTxn), "group_offset", committedAttr(committed))
		}
		failed := t.failed != nil
		p.mu.recommit = true
		p.mu.Unlock()
		if failed {
			// A stopped table stays stopped for partitions coming back.
			p.client.PauseFetchPartitions(map[string][]int32{topic: keys(parts)})
		}
	}
	return offsets, nil
}

func txnAttr(txn int64, ok bool) any {
	if !ok {
		return "none"
	}
	return txn
}

func committedAttr(c *committedOffset) any {
	if c == nil {
		return "none"
	}
	return c.Offset
}

func keys[M ~map[int32]V, V any](m M) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// refuseTopic pauses partitions whose topic cannot be routed to a table and
// reports them in readiness.
func (p *Processor) refuseTopic(topic string, parts map[int32]kgo.Offset, err error) {
	p.log.Error("cannot route topic; its partitions stay paused", "topic", topic, "err", err)
	p.mu.Lock()
	for part := range parts {
		p.mu.routeErr[merge.TopicPartition{Topic: topic, Partition: part}] = err
	}
	p.mu.Unlock()
	p.client.PauseFetchPartitions(map[string][]int32{topic: keys(parts)})
}

func (p *Processor) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	// Registered so that assignment is gated against polls
	// (BlockRebalanceOnPoll); the start offsets are set by adjustOffsets.
	p.log.Debug("partitions assigned", "partitions", assigned)
}

// onRevoked abandons the pending (unapplied) work of revoked or lost
// partitions. Applied work was committed to Delta and the group before the
// poll loop allowed this rebalance; the pending rest is re-read by the new
// owner from the table's txn, so dropping it loses nothing and keeps the
// rebalance short.
func (p *Processor) onRevoked(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
	if len(revoked) == 0 {
		return
	}
	gone := make(map[merge.TopicPartition]bool)
	for topic, parts := range revoked {
		for _, part := range parts {
			gone[merge.TopicPartition{Topic: topic, Partition: part}] = true
		}
	}
	resume := make(map[string][]int32)
	defer func() {
		if len(resume) > 0 { // after mu: no client call under our lock
			p.client.ResumeFetchPartitions(resume)
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.mu.tables {
		p.mu.buffered -= t.pend.drop(gone)
	}
	p.mu.held = slices.DeleteFunc(p.mu.held, func(r *kgo.Record) bool { return gone[merge.TopicPartition{Topic: r.Topic, Partition: r.Partition}] })
	for tp := range gone {
		if p.mu.heldParts[tp] {
			// Paused only while it held records; a new owner (or this
			// one, re-assigned) starts from the txn.
			resume[tp.Topic] = append(resume[tp.Topic], tp.Partition)
			delete(p.mu.heldParts, tp)
		}
	}
	for tp := range gone {
		delete(p.mu.parts, tp)
		delete(p.mu.routeErr, tp)
		p.m.deltaOffset.DeleteLabelValues(partLabels(tp)...)
		p.m.groupOffset.DeleteLabelValues(partLabels(tp)...)
		p.m.highWatermark.DeleteLabelValues(partLabels(tp)...)
	}
	p.m.bufferedBytes.Set(float64(p.mu.buffered))
	p.log.Info("partitions revoked; pending work abandoned", "partitions", revoked)
}

// tableFor returns the table a topic routes to, opening its sink on first
// use.
func (p *Processor) tableFor(ctx context.Context, topic string) (*table, error) {
	src, err := p.router.Source(topic)
	if err != nil {
		return nil, err
	}
	path := src.Path
	p.mu.Lock()
	t := p.mu.tables[path]
	p.mu.Unlock()
	if t != nil {
		return t, nil
	}
	p.openMu.Lock()
	defer p.openMu.Unlock()
	p.mu.Lock()
	t = p.mu.tables[path]
	p.mu.Unlock()
	if t != nil {
		return t, nil
	}
	so, pol, err := p.tableSettings(src)
	if err != nil {
		return nil, err
	}
	store, err := p.opts.OpenStore(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("opening store of table %s: %w", path, err)
	}
	so.Store = store
	so.TableName = path
	if so.Logger == nil {
		so.Logger = p.log
	}
	sink, err := merge.Open(ctx, so)
	if err != nil {
		return nil, err
	}
	t = &table{path: path, sink: sink, policy: pol}
	p.mu.Lock()
	p.mu.tables[path] = t
	p.mu.Unlock()
	p.log.Info("table opened", "table", path, "topic", src.Topic, "delete_mode", so.DeleteMode,
		"merge_mode", so.Mode, "bad_input", string(pol))
	return t, nil
}

// tableSettings returns the sink options and bad-input policy of the table
// src routes to: PerTable's, else the Sink template; the policy is
// PerTable's, else TablePolicies', else BadInput. A policy New could not
// check is refused here with ErrOptions.
func (p *Processor) tableSettings(src TableSource) (merge.Options, Policy, error) {
	so, pol := p.opts.Sink, Policy("")
	if p.opts.PerTable != nil {
		ts := p.opts.PerTable(src)
		so, pol = ts.Sink, ts.BadInput
	}
	if pol == "" {
		pol = p.opts.BadInput
		if tp, ok := p.opts.TablePolicies[src.Path]; ok {
			pol = tp
		}
	}
	switch {
	case pol != PolicyFail && pol != PolicyDeadLetter:
		return so, pol, fmt.Errorf("%w: table %s: unknown bad-input policy %q", ErrOptions, src.Path, pol)
	case pol == PolicyDeadLetter && p.opts.DeadLetterTopic == "":
		return so, pol, fmt.Errorf("%w: table %s: dead letter topic must be set for its dead-letter policy", ErrOptions, src.Path)
	case so.DeleteMode != "" && so.DeleteMode != merge.DeleteHard && so.DeleteMode != merge.DeleteSoft:
		return so, pol, fmt.Errorf("%w: table %s: unknown delete mode %q", ErrOptions, src.Path, so.DeleteMode)
	case so.Mode != "" && so.Mode != merge.ModeAuto && so.Mode != merge.ModeDV && so.Mode != merge.ModeCoW:
		return so, pol, fmt.Errorf("%w: table %s: unknown merge mode %q", ErrOptions, src.Path, so.Mode)
	}
	return so, pol, nil
}

// decoded is one polled record after decoding.
type decoded struct {
	change codecs.Change
	err    error
}

// errGiveWay ends the decoding of a poll when a rebalance is waiting: the
// records not decoded yet are held and retried after it.
var errGiveWay = errors.New("processor: decoding gave way to a rebalance")

// ingest decodes and routes the held records and one poll's records into
// pending batches.
func (p *Processor) ingest(ctx context.Context, fs kgo.Fetches) error {
	var fatal error
	fs.EachError(func(topic string, part int32, err error) {
		switch {
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		case errors.Is(err, kgo.ErrClientClosed):
			fatal = ErrClosed
		case accessError(err):
			fatal = fmt.Errorf("%w: %s/%d: %w", ErrKafkaAccess, topic, part, err)
		default:
			p.log.Warn("fetch error", "topic", topic, "partition", part, "err", err)
		}
	})
	if fatal != nil {
		return fatal
	}
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		if fp.Topic != "" && fp.HighWatermark >= 0 { // "": a poll-level error, no partition
			p.m.highWatermark.WithLabelValues(partLabels(merge.TopicPartition{Topic: fp.Topic, Partition: fp.Partition})...).Set(float64(fp.HighWatermark))
		}
	})
	p.mu.Lock()
	// Held records precede anything polled of their partitions, which stay
	// paused until they are decoded.
	recs := append(p.mu.held, fs.Records()...)
	p.mu.held = nil
	p.mu.Unlock()
	start := p.now()
	out, err := p.decodeAll(ctx, recs)
	if err != nil {
		return err
	}
	if len(recs) > 0 {
		p.log.Debug("polled", "records", len(recs), "decode", p.now().Sub(start))
	}
	var held []*kgo.Record
	for i, r := range recs {
		if errors.Is(out[i].err, errGiveWay) {
			held = append(held, r)
			continue
		}
		if err := p.route(ctx, r, out[i]); err != nil {
			return err
		}
	}
	p.hold(held)
	return nil
}

// hold keeps records whose decoding gave way to a rebalance for the next
// loop turn, pausing their partitions meanwhile (so memory stays bounded
// and nothing polled later overtakes them), and resumes the partitions whose
// held records are all decoded now.
func (p *Processor) hold(held []*kgo.Record) {
	pause := make(map[string][]int32)
	resume := make(map[string][]int32)
	defer func() { // after mu: no client call under our lock
		if len(pause) > 0 {
			p.client.PauseFetchPartitions(pause)
			p.log.Info("registry unavailable and a rebalance waiting: decoding gave way; the records are retried after it",
				"records", len(held), "partitions", pause)
		}
		if len(resume) > 0 {
			p.client.ResumeFetchPartitions(resume)
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.held = held
	now := make(map[merge.TopicPartition]bool)
	for _, r := range held {
		tp := merge.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if !now[tp] && !p.mu.heldParts[tp] {
			pause[tp.Topic] = append(pause[tp.Topic], tp.Partition)
		}
		now[tp] = true
	}
	for tp := range p.mu.heldParts {
		st := p.mu.parts[tp]
		if now[tp] || st == nil || st.table.failed != nil {
			continue // still held, not ours, or paused for its stopped table
		}
		resume[tp.Topic] = append(resume[tp.Topic], tp.Partition)
	}
	p.mu.heldParts = now
}

// decodeAll decodes records in parallel across partitions, in order within
// each. Registry outages are retried here until they end (or ctx does), so
// a record is never dead-lettered for the registry's sake; but when a
// rebalance waits, the records of a partition from its first one not
// decoded on are left with errGiveWay, so the loop can allow the rebalance.
func (p *Processor) decodeAll(ctx context.Context, recs []*kgo.Record) ([]decoded, error) {
	out := make([]decoded, len(recs))
	if len(recs) == 0 {
		return out, nil
	}
	dctx, giveWay := context.WithCancelCause(ctx)
	defer giveWay(nil)
	p.giveWay.Store(&giveWay)
	defer p.giveWay.Store(nil)
	if p.rebalanceWanted.Load() {
		giveWay(errGiveWay)
	}
	byPart := make(map[merge.TopicPartition][]int)
	for i, r := range recs {
		tp := merge.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		byPart[tp] = append(byPart[tp], i)
	}
	g, gctx := errgroup.WithContext(dctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, idx := range byPart {
		g.Go(func() error {
			for n, i := range idx {
				r := recs[i]
				c, err := p.decode(gctx, r)
				if errors.Is(err, errGiveWay) {
					for _, j := range idx[n:] {
						out[j] = decoded{err: errGiveWay}
					}
					return nil
				}
				if err != nil && gctx.Err() != nil {
					return err
				}
				out[i] = decoded{change: c, err: err}
			}
			return nil
		})
	}
	return out, g.Wait()
}

// decode decodes one record, retrying registry outages and (a few times)
// unknown schema ids. It returns the context's cause when ctx ends:
// errGiveWay when a rebalance waits.
func (p *Processor) decode(ctx context.Context, r *kgo.Record) (codecs.Change, error) {
	unknown := 0
	failures := int(p.registryFailures.Load()) // an outage spans loop turns
	for {
		c, err := p.opts.Decoder.DecodeRecord(ctx, r.Topic, r.Partition, r.Offset, r.Key, r.Value)
		switch {
		case err == nil:
			p.registryFailures.Store(0)
			return c, nil
		case ctx.Err() != nil:
			return c, context.Cause(ctx)
		case errors.Is(err, codecs.ErrRegistry):
			p.log.Warn("schema registry unavailable; retrying", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
			p.registryFailures.Store(int64(failures + 1))
			if err := sleep(ctx, backoff(failures)); err != nil {
				return c, context.Cause(ctx)
			}
			failures++
		case errors.Is(err, codecs.ErrUnknownSchema) && unknown < p.opts.UnknownSchemaRetries:
			if err := sleep(ctx, backoff(unknown)); err != nil {
				return c, context.Cause(ctx)
			}
			unknown++
		default:
			return c, err
		}
	}
}

// route adds one decoded record to its table's batch, or applies the
// table's bad-input policy.
func (p *Processor) route(ctx context.Context, r *kgo.Record, d decoded) error {
	tp := merge.TopicPartition{Topic: r.Topic, Partition: r.Partition}
	p.mu.Lock()
	st := p.mu.parts[tp]
	p.mu.Unlock()
	if st == nil || st.table.failed != nil || st.table.abandoned || r.Offset <= st.applied {
		// Not ours any more, a stopped table, one whose batch was given
		// up (nothing after it may apply), or already applied.
		return nil
	}
	t := st.table
	p.m.consumed.WithLabelValues(t.path).Inc()
	now := p.now()
	if d.err != nil {
		return p.badInput(ctx, t, r, d.err)
	}
	size := len(r.Key) + len(r.Value)
	p.mu.Lock()
	defer p.mu.Unlock()
	if d.change.Op == codecs.OpTombstone {
		p.m.tombstones.WithLabelValues(t.path).Inc()
		t.pend.note(now, tp, r.Offset)
		return nil
	}
	t.pend.add(now, merge.Record{TopicPartition: tp, Offset: r.Offset, Change: d.change}, size)
	p.mu.buffered += int64(size)
	p.m.bufferedBytes.Set(float64(p.mu.buffered))
	return nil
}

// badInput applies the table's policy to a record that cannot be decoded.
func (p *Processor) badInput(ctx context.Context, t *table, r *kgo.Record, cause error) error {
	tp := merge.TopicPartition{Topic: r.Topic, Partition: r.Partition}
	reason := badInputReason(cause)
	p.m.badInput.WithLabelValues(t.path, reason, string(t.policy)).Inc()
	if t.policy == PolicyDeadLetter {
		if err := p.produceDeadLetter(ctx, r, cause); err != nil {
			return err
		}
		p.m.deadLettered.WithLabelValues(t.path, reason).Inc()
		p.log.Warn("record dead-lettered", "table", t.path, "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "reason", reason, "err", cause)
		p.mu.Lock()
		t.pend.note(p.now(), tp, r.Offset)
		p.mu.Unlock()
		return nil
	}
	p.stopTable(t, &TableError{Table: t.path, TopicPartition: tp, Offset: r.Offset, Err: cause})
	return nil
}

// stopTable stops a table: its partitions stop fetching and its offsets stay
// where they are. What is pending before the failing record is still
// flushed.
func (p *Processor) stopTable(t *table, te *TableError) {
	p.mu.Lock()
	if t.failed != nil {
		p.mu.Unlock()
		return
	}
	t.failed = te
	pause := make(map[string][]int32)
	for tp, st := range p.mu.parts {
		if st.table == t {
			pause[tp.Topic] = append(pause[tp.Topic], tp.Partition)
		}
	}
	p.mu.Unlock()
	p.client.PauseFetchPartitions(pause)
	p.m.tableFailed.WithLabelValues(t.path).Set(1)
	p.log.Error("table stopped; fix the cause and restart", "table", t.path, "topic", te.Topic, "partition", te.Partition, "offset", te.Offset, "err", te.Err)
}
