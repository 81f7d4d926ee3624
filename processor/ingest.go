package processor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// heldRecords are a partition's records whose decoding waits for the
// schema registry (an outage, or a schema id registered moments after its
// record). The partition is paused meanwhile; only its table is affected.
type heldRecords struct {
	table    *table
	recs     []*kgo.Record
	attempts int
	retryAt  time.Time
	// unknown counts the retries of recs[0] for an unknown schema id.
	unknown int
	err     error
}

// decodeTimeout bounds the decoding of one poll.
const decodeTimeout = 5 * time.Second

// decoded is one record after decoding.
type decoded struct {
	change codecs.Change
	err    error
}

// ingest decodes one poll's records (after the held records due for a
// retry) and routes them to their tables' pending work. It returns only
// errors that end Run.
func (p *Processor) ingest(ctx context.Context, fs kgo.Fetches) error {
	if err := p.fetchErrors(fs); err != nil {
		return err
	}
	now := p.now()
	var order []cdctable.TopicPartition
	byPart := make(map[cdctable.TopicPartition][]*kgo.Record)
	prev := make(map[cdctable.TopicPartition]*heldRecords)
	p.mu.Lock()
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		if fp.Topic == "" || fp.HighWatermark < 0 { // "": a poll-level error, no partition
			return
		}
		tp := cdctable.TopicPartition{Topic: fp.Topic, Partition: fp.Partition}
		p.m.highWatermark.WithLabelValues(partLabels(tp)...).Set(float64(fp.HighWatermark))
		if pt := p.mu.parts[tp]; pt != nil {
			pt.hw = fp.HighWatermark
		}
	})
	for tp, h := range p.mu.held {
		if !now.Before(h.retryAt) {
			order = append(order, tp)
			byPart[tp] = h.recs
			prev[tp] = h
			delete(p.mu.held, tp)
		}
	}
	if p.opts.Batch.Drained {
		markDrained(fs, p.mu.parts)
	}
	fs.EachRecord(func(r *kgo.Record) {
		tp := cdctable.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if h := p.mu.held[tp]; h != nil {
			h.recs = append(h.recs, r) // polled before its pause took effect
			return
		}
		if _, ok := byPart[tp]; !ok {
			order = append(order, tp)
		}
		byPart[tp] = append(byPart[tp], r)
	})
	p.mu.Unlock()
	if len(order) == 0 {
		return nil
	}
	// A registry that retries, or does not answer, must not hold the loop:
	// what it cannot decode in time is held and retried.
	dctx, cancel := context.WithTimeout(ctx, decodeTimeout)
	out, holdAt, holdErr := p.decodeAll(dctx, byPart, prev)
	cancel()
	p.hold(now, byPart, prev, holdAt, holdErr)
	for _, tp := range order {
		recs := byPart[tp]
		for i := range holdAt[tp] {
			p.route(now, recs[i], out[tp][i])
		}
	}
	p.decoded.done() // route copied what it keeps
	return nil
}

// decodeBuf is the poll loop's array of decoded records, reused from poll
// to poll: route copies each change into its table's pending records, so
// the decoder's output lives for one loop turn, and making it per poll was
// a tenth of a catch-up's allocations. Only the loop uses it.
type decodeBuf struct {
	recs []decoded
	used int
}

// maxDecodeBuf is the most records decodeBuf keeps between polls (about
// 70 MB); a larger poll's array is dropped after it.
const maxDecodeBuf = 1 << 18

// get returns n zeroed decoded records.
func (b *decodeBuf) get(n int) []decoded {
	if cap(b.recs) < n {
		b.recs = make([]decoded, n)
	}
	b.used = n
	return b.recs[:n]
}

// done zeroes what the last get handed out (no change outlives its loop
// turn through the array) and drops an array larger than maxDecodeBuf.
func (b *decodeBuf) done() {
	clear(b.recs[:b.used])
	b.used = 0
	if cap(b.recs) > maxDecodeBuf {
		b.recs = nil
	}
}

// markDrained records, for each partition the poll brought records of,
// whether they stop short of its high watermark: whether the broker has
// more for its table. mu must be held.
func markDrained(fs kgo.Fetches, parts map[cdctable.TopicPartition]*partition) {
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		if len(fp.Records) == 0 {
			return
		}
		if pt := parts[cdctable.TopicPartition{Topic: fp.Topic, Partition: fp.Partition}]; pt != nil {
			pt.behind = fp.Records[len(fp.Records)-1].Offset+1 < fp.HighWatermark
		}
	})
}

