package processor

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// BatchLimits bound every commit of a table and set its commit budget
// (ADR 0030). A batch is committed at once when it reaches Records or Bytes,
// and no commit holds more than Records records or (unless one record alone
// is larger) more than Bytes bytes: a poll that brings more is split into
// several commits (ADR 0026). Below the caps, a batch of at least MinRecords
// entries commits once it is Age old, and a smaller one waits for more, up
// to MaxDelay: a busy table commits every Age, a trickling one every
// MaxDelay, and in between the interval follows the arrival rate
// (MinRecords / rate). A busy batch (it started when MinRecords or more
// had arrived over the last Age, or reached MinRecords within Age) commits
// at Age whatever its count: the end of a stream or of a backlog does not
// wait for MaxDelay. With Drained, a batch of MinRecords commits before Age
// once its table has read its partitions up to their high watermarks.
// CommitsPerSecond is shared by all tables; it may hold a batch past Age,
// never past MaxDelay. Fields left zero that have no zero meaning take
// DefaultBatchLimits; the zero CommitsPerSecond and Drained are off.
type BatchLimits struct {
	// Records is the most change records one commit holds.
	Records int
	// Bytes is the most Kafka key+value bytes one commit holds.
	Bytes int64
	// Age is how long the first record of a batch waits at least, unless
	// the batch fills.
	Age time.Duration
	// MinRecords is how many entries (changes, tombstones and bad input) a
	// batch waits for, up to MaxDelay, before it commits at Age (1: it
	// commits at Age). Left zero, the default but at most Records.
	MinRecords int
	// MaxDelay is the freshness bound: a batch is visible within it of its
	// oldest record's production (its source commit or Kafka timestamp,
	// at most a second before its arrival), whatever MinRecords and
	// CommitsPerSecond, as long as the table's recent commits took less
	// than half of MaxDelay - Age (lead.go). It is raised to Age if below.
	MaxDelay time.Duration
	// Drained commits a batch of at least MinRecords entries before Age
	// when the last fetch of each of the table's partitions reached its
	// high watermark: nothing more is there to wait for, so waiting only
	// costs freshness (ADR 0030, amended); a busy batch below MinRecords
	// too, once nothing has arrived for a quarter of Age (quiet): the tail
	// of a stream that stopped. False: off.
	Drained bool
	// CommitsPerSecond is the rate of commits shared by all tables (0:
	// unlimited). A batch due by Age and MinRecords waits for its
	// turn; commits forced by the caps, MaxDelay, the memory bound or
	// shutdown never wait but use up the budget.
	CommitsPerSecond float64
}

