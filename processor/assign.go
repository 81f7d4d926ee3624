package processor

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// clientOptions builds the franz-go consumer: a group with manual commits,
// rebalances only between polls, and partitions that start paused until
// their table has found where they resume (ADR 0020, 0026).
func (p *Processor) clientOptions() []kgo.Opt {
	o := p.opts
	reset := kgo.NewOffset().AtStart()
	if o.ResetOffset == "latest" {
		reset = kgo.NewOffset().AtEnd()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(o.Brokers...),
		kgo.ClientID(o.ClientID),
		kgo.WithLogger(kafkaLogger{p.log}),
		kgo.WithHooks(p.kafka),
		kgo.ConsumerGroup(o.Group),
		kgo.ConsumeTopics(o.Topics...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(reset),
		kgo.FetchMaxBytes(o.FetchMaxBytes),
		kgo.FetchMaxWait(o.FetchMaxWait),
		kgo.FetchMinBytes(o.FetchMinBytes),
		kgo.OnOffsetsFetched(p.onOffsetsFetched),
		kgo.AdjustFetchOffsetsFn(p.onAssigned),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { p.onRevoked(m, true) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { p.onRevoked(m, false) }),
	}
	if o.GroupProtocol == GroupConsumer {
		// KIP-848 needs the sticky or range balancer named first; the
		// broker then assigns with its uniform assignor.
		opts = append(opts, kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()))
	} else {
		opts = append(opts, kgo.Balancers(kgo.CooperativeStickyBalancer()))
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
// which cdctable.StartOffset needs to tell an operator's reset from our own commit.
func (p *Processor) onOffsetsFetched(_ context.Context, _ *kgo.Client, resp *kmsg.OffsetFetchResponse) error {
	got := make(map[cdctable.TopicPartition]cdctable.CommittedOffset)
	add := func(topic string, part int32, off int64, meta *string) {
		if off < 0 {
			return
		}
		c := cdctable.CommittedOffset{Offset: off}
		if meta != nil {
			c.Meta = *meta
		}
		got[cdctable.TopicPartition{Topic: topic, Partition: part}] = c
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

// onAssigned runs on every assignment, before fetching starts. It does no
// I/O, so no table can hold up the group: each partition joins its table
// (opened by the table's worker if new) and stays paused until the worker
// has read the table's txn and the loop has set the start offset. The
// offsets returned are franz-go's own (the group's, or the reset policy),
// used only where the table has no say.
func (p *Processor) onAssigned(ctx context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	select {
	case <-p.built: // see Processor.built: p.client may not be set yet
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	pause := make(map[string][]int32)
	var kick []*table
	p.mu.Lock()
	for topic, parts := range offsets {
		for part := range parts {
			pause[topic] = append(pause[topic], part)
		}
		src, err := p.router.Source(topic)
		if err != nil {
			p.log.Error("cannot route topic to a table; its partitions stay paused", "topic", topic, "err", err)
			for part := range parts {
				p.mu.routeErr[cdctable.TopicPartition{Topic: topic, Partition: part}] = err
			}
			continue
		}
		t := p.tableLocked(src)
		for part := range parts {
			tp := cdctable.TopicPartition{Topic: topic, Partition: part}
			pt := &partition{tp: tp, table: t, start: -1, applied: -1, version: -1, txn: -1}
			if c, ok := p.mu.fetched[tp]; ok {
				pt.committed = &c
			}
			p.mu.parts[tp] = pt
			t.parts[tp] = pt
		}
		t.idleSince = time.Time{}
		kick = append(kick, t)
	}
	p.mu.Unlock()
	p.client.PauseFetchPartitions(pause)
	for _, t := range kick {
		t.kick()
	}
	return offsets, nil
}

// tableLocked returns the table src routes to, creating it and starting its
// worker on first use; mu must be held.
func (p *Processor) tableLocked(src route.TableSource) *table {
	if t := p.mu.tables[src.Path]; t != nil {
		return t
	}
	t := &table{path: src.Path, src: src, wake: make(chan struct{}, 1), done: make(chan struct{}),
		parts: make(map[cdctable.TopicPartition]*partition), pend: pending{arrays: new(recordArrays)}}
	ts, err := p.settingsOf(src)
	t.sinkOpts, t.policy, t.logPath, t.histPath, t.histOpts = ts.Sink, ts.BadInput, ts.ChangeLog, ts.History, ts.HistoryOptions
	t.histOnly = ts.HistoryOnly
	t.sinkOpts.TailFileSize = -1 // merge's off: only the maintainer compacts what absorbing leaves
	if p.maint != nil {
		// The maintainer checkpoints on its own cadence (ADR 0032).
		t.sinkOpts.TableOptions = append(slices.Clip(t.sinkOpts.TableOptions), deltalog.DisableCheckpoints())
		if tail := p.opts.Maintenance.TailFileSize; tail > 0 {
			t.sinkOpts.TailFileSize = tail
		}
	}
	if err != nil {
		t.failed = &TableError{Table: src.Path, Offset: -1, Phase: "opening", Err: err, Hint: "fix the table's settings in the configuration; then restart"}
		p.m.tableFailed.WithLabelValues(t.path).Set(1)
		p.log.Error("table stopped", "table", t.path, "err", t.failed)
	} else {
		// Exported from the start, so every table has a series (0 until
		// it stops), not only the stopped ones.
		p.m.tableFailed.WithLabelValues(t.path).Set(0)
	}
	p.mu.tables[src.Path] = t
	p.m.setTableState(t.path, t.state(p.retry.budget, p.now()))
	p.workers.Go(func() { p.runTable(t) })
	return t
}

// onRevoked takes revoked (wait) or lost partitions away from their tables:
// their pending records are dropped (the new owner re-reads them from the
// table's txn). An apply in progress that includes one of them is given
// RevokeTimeout to finish when revoked, none when lost, and is then
// cancelled; its table applies the rest of that batch again.
func (p *Processor) onRevoked(revoked map[string][]int32, wait bool) {
	if len(revoked) == 0 {
		return
	}
	<-p.built // see Processor.built: p.commit may not be set yet
	gone := make(map[cdctable.TopicPartition]bool)
	for topic, parts := range revoked {
		for _, part := range parts {
			gone[cdctable.TopicPartition{Topic: topic, Partition: part}] = true
		}
	}
	var flights []*flight
	now := p.now()
	p.mu.Lock()
	touched := map[*table]bool{}
	for tp := range gone {
		if pt := p.mu.parts[tp]; pt != nil {
			delete(pt.table.parts, tp)
			touched[pt.table] = true
		}
		delete(p.mu.parts, tp)
		delete(p.mu.routeErr, tp)
		delete(p.mu.held, tp)
		p.commit.forgetLocked(tp)
		p.m.forgetPartition(tp)
	}
	for t := range touched {
		p.mu.buffered -= t.pend.drop(func(tp cdctable.TopicPartition) bool { return gone[tp] })
		if len(t.parts) == 0 {
			t.idleSince = now
		}
		if f := t.flight; f != nil {
			for tp := range f.parts {
				if gone[tp] {
					flights = append(flights, f)
					break
				}
			}
		}
		t.kick()
	}
	p.m.bufferedBytes.Set(float64(p.mu.buffered))
	p.mu.Unlock()

	deadline := time.NewTimer(p.opts.RevokeTimeout)
	defer deadline.Stop()
	for _, f := range flights {
		if wait {
			select {
			case <-f.done:
				continue
			case <-deadline.C:
			}
		}
		f.cancel(errRevoked)
		<-f.done
	}
	p.log.Info("partitions revoked; pending work dropped", "partitions", partitionsString(revoked), "lost", !wait,
		"applies_waited_for", len(flights), "took", p.now().Sub(now).Round(time.Millisecond))
}

// setStarts sets the start offsets that tables found, before fetching of
// those partitions begins. The loop calls it between polls, while no
// rebalance can run (franz-go's advice for SetOffsets).
func (p *Processor) setStarts() {
	set := make(map[string]map[int32]kgo.EpochOffset)
	p.mu.Lock()
	for _, pt := range p.mu.starts {
		if p.mu.parts[pt.tp] != pt || pt.table.failed != nil {
			continue
		}
		pt.started = true
		if pt.start < 0 {
			continue // franz-go's offset (the group's or the reset policy) stands
		}
		if set[pt.tp.Topic] == nil {
			set[pt.tp.Topic] = make(map[int32]kgo.EpochOffset)
		}
		set[pt.tp.Topic][pt.tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: pt.start}
		// Lag tools see the table's position at once.
		p.commit.markLocked(pt.tp, groupCommit{Next: pt.start, Version: pt.version})
	}
	p.mu.starts = nil
	p.mu.Unlock()
	if len(set) > 0 {
		p.client.SetOffsets(set)
		p.commit.kick()
	}
}

// reconcilePauses pauses the partitions that must not fetch and resumes the
// others: partitions waiting for their start offset, of a stopped table,
// held for the registry, unroutable, or of a backpressured table. A table
// is backpressured once two whole batches wait beyond the one it applies
// (it is slow or retrying) and until less than one does: it holds at most
// three batches, never holds up another, and a table that keeps up never
// pauses (a resumed partition waits for the broker's next fetch, and what
// was fetched for it meanwhile is fetched again).
func (p *Processor) reconcilePauses() {
	want := make(map[cdctable.TopicPartition]bool)
	p.mu.Lock()
	over := p.mu.buffered > p.opts.MaxBufferedBytes
	for _, t := range p.mu.tables {
		switch {
		case t.pend.holds(2, p.opts.Batch):
			t.backpressured = true
		case !t.pend.full(p.opts.Batch):
			t.backpressured = false
		}
	}
	ours := make(map[cdctable.TopicPartition]bool, len(p.mu.parts))
	for tp, pt := range p.mu.parts {
		ours[tp] = true
		t := pt.table
		if !pt.started || t.failed != nil || p.mu.held[tp] != nil || t.backpressured || over && !t.pend.empty() {
			want[tp] = true
		}
	}
	for tp := range p.mu.routeErr {
		ours[tp], want[tp] = true, true
	}
	p.mu.Unlock()
	cur := make(map[cdctable.TopicPartition]bool)
	for topic, parts := range p.client.PauseFetchPartitions(nil) {
		for _, part := range parts {
			cur[cdctable.TopicPartition{Topic: topic, Partition: part}] = true
		}
	}
	pause, resume := make(map[string][]int32), make(map[string][]int32)
	for tp := range want {
		if !cur[tp] {
			pause[tp.Topic] = append(pause[tp.Topic], tp.Partition)
		}
	}
	for tp := range cur {
		if ours[tp] && !want[tp] {
			resume[tp.Topic] = append(resume[tp.Topic], tp.Partition)
		}
	}
	if len(pause) > 0 {
		p.client.PauseFetchPartitions(pause)
	}
	if len(resume) > 0 {
		p.client.ResumeFetchPartitions(resume)
	}
	p.m.pausedPartitions.Set(float64(len(want)))
}

// partitionsString renders topics' partitions for a log line, sorted, as
// "orders[0,2] users[1]" (a Go map would print as map[...] in random order).
func partitionsString(parts map[string][]int32) string {
	topics := slices.Sorted(maps.Keys(parts))
	var b strings.Builder
	for i, t := range topics {
		ps := slices.Clone(parts[t])
		slices.Sort(ps)
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
		b.WriteByte('[')
		for j, p := range ps {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(int(p)))
		}
		b.WriteByte(']')
	}
	return b.String()
}
