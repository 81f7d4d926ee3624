package processor

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// BatchLimits bound every commit of a table. A batch is committed when any
// limit is reached, and no commit holds more than Records records or (unless
// one record alone is larger) more than Bytes bytes: a poll that brings more
// is split into several commits (ADR 0025).
type BatchLimits struct {
	// Records is the most change records one commit holds (default 10,000).
	Records int
	// Bytes is the most Kafka key+value bytes one commit holds (default 64 MiB).
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

// entryKind is what a consumed offset asks of its table.
type entryKind uint8

const (
	// entryChange carries a change to apply.
	entryChange entryKind = iota
	// entrySkip carries nothing to apply (a Kafka tombstone): only the txn
	// moves past it.
	entrySkip
	// entryDeadLetter is bad input that goes to the dead-letter topic
	// before the txn moves past it.
	entryDeadLetter
	// entryPoison is bad input under PolicyFail: the table stops at it.
	entryPoison
)

// entry is one consumed offset of one of a table's partitions.
type entry struct {
	kind   entryKind
	tp     merge.TopicPartition
	offset int64
	size   int64
	change codecs.Change // entryChange
	raw    *kgo.Record   // entryDeadLetter, entryPoison
	cause  error         // entryDeadLetter, entryPoison
}

// pending is the work a table has consumed but not committed, in arrival
// order (so each partition's entries are in offset order). It is guarded by
// Processor.mu.
type pending struct {
	entries []entry
	changes int   // entries of kind entryChange
	bytes   int64 // sum of sizes
	started time.Time
	// oldestCommit is the smallest source commit time in ms, for the
	// end-to-end latency metric (0: none).
	oldestCommit int64
}

func (p *pending) empty() bool { return len(p.entries) == 0 }

// add appends an entry.
func (p *pending) add(now time.Time, e entry) {
	if p.empty() {
		p.started = now
	}
	p.entries = append(p.entries, e)
	p.bytes += e.size
	if e.kind == entryChange {
		p.changes++
		if ms := e.change.CommitMillis; ms > 0 && (p.oldestCommit == 0 || ms < p.oldestCommit) {
			p.oldestCommit = ms
		}
	}
}

// full reports whether a whole batch is waiting: the table should stop
// fetching until its worker takes it.
func (p *pending) full(l BatchLimits) bool {
	return p.changes >= l.Records || p.bytes >= l.Bytes
}

// due reports whether the batch must be committed now.
func (p *pending) due(now time.Time, l BatchLimits) bool {
	if p.empty() {
		return false
	}
	return p.full(l) || now.Sub(p.started) >= l.Age || p.entries[0].kind == entryPoison
}

// deadline is when the batch becomes due by age (zero when empty).
func (p *pending) deadline(l BatchLimits) time.Time {
	if p.empty() {
		return time.Time{}
	}
	return p.started.Add(l.Age)
}

// work is one commit's share of a table's pending entries.
type work struct {
	entries []entry
	bytes   int64
	oldest  int64
	started time.Time // when the oldest of its entries arrived
	// poison, when set, is the entry the table stops at once entries are
	// committed.
	poison *entry
}

// batch is the merge batch of the work's changes; LastOffsets holds, per
// partition, the last offset the work covers, so the txn moves past
// tombstones and dead-lettered records too.
func (w *work) batch() merge.Batch {
	b := merge.Batch{LastOffsets: make(map[merge.TopicPartition]int64)}
	for i := range w.entries {
		e := &w.entries[i]
		b.LastOffsets[e.tp] = e.offset
		if e.kind == entryChange {
			b.Records = append(b.Records, merge.Record{TopicPartition: e.tp, Offset: e.offset, Change: e.change})
		}
	}
	return b
}

// take removes and returns the longest prefix of the entries that fits the
// limits (at least one entry, so a record larger than Bytes still goes
// alone), ending before a poison entry. Because it is a prefix in arrival
// order, each partition's share is a prefix of that partition's entries and
// its txn is the last offset taken (ADR 0025). The rest stays pending and,
// keeping its start time, is due again at once.
func (p *pending) take(l BatchLimits) work {
	w := work{started: p.started}
	n, changes := 0, 0
	for n < len(p.entries) {
		e := &p.entries[n]
		if e.kind == entryPoison {
			if n == 0 {
				pe := *e
				w.poison = &pe
			}
			break
		}
		if n > 0 && (e.kind == entryChange && changes == l.Records || w.bytes+e.size > l.Bytes) {
			break
		}
		if e.kind == entryChange {
			changes++
			if ms := e.change.CommitMillis; ms > 0 && (w.oldest == 0 || ms < w.oldest) {
				w.oldest = ms
			}
		}
		w.bytes += e.size
		n++
	}
	if w.poison != nil {
		p.clear()
		return w
	}
	w.entries = p.entries[:n:n]
	rest := p.entries[n:]
	p.entries = rest
	p.changes -= changes
	p.bytes -= w.bytes
	if p.empty() {
		*p = pending{}
	}
	return w
}

// requeue puts back work that was not committed (its apply gave way to a
// rebalance), before everything consumed since, without the entries of the
// partitions in gone.
func (p *pending) requeue(w work, gone func(merge.TopicPartition) bool) {
	var back []entry
	for _, e := range w.entries {
		if !gone(e.tp) {
			back = append(back, e)
		}
	}
	if len(back) == 0 {
		return
	}
	rest := p.entries
	*p = pending{}
	for _, e := range append(back, rest...) {
		p.add(w.started, e)
	}
}

// drop forgets the entries of the partitions in gone (revoked or lost):
// their new owner re-reads them from the table's txn. It returns the bytes
// freed.
func (p *pending) drop(gone func(merge.TopicPartition) bool) int64 {
	before := p.bytes
	kept := p.entries[:0]
	var keptBytes int64
	changes := 0
	for _, e := range p.entries {
		if !gone(e.tp) {
			kept = append(kept, e)
			keptBytes += e.size
			if e.kind == entryChange {
				changes++
			}
		}
	}
	clear(p.entries[len(kept):])
	p.entries, p.bytes, p.changes = kept, keptBytes, changes
	if p.empty() {
		*p = pending{}
	}
	return before - p.bytes
}

// clear forgets everything; it returns the bytes freed.
func (p *pending) clear() int64 {
	b := p.bytes
	*p = pending{}
	return b
}