// fetchErrors handles the errors of a poll: it returns those that end Run
// and stops the tables of topics Kafka refuses to let this client read.
func (p *Processor) fetchErrors(fs kgo.Fetches) error {
	var fatal error
	fs.EachError(func(topic string, part int32, err error) {
		switch {
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		case errors.Is(err, kgo.ErrClientClosed):
			fatal = ErrClosed
		case errors.Is(err, kerr.TopicAuthorizationFailed):
			tp := cdctable.TopicPartition{Topic: topic, Partition: part}
			p.mu.Lock()
			pt := p.mu.parts[tp]
			p.mu.Unlock()
			if pt != nil {
				p.stopTable(pt.table, &TableError{Table: pt.table.path, TopicPartition: tp, Offset: -1, Phase: "fetching",
					Err: err, Hint: hint(err, "fetching")})
			}
		case accessError(err):
			fatal = fmt.Errorf("%w: %s/%d: %w", ErrKafkaAccess, topic, part, err)
		default:
			p.kafka.fetchError(topic, part, err)
		}
	})
	return fatal
}

// decodeAll decodes each partition's records in order, partitions in
// parallel. It never waits: at the first record whose decoding needs the
// registry to recover, the rest of that partition is held (holdAt[tp] is
// the index of the first held record, len(recs) when none is; holdErr[tp]
// its error).
func (p *Processor) decodeAll(ctx context.Context, byPart map[cdctable.TopicPartition][]*kgo.Record, prev map[cdctable.TopicPartition]*heldRecords) (out map[cdctable.TopicPartition][]decoded, holdAt map[cdctable.TopicPartition]int, holdErr map[cdctable.TopicPartition]error) {
	type result struct {
		tp     cdctable.TopicPartition
		out    []decoded
		holdAt int
		err    error
	}
	total := 0
	for _, recs := range byPart {
		total += len(recs)
	}
	buf := p.decoded.get(total)
	results := make([]result, 0, len(byPart))
	for tp, recs := range byPart {
		n := len(recs)
		results = append(results, result{tp: tp, out: buf[:n:n], holdAt: n})
		buf = buf[n:]
	}
	// No limit on the goroutines: a partition may wait on a registry that
	// does not answer, and with GOMAXPROCS slots the frozen lookups of one
	// table took them all, holding every other table's records (cached
	// schemas too) until the deadline. The CPU bounds the decoding anyway.
	var g errgroup.Group
	for i := range results {
		res := &results[i]
		g.Go(func() error {
			h := prev[res.tp]
			for j, r := range byPart[res.tp] {
				c, err := p.opts.Decoder.DecodeRecord(ctx, r.Topic, r.Partition, r.Offset, r.Key, r.Value)
				retryUnknown := j > 0 || h == nil || h.unknown < p.opts.UnknownSchemaRetries
				if errors.Is(err, codecs.ErrRegistry) || errors.Is(err, codecs.ErrUnknownSchema) && retryUnknown || ctx.Err() != nil {
					res.holdAt, res.err = j, err
					break
				}
				res.out[j] = decoded{change: c, err: err}
			}
			return nil
		})
	}
	_ = g.Wait() // the decoders report errors per record
	out = make(map[cdctable.TopicPartition][]decoded, len(results))
	holdAt = make(map[cdctable.TopicPartition]int, len(results))
	holdErr = make(map[cdctable.TopicPartition]error)
	for _, r := range results {
		out[r.tp], holdAt[r.tp] = r.out, r.holdAt
		if r.err != nil {
			holdErr[r.tp] = r.err
		}
	}
	return out, holdAt, holdErr
}

// hold keeps the records decodeAll could not decode for a later loop turn,
// with the registry's backoff, and updates each table's registry state:
// failing while any of its partitions holds records.
func (p *Processor) hold(now time.Time, byPart map[cdctable.TopicPartition][]*kgo.Record, prev map[cdctable.TopicPartition]*heldRecords, holdAt map[cdctable.TopicPartition]int, holdErr map[cdctable.TopicPartition]error) {
	type note struct {
		err      error
		attempts int
		parts    int
		retryIn  time.Duration
	}
	notes := make(map[*table]*note)
	p.mu.Lock()
	touched := make(map[*table]bool)
	for tp, recs := range byPart {
		pt := p.mu.parts[tp]
		if pt == nil {
			continue // revoked meanwhile
		}
		touched[pt.table] = true
		i := holdAt[tp]
		if i == len(recs) {
			continue
		}
		h := &heldRecords{table: pt.table, recs: slices.Clone(recs[i:])}
		if old := prev[tp]; old != nil {
			h.attempts, h.unknown = old.attempts, old.unknown
			if i > 0 {
				h.unknown = 0 // a new record is first now
			}
		}
		h.err = holdErr[tp]
		if errors.Is(h.err, codecs.ErrUnknownSchema) {
			h.unknown++
		}
		d := p.retry.Delay(h.attempts)
		h.attempts++
		h.retryAt = now.Add(d)
		p.mu.held[tp] = h
		n := notes[pt.table]
		if n == nil {
			n = &note{}
			notes[pt.table] = n
		}
		n.err, n.attempts, n.retryIn = h.err, max(n.attempts, h.attempts), d
		n.parts++
	}
	for t := range touched {
		failing := false
		for tp := range t.parts {
			if p.mu.held[tp] != nil {
				failing = true
				break
			}
		}
		switch {
		case failing && !t.registry.failing():
			t.registry.since = now
			fallthrough
		case failing:
			if n := notes[t]; n != nil {
				t.registry.attempts, t.registry.last, t.registry.what = n.attempts, n.err, "decoding"
			}
		default:
			t.registry = retryState{}
		}
		p.m.setTableState(t.path, t.state(p.retry.budget, now))
	}
	p.mu.Unlock()
	for t, n := range notes {
		p.log.Warn("decoding waits for the schema registry; the table's partitions are paused and retried",
			"table", t.path, "partitions", n.parts, "attempt", n.attempts, "retry_in", n.retryIn.Round(time.Millisecond), "err", n.err)
	}
	if len(notes) > 0 {
		p.wake()
	}
}

