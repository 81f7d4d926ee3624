package cut

import (
	"maps"
	"math"
	"slices"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// Completeness is how far a table (or a group) is complete.
type Completeness struct {
	// Through: every change at or below this position is applied. The zero
	// position means nothing is known to be complete yet.
	Through codecs.Position
	// CommitMillis is the source commit time (ms since the epoch) of the
	// change at Through; 0 when unknown. Commit times share milliseconds, so
	// a reader who wants whole transactions compares positions; by time only
	// "committed before CommitMillis" is safe.
	CommitMillis int64
}

// IsZero reports whether nothing is known to be complete.
func (c Completeness) IsZero() bool { return c.Through == codecs.Position{} }

// End is the position above every change of the transaction committed at
// commit: a transaction is complete through End(commit) when all of it is.
func End(commit codecs.LSN) codecs.Position {
	var max codecs.LSN
	for i := range max {
		max[i] = 0xff
	}
	return codecs.Position{Commit: commit, Change: max, Serial: math.MaxInt64}
}

// Options configure a Tracker.
type Options struct {
	// Transactions selects the transaction-metadata rule; false the
	// watermark rule.
	Transactions bool
}

// Change is one applied change event, as the tracker needs it.
type Change struct {
	Table     codecs.TableID
	Partition int32
	Pos       codecs.Position
	// CommitMillis is source.ts_ms.
	CommitMillis int64
	// Snapshot is the source.snapshot marker ("" when streaming).
	Snapshot string
	// TxOrder is the transaction block's data_collection_order (0 without
	// transaction metadata); the transaction is Pos.Commit.
	TxOrder int64
	// Version is the table version that applied the change.
	Version int64
}

// Tracker follows applied changes (and, under the transaction rule, the
// transaction topic) and says how far each table is complete. It is not
// safe for concurrent use.
//
// Under both rules a table is complete through X only when each partition
// of its topic is known to hold nothing unapplied at or below X (bound):
// snapshot rows, which carry no transaction, and partitions that have
// applied nothing yet included.
type Tracker struct {
	opts   Options
	tables map[codecs.TableID]*table
	// high is the highest position applied anywhere, with its commit time:
	// what a caught-up partition holds everything at or below under the
	// watermark rule.
	high bound
	txs  txLog
}

// bound is how far a partition is known to hold nothing unapplied: every
// change below pos, and the change at pos unless open. A snapshot's rows
// share one position, so the partition that applied one of them may still
// hold others at it: its bound is open.
type bound struct {
	pos    codecs.Position
	millis int64
	open   bool
}

// covers reports whether nothing at or below x lies beyond b.
func (b bound) covers(x codecs.Position) bool {
	c := x.Compare(b.pos)
	return c < 0 || c == 0 && !b.open
}

// less orders bounds by how little they cover.
func (b bound) less(o bound) bool {
	c := b.pos.Compare(o.pos)
	return c < 0 || c == 0 && b.open && !o.open
}

type partition struct {
	// last is the highest position applied: changes reach a partition in
	// position order, so every change below it there is applied.
	last bound
	// caughtUp: the partition was read to its end; upTo is then what every
	// change produced before was at or below.
	caughtUp bool
	upTo     bound
}

func (p *partition) bound() bound {
	if p.caughtUp {
		return p.upTo
	}
	return p.last
}

type table struct {
	// parts are the topic's partitions; declared once Track listed them
	// all. Nothing is claimed before: an unlisted partition may hold
	// anything.
	parts    map[int32]*partition
	declared bool
	// frontier under the transaction rule: the index in txs.list of the
	// first transaction the table is not known complete through.
	frontier int
	// through is how far the table is known complete.
	through Completeness
}

// New returns an empty tracker.
func New(opts Options) *Tracker {
	return &Tracker{opts: opts, tables: map[codecs.TableID]*table{}, txs: newTxLog()}
}

func (t *Tracker) table(id codecs.TableID) *table {
	tb := t.tables[id]
	if tb == nil {
		tb = &table{parts: map[int32]*partition{}}
		t.tables[id] = tb
	}
	return tb
}

func (tb *table) part(p int32) *partition {
	pt := tb.parts[p]
	if pt == nil {
		pt = &partition{last: bound{open: true}}
		tb.parts[p] = pt
	}
	return pt
}

// Resume starts a table at what an earlier tracker found (the control
// table's row): complete, and the highest position it had applied, so that
// a tracker rebuilt after a restart needs only the changes and transactions
// above them.
func (t *Tracker) Resume(id codecs.TableID, complete, applied Completeness) {
	tb := t.table(id)
	if complete.Through.Compare(tb.through.Through) > 0 {
		tb.through = complete
	}
	// Open when it may be a snapshot row, one of many at its position: those
	// carry no change LSN (codecs.Position). A streaming change is alone at
	// its position, so a controller restarted while nothing changes still
	// reaches it once the partitions are caught up.
	if applied.Through.Compare(t.high.pos) > 0 {
		t.high = bound{pos: applied.Through, millis: applied.CommitMillis, open: applied.Through.Change.IsZero()}
	}
}

// Track declares the partitions of a table's topic. Until it has been
// called the table is complete through nothing more than it was; a
// partition with nothing applied holds the table back until it applies a
// change above a position or is caught up.
func (t *Tracker) Track(id codecs.TableID, partitions ...int32) {
	tb := t.table(id)
	for _, p := range partitions {
		tb.part(p)
	}
	tb.declared = tb.declared || len(partitions) > 0
}

// CaughtUp says whether a partition of the table has applied everything
// written to it (its applied offset reached an end offset listed after the
// changes and transaction ends tracked so far were read). A caught-up
// partition holds nothing unapplied at or below what the tracker knows now.
func (t *Tracker) CaughtUp(id codecs.TableID, partition int32, caughtUp bool) {
	pt := t.table(id).part(partition)
	pt.caughtUp = caughtUp
	if caughtUp {
		pt.upTo = t.high
		if end := t.txs.lastEnd; t.opts.Transactions && end != (codecs.LSN{}) && End(end).Compare(pt.upTo.pos) > 0 {
			pt.upTo = bound{pos: End(end)}
		}
	}
}

// shared reports whether a change is a snapshot row: one of many at one
// position.
func shared(snapshot string) bool { return snapshot != "" && snapshot != "false" }

// Apply records an applied change.
func (t *Tracker) Apply(c Change) {
	pt := t.table(c.Table).part(c.Partition)
	b := bound{pos: c.Pos, millis: c.CommitMillis, open: shared(c.Snapshot)}
	raise(&pt.last, b)
	raise(&t.high, b)
	if t.opts.Transactions && c.Snapshot == "" && c.TxOrder > 0 {
		t.txs.apply(c.Table, c.Pos.Commit, c.TxOrder, c.CommitMillis, c.Version)
	}
}

// raise moves b up to n; at an equal position a snapshot row opens it.
func raise(b *bound, n bound) {
	switch c := n.pos.Compare(b.pos); {
	case c > 0:
		*b = n
	case c == 0 && n.open:
		b.open = true
	}
}

// ApplyOrder records, under the transaction rule, that the table applied
// the event of data_collection_order order of the transaction committed at
// commit (source commit time millis, 0 unknown), in table version version:
// what a commit's progress says when the changes themselves are gone.
func (t *Tracker) ApplyOrder(id codecs.TableID, commit codecs.LSN, order, millis, version int64) {
	t.table(id)
	if t.opts.Transactions && order > 0 {
		t.txs.apply(id, commit, order, millis, version)
	}
}

// Observe records an event of the transaction topic, read in order.
func (t *Tracker) Observe(ev codecs.TxEvent) { t.txs.observe(ev) }

// Complete says how far the table is complete.
func (t *Tracker) Complete(id codecs.TableID) Completeness {
	tb := t.tables[id]
	if tb == nil {
		return Completeness{}
	}
	t.advance(id, tb)
	return tb.through
}

// advance moves the table's completeness as far as its partitions and,
// under the transaction rule, its transactions allow. What was complete
// stays complete.
func (t *Tracker) advance(id codecs.TableID, tb *table) {
	if !tb.declared {
		return
	}
	if t.opts.Transactions {
		tb.frontier, tb.through = t.txs.advance(id, tb.frontier, tb.through, tb.covers)
		return
	}
	low := tb.low()
	if !low.open && low.pos.Compare(tb.through.Through) > 0 {
		tb.through = Completeness{Through: low.pos, CommitMillis: low.millis}
	}
}

// low is the least of the partitions' bounds.
func (tb *table) low() bound {
	var out bound
	for i, p := range slices.Sorted(maps.Keys(tb.parts)) {
		if b := tb.parts[p].bound(); i == 0 || b.less(out) {
			out = b
		}
	}
	return out
}

// covers reports whether every partition is known to hold nothing
// unapplied at or below x.
func (tb *table) covers(x codecs.Position) bool {
	for _, pt := range tb.parts {
		if !pt.bound().covers(x) {
			return false
		}
	}
	return true
}

// ScanFrom is the earliest table version that applied a change of a
// transaction the table is not yet known complete through, or -1 for none:
// a tracker rebuilt after a restart must read the table's versions from
// there to count those transactions again.
func (t *Tracker) ScanFrom(id codecs.TableID) int64 {
	tb := t.tables[id]
	if tb == nil || !t.opts.Transactions {
		return -1
	}
	t.advance(id, tb)
	return t.txs.scanFrom(id, tb.frontier)
}

// Prune forgets the transactions every tracked table is complete through.
func (t *Tracker) Prune() {
	if !t.opts.Transactions {
		return
	}
	n := len(t.txs.list)
	for id, tb := range t.tables {
		t.advance(id, tb)
		n = min(n, tb.frontier)
	}
	// A table not tracked yet starts from the transactions kept, so a
	// transaction that counts such a table stays.
	for i, tx := range t.txs.list[:n] {
		for id := range tx.counts {
			if t.tables[id] == nil {
				n = min(n, i)
			}
		}
	}
	t.txs.prune(n)
	for _, tb := range t.tables {
		tb.frontier -= n
	}
}