// withDefaults fills the fields left zero from DefaultBatchLimits, a field
// paired with a set one moving only as far as it requires, as the
// configuration's do: Records 50 waits for 50 records, not 100; Age 30s
// waits at most 30s, not 10s.
func (l BatchLimits) withDefaults() BatchLimits {
	d := DefaultBatchLimits()
	if l.Records <= 0 {
		l.Records = max(d.Records, l.MinRecords)
	}
	if l.Bytes <= 0 {
		l.Bytes = d.Bytes
	}
	if l.Age <= 0 {
		l.Age = d.Age
		if l.MaxDelay > 0 {
			l.Age = min(l.Age, l.MaxDelay)
		}
	}
	if l.MinRecords <= 0 {
		l.MinRecords = min(d.MinRecords, l.Records)
	}
	if l.MaxDelay <= 0 {
		l.MaxDelay = d.MaxDelay
	}
	l.MaxDelay = max(l.MaxDelay, l.Age)
	if l.CommitsPerSecond < 0 {
		l.CommitsPerSecond = 0
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

// entry is one consumed offset of one of a table's partitions, as route
// hands it to pending.
type entry struct {
	kind   entryKind
	tp     cdctable.TopicPartition
	offset int64
	size   int64
	// produced is when the record was produced: its Kafka timestamp, or
	// its change's source commit time when earlier (zero: unknown).
	produced time.Time
	change   codecs.Change // entryChange
	raw      *kgo.Record   // entryDeadLetter, entryPoison
	cause    error         // entryDeadLetter, entryPoison
}

// mark is a consumed offset with no change to apply (any kind but
// entryChange), placed among the changes: at changes arrived before it.
type mark struct {
	entry
	at int
}

// pending is the work a table has consumed but not committed, in arrival
// order (so each partition's share is in offset order). Changes are kept
// as the merge.Records a batch hands the engine, in arrays from arrays
// that committed batches hand back. It is guarded by Processor.mu.
type pending struct {
	recs []merge.Record
	// base is the whole array recs starts (nil with recs).
	base []merge.Record
	// arrays provides arrays for recs and batches, and takes back those
	// of committed batches (nil: made and dropped).
	arrays *recordArrays
	sizes  []int32 // wire size of each of recs
	marks  []mark
	bytes  int64 // sum of sizes, marks included
	// started is when the oldest entry arrived; zero when empty.
	started time.Time
	// produced is when the oldest entry was produced (entry.produced),
	// but at most BatchLimits.produceCredit before it arrived. MaxDelay
	// counts from it, so a batch is visible within MaxDelay of its
	// records' production, the connector's and fetch's latency included.
	produced time.Time
	// hint is how many changes the last batch took: a new batch's recs are
	// made that big at once, as growing 280-byte records by append copies
	// them several times over (a third of the catch-up's allocations).
	hint int
	// busy: the batch started when MinRecords or more entries had arrived
	// over the last Age, or reached MinRecords within Age of its start. It
	// is the rest of a busy stream, so it commits at Age whatever its
	// count: its last few records must not wait for MaxDelay. What is left
	// after a take keeps it.
	busy bool
	// arrivals counts the table's entries across batches, kept by clear.
	arrivals arrivals
}

// arrivals estimates how many entries arrived over the last Age: the count
// of the current window of Age and of the one before it, weighted by how
// much of it the last Age still covers (a sliding-window estimate).
type arrivals struct {
	start     time.Time // of the current window
	cur, prev int
	last      time.Time // the latest arrival
}

// roll moves the windows up to now.
func (a *arrivals) roll(now time.Time, age time.Duration) {
	switch d := now.Sub(a.start); {
	case d >= 0 && d < age:
	case d >= age && d < 2*age:
		a.prev, a.cur, a.start = a.cur, 0, a.start.Add(age)
	default:
		a.prev, a.cur, a.start = 0, 0, now
	}
}

// recent is the estimate of the entries that arrived over the Age before
// now.
func (a *arrivals) recent(now time.Time, age time.Duration) float64 {
	a.roll(now, age)
	if age <= 0 {
		return float64(a.cur)
	}
	return float64(a.prev)*(1-float64(now.Sub(a.start))/float64(age)) + float64(a.cur)
}

// quiet is how long nothing must arrive before a drained busy batch below
// MinRecords commits: a quarter of Age. A busy table receives MinRecords
// or more entries per Age, so while its stream flows a gap this long
// between fetches that bring it records does not occur (at the defaults, 250 ms
// against a mean gap of at most 10 ms): the batch is the tail of a stream
// that stopped, and waiting longer only delays it.
func (l BatchLimits) quiet() time.Duration { return l.Age / 4 }

// produceCredit bounds how much earlier than its arrival a record's age
// starts: a tenth of MaxDelay - Age, at most a second. The connector's and
// fetch's latency count, but a backlog's old records, or a clock far
// behind ours, do not make every batch due at once. With MaxDelay = Age
// (the old behaviour) there is none.
func (l BatchLimits) produceCredit() time.Duration {
	return max(0, min(time.Second, (l.MaxDelay-l.Age)/10))
}

// earliest is the earlier of two times, a zero one not counted.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

func (p *pending) empty() bool { return len(p.recs) == 0 && len(p.marks) == 0 }

// add appends an entry that arrived at now.
func (p *pending) add(now time.Time, l BatchLimits, e entry) {
	produced := now
	if !e.produced.IsZero() && e.produced.Before(now) {
		produced = e.produced
		if floor := now.Add(-l.produceCredit()); produced.Before(floor) {
			produced = floor
		}
	}
	if p.empty() {
		p.started, p.produced = now, produced
		p.busy = p.arrivals.recent(now, l.Age) >= float64(l.MinRecords)
	}
	p.arrivals.roll(now, l.Age)
	p.arrivals.cur++
	p.arrivals.last = now
	if produced.Before(p.produced) {
		p.produced = produced
	}
	p.bytes += e.size
	if !p.busy && p.count()+1 >= l.MinRecords && now.Sub(p.started) <= l.Age {
		p.busy = true
	}
	if e.kind != entryChange {
		p.marks = append(p.marks, mark{entry: e, at: len(p.recs)})
		return
	}
	if len(p.recs) == cap(p.recs) {
		n := max(p.hint-len(p.recs), len(p.recs)) // at least double
		grown := append(p.arrays.get(len(p.recs)+n), p.recs...)
		p.arrays.put(p.base)
		p.base, p.recs = grown[:cap(grown)], grown
		p.sizes = slices.Grow(p.sizes, n)
	}
	p.recs = append(p.recs, merge.Record{TopicPartition: e.tp, Offset: e.offset, Change: e.change})
	p.sizes = append(p.sizes, int32(min(e.size, 1<<31-1)))
}

// full reports whether a whole batch is waiting.
func (p *pending) full(l BatchLimits) bool { return p.holds(1, l) }

// holds reports whether n whole batches are waiting.
func (p *pending) holds(n int, l BatchLimits) bool {
	return len(p.recs) >= n*l.Records || p.bytes >= int64(n)*l.Bytes
}

// poisonFirst reports whether the oldest entry is a poison record.
func (p *pending) poisonFirst() bool {
	return len(p.marks) > 0 && p.marks[0].at == 0 && p.marks[0].kind == entryPoison
}

// count is the entries waiting, changes and marks.
func (p *pending) count() int { return len(p.recs) + len(p.marks) }

// enough reports whether the batch is ready at Age: it holds MinRecords
// entries, or is busy.
func (p *pending) enough(l BatchLimits) bool {
	return !p.empty() && (p.count() >= l.MinRecords || p.busy)
}

// forced reports whether the batch must be committed now, whatever the
// commit budget: it is full, has waited MaxDelay, or starts with a poison
// record.
func (p *pending) forced(now time.Time, l BatchLimits) bool {
	if p.empty() {
		return false
	}
	return p.full(l) || now.Sub(p.produced) >= l.MaxDelay || p.poisonFirst()
}

// ready reports whether the batch may be committed when the commit budget
// allows: it is Age old and holds MinRecords entries or is busy (enough),
// or, under l.Drained and drained (its table's partitions are read to their
// high watermarks), it holds MinRecords entries, or it is busy and nothing
// has arrived for quiet. A busy batch below MinRecords does not commit on
// drained alone, so that a caught-up table does not commit once per fetch.
func (p *pending) ready(now time.Time, l BatchLimits, drained bool) bool {
	if now.Sub(p.started) >= l.Age {
		return p.enough(l)
	}
	if !l.Drained || !drained || p.empty() {
		return false
	}
	return p.count() >= l.MinRecords || p.busy && now.Sub(p.arrivals.last) >= l.quiet()
}

// due reports whether the batch is forced or ready.
func (p *pending) due(now time.Time, l BatchLimits, drained bool) bool {
	return p.forced(now, l) || p.ready(now, l, drained)
}

// deadline is when the batch becomes ready, by Age once it holds
// MinRecords entries (enough), else forced by MaxDelay (zero when empty).
func (p *pending) deadline(l BatchLimits) time.Time {
	if p.empty() {
		return time.Time{}
	}
	if p.enough(l) {
		return p.started.Add(l.Age)
	}
	return p.produced.Add(l.MaxDelay)
}

// wake is when a batch that is not due at now is looked at again: its
// deadline, or for a busy one under l.Drained sooner, when nothing will
// have arrived for quiet (ready if its table is drained by then), and
// while it is not drained, every quiet.
func (p *pending) wake(now time.Time, l BatchLimits) time.Time {
	at := p.deadline(l)
	if !l.Drained || !p.busy || p.empty() {
		return at
	}
	q := p.arrivals.last.Add(l.quiet())
	if !q.After(now) { // quiet already, so not drained (else it was ready)
		q = now.Add(l.quiet())
	}
	return earliest(at, q)
}

// forcedAt is when the batch is forced by MaxDelay (zero when empty).
func (p *pending) forcedAt(l BatchLimits) time.Time {
	if p.empty() {
		return time.Time{}
	}
	return p.produced.Add(l.MaxDelay)
}

// work is one commit's share of a table's pending entries: recs and marks
// as pending held them (a mark's at counts recs).
type work struct {
	recs []merge.Record
	// arr is the array recs is a slice of, the work's alone: done hands
	// it back once the batch is committed.
	arr      []merge.Record
	sizes    []int32
	marks    []mark
	started  time.Time // when the oldest of its entries arrived
	produced time.Time // and when it was produced (pending.produced)
	// poison, when set, is the entry the table stops at once the rest is
	// committed.
	poison *entry
}

// batch is the merge batch of the work; LastOffsets holds, per partition,
// the last offset the work covers, so the txn moves past tombstones and
// dead-lettered records too.
func (w *work) batch() merge.Batch {
	b := merge.Batch{Records: w.recs, LastOffsets: make(map[cdctable.TopicPartition]int64)}
	for i := range w.recs {
		b.LastOffsets[w.recs[i].TopicPartition] = w.recs[i].Offset
	}
	for i := range w.marks {
		if off, ok := b.LastOffsets[w.marks[i].tp]; !ok || w.marks[i].offset > off {
			b.LastOffsets[w.marks[i].tp] = w.marks[i].offset
		}
	}
	return b
}

// first is where the work starts: its oldest entry's partition and offset
// (ok false when it is empty).
func (w *work) first() (tp cdctable.TopicPartition, offset int64, ok bool) {
	switch {
	case len(w.marks) > 0 && (w.marks[0].at == 0 || len(w.recs) == 0):
		return w.marks[0].tp, w.marks[0].offset, true
	case len(w.recs) > 0:
		return w.recs[0].TopicPartition, w.recs[0].Offset, true
	}
	return cdctable.TopicPartition{}, 0, false
}

// oldestCommit is the smallest source commit time (ms) of the work's
// changes, for the end-to-end latency metric (0: none).
func (w *work) oldestCommit() int64 {
	var oldest int64
	for i := range w.recs {
		if ms := w.recs[i].Change.CommitMillis; ms > 0 && (oldest == 0 || ms < oldest) {
			oldest = ms
		}
	}
	return oldest
}

// take removes and returns the longest arrival-order prefix of the entries
// that fits the limits (at least one change, so a record larger than Bytes
// still goes alone), ending before a poison record; a poison record at the
// head comes alone. Because it is a prefix in arrival order, each
// partition's share is a prefix of that partition's entries and its txn is
// the last offset taken (ADR 0026). The rest stays pending and, keeping its
// start time and whether it is busy, is due again at once.
func (p *pending) take(l BatchLimits) work {
	w := work{started: p.started, produced: p.produced}
	if p.poisonFirst() {
		e := p.marks[0].entry
		w.poison = &e
		p.clear()
		return w
	}
	limit, poison := len(p.recs), len(p.marks)
	for i := range p.marks {
		if p.marks[i].kind == entryPoison {
			limit, poison = p.marks[i].at, i
			break
		}
	}
	n := 0
	var bytes int64
	for n < limit {
		s := int64(p.sizes[n])
		if n > 0 && (n == l.Records || bytes+s > l.Bytes) {
			break
		}
		bytes += s
		n++
	}
	k := 0
	for k < poison && p.marks[k].at <= n {
		bytes += p.marks[k].size
		k++
	}
	if n == len(p.recs) {
		// The whole array goes with the batch.
		w.recs, w.arr = p.recs[:n:n], p.base
		p.recs, p.base = nil, nil
	} else {
		// A prefix: the batch gets a copy (at most Records records), so
		// that each array has one owner, and the rest moves to the front
		// of pending's array (at most about two batches: fetching pauses
		// beyond, reconcilePauses), which then serves for good instead of
		// being outgrown at its end by every batch.
		w.arr = append(p.arrays.get(n), p.recs[:n]...)
		w.recs = w.arr[:n:n]
		rest := copy(p.base, p.recs[n:])
		clear(p.base[rest : rest+n])
		p.recs = p.base[:rest]
	}
	w.sizes, w.marks = p.sizes[:n:n], p.marks[:k:k]
	p.sizes, p.marks = p.sizes[n:], p.marks[k:]
	p.hint = n
	for i := range p.marks {
		p.marks[i].at -= n
	}
	p.bytes -= bytes
	if p.empty() {
		p.clear()
	}
	return w
}

// requeue puts back work that was not committed (its apply gave way to a
// rebalance), before everything consumed since, without the entries of the
// partitions in gone.
func (p *pending) requeue(w work, gone func(cdctable.TopicPartition) bool) {
	var back pending
	keep := func(tp cdctable.TopicPartition) bool { return !gone(tp) }
	back.filterFrom(w.recs, w.sizes, w.marks, keep)
	if back.empty() {
		return
	}
	for i := range p.marks {
		p.marks[i].at += len(back.recs)
	}
	p.recs = append(back.recs, p.recs...)
	p.base = p.recs[:cap(p.recs)]
	p.sizes = append(back.sizes, p.sizes...)
	p.marks = append(back.marks, p.marks...)
	p.bytes += back.bytes
	p.started, p.produced = w.started, w.produced
}

// drop forgets the entries of the partitions in gone (revoked or lost):
// their new owner re-reads them from the table's txn. It returns the bytes
// freed.
func (p *pending) drop(gone func(cdctable.TopicPartition) bool) int64 {
	before, started, produced := p.bytes, p.started, p.produced
	kept := pending{hint: p.hint, busy: p.busy, arrivals: p.arrivals, arrays: p.arrays}
	kept.filterFrom(p.recs, p.sizes, p.marks, func(tp cdctable.TopicPartition) bool { return !gone(tp) })
	kept.base = kept.recs[:cap(kept.recs)]
	*p = kept
	if !p.empty() {
		p.started, p.produced = started, produced
	}
	return before - p.bytes
}

// filterFrom sets p to the entries of recs and marks whose partition keep
// accepts, in order, recounting the marks' positions.
func (p *pending) filterFrom(recs []merge.Record, sizes []int32, marks []mark, keep func(cdctable.TopicPartition) bool) {
	kept := make([]int, len(recs)+1) // kept[i]: changes kept among recs[:i]
	for i := range recs {
		kept[i+1] = kept[i]
		if keep(recs[i].TopicPartition) {
			p.recs = append(p.recs, recs[i])
			p.sizes = append(p.sizes, sizes[i])
			p.bytes += int64(sizes[i])
			kept[i+1]++
		}
	}
	for _, m := range marks {
		if keep(m.tp) {
			m.at = kept[m.at]
			p.marks = append(p.marks, m)
			p.bytes += m.size
		}
	}
}

// clear forgets everything; it returns the bytes freed.
func (p *pending) clear() int64 {
	b := p.bytes
	*p = pending{hint: p.hint, arrivals: p.arrivals, arrays: p.arrays}
	return b
}