// tableLevel reports decode errors that are not about one record: every
// later record of the table would fail the same way, so the table stops
// whatever its bad-input policy.
func tableLevel(err error) bool {
	return errors.Is(err, codecs.ErrRegistryRefused) || errors.Is(err, codecs.ErrSchemaChange) ||
		errors.Is(err, codecs.ErrUnsupportedSchema)
}

// route adds one decoded record to its table's pending work.
func (p *Processor) route(now time.Time, r *kgo.Record, d decoded) {
	tp := cdctable.TopicPartition{Topic: r.Topic, Partition: r.Partition}
	p.mu.Lock()
	pt := p.mu.parts[tp]
	if pt == nil || !pt.started || pt.table.failed != nil || r.Offset <= pt.applied {
		// Not ours any more, not started, a stopped table, or applied.
		p.mu.Unlock()
		return
	}
	t := pt.table
	e := entry{tp: tp, offset: r.Offset, size: int64(len(r.Key) + len(r.Value))}
	reason := ""
	switch {
	case d.err == nil && d.change.Op == codecs.OpTombstone, d.err != nil && r.Offset <= pt.txn:
		// A bad record at or below the txn is re-read by a replay: the
		// table got past it once (dead-lettered or skipped).
		e.kind = entrySkip
	case d.err == nil:
		e.kind, e.change = entryChange, d.change
	case t.policy == PolicyDeadLetter && !tableLevel(d.err):
		e.kind, e.raw, e.cause = entryDeadLetter, r, d.err
		reason = badInputReason(d.err)
	default:
		e.kind, e.raw, e.cause = entryPoison, r, d.err
		reason = badInputReason(d.err)
	}
	l := t.limits(p.opts.Batch)
	e.produced = r.Timestamp
	if ms := e.change.CommitMillis; ms > 0 {
		e.produced = earliest(e.produced, time.UnixMilli(ms))
	}
	first := t.pend.empty()
	produced := t.pend.produced
	t.pend.add(now, l, e)
	p.mu.buffered += e.size
	// The worker learns the batch's deadline from its first entry, and
	// again when it reaches MinRecords (its deadline moves from MaxDelay to
	// Age).
	drained := l.Drained && t.pend.count() >= l.MinRecords && t.drained() // only then does it count
	over := p.mu.buffered > p.opts.MaxBufferedBytes
	due := first || t.pend.count() == l.MinRecords || t.pend.due(now, l, drained) || over
	if due && !first && !t.slot.IsZero() && t.pend.produced.Equal(produced) && !t.pend.full(l) && !over {
		// The worker holds a commit-budget slot and sleeps until it or
		// max_delay: a record that moves neither (its batch's oldest, full,
		// memory) would only wake it to sleep again, once a poll for every
		// table waiting its turn, crowding the scheduler and mu.
		due = false
	}
	if t.consumed == nil {
		t.consumed, t.tombstones = p.m.consumed.WithLabelValues(t.path), p.m.tombstones.WithLabelValues(t.path)
		t.arrival = p.m.arrivalDelay.WithLabelValues(t.path)
	}
	consumed, tombstones, arrival := t.consumed, t.tombstones, t.arrival
	p.mu.Unlock()
	consumed.Inc()
	if first && !r.Timestamp.IsZero() {
		arrival.Observe(max(now.Sub(r.Timestamp), 0).Seconds())
	}
	switch {
	case e.kind == entrySkip:
		tombstones.Inc()
	case reason != "":
		p.m.badInput.WithLabelValues(t.path, reason, string(t.policy)).Inc()
		p.log.Warn("bad input", "table", t.path, "topic", r.Topic, "partition", r.Partition, "offset", r.Offset,
			"reason", reason, "policy", string(t.policy), "err", d.err)
	}
	if due {
		t.kick()
	}
}
