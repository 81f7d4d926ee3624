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
type Tracker struct {
	opts   Options
	tables map[codecs.TableID]*table
	// high is the highest position applied anywhere, with its commit time:
	// what a caught-up partition is complete through under the watermark
	// rule.
	high       codecs.Position
	highMillis int64
	txs        txLog
	// The latest snapshot: its rows' shared position, and whether it runs
	// (from its first row until its "last" marker applies). Snapshot rows
	// carry no transaction and share one position, so neither rule sees
	// them; a table is held at nothing until its rows are all applied.
	snapshotPos     codecs.Position
	snapshotRunning bool
}

type table struct {
	// snapshotEnded is the position of the latest snapshot whose end marker
	// (last_in_data_collection) the table applied; pastSnapshot the latest
	// snapshot known wholly applied.
	snapshotEnded, pastSnapshot codecs.Position
	// partitions under the watermark rule: the last applied position, and
	// whether the partition has nothing more to read.
	last     map[int32]codecs.Position
	millis   map[int32]int64
	caughtUp map[int32]bool
	// frontier under the transaction rule: the index in txs.list of the
	// first transaction not known complete for the table.
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
		tb = &table{last: map[int32]codecs.Position{}, millis: map[int32]int64{}, caughtUp: map[int32]bool{}}
		tb.through = t.txs.prunedThrough
		t.tables[id] = tb
	}
	return tb
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
	if applied.Through.Compare(t.high) > 0 {
		t.high, t.highMillis = applied.Through, applied.CommitMillis
	}
}

// Track declares a table and its partitions before any of its changes
// apply, so that a partition with nothing applied yet holds the table back
// under the watermark rule.
func (t *Tracker) Track(id codecs.TableID, partitions ...int32) {
	tb := t.table(id)
	for _, p := range partitions {
		if _, ok := tb.last[p]; !ok {
			tb.last[p] = codecs.Position{}
		}
	}
}

// CaughtUp says whether a partition of the table has been read to its end
// (its applied offset is the last one written).
func (t *Tracker) CaughtUp(id codecs.TableID, partition int32, caughtUp bool) {
	t.Track(id, partition)
	t.tables[id].caughtUp[partition] = caughtUp
}

// Apply records an applied change.
func (t *Tracker) Apply(c Change) {
	tb := t.table(c.Table)
	switch c.Snapshot {
	case "", "false", "incremental":
	default:
		// A re-delivered row of a snapshot already over (at or below its
		// position) starts nothing.
		if c.Pos.Compare(t.snapshotPos) > 0 {
			t.snapshotPos, t.snapshotRunning = c.Pos, true
		}
		if c.Pos.Compare(t.snapshotPos) == 0 {
			switch c.Snapshot {
			case "last_in_data_collection":
				tb.snapshotEnded = c.Pos
			case "last":
				tb.snapshotEnded, t.snapshotRunning = c.Pos, false
			}
		}
	}
	if c.Pos.Compare(tb.last[c.Partition]) > 0 {
		tb.last[c.Partition], tb.millis[c.Partition] = c.Pos, c.CommitMillis
	}
	if c.Pos.Compare(t.high) > 0 {
		t.high, t.highMillis = c.Pos, c.CommitMillis
	}
	if t.opts.Transactions && c.Snapshot == "" && c.TxOrder > 0 {
		t.txs.apply(c.Table, c.Pos.Commit, c.TxOrder, c.CommitMillis, c.Version)
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
	if !t.pastSnapshot(tb) || !tb.started() {
		return tb.through // what was complete stays complete
	}
	if t.opts.Transactions {
		tb.frontier, tb.through = t.txs.advance(id, tb.frontier, tb.through)
		return tb.through
	}
	return t.watermark(tb)
}

// watermark is the watermark rule's answer for a table past its snapshot.
func (t *Tracker) watermark(tb *table) Completeness {
	var out Completeness
	first := true
	for _, p := range slices.Sorted(maps.Keys(tb.last)) {
		pos, millis := tb.last[p], tb.millis[p]
		if tb.caughtUp[p] {
			pos, millis = t.high, t.highMillis
		}
		if first || pos.Compare(out.Through) < 0 {
			out, first = Completeness{Through: pos, CommitMillis: millis}, false
		}
	}
	// A caught-up partition that receives new changes falls back to its
	// last applied one, but what was complete stays complete: changes are
	// produced in position order.
	if out.Through.Compare(tb.through.Through) > 0 {
		tb.through = out
	}
	return tb.through
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
	t.Complete(id)
	return t.txs.scanFrom(id, tb.frontier)
}

// Prune forgets the transactions every tracked table is complete through.
func (t *Tracker) Prune() {
	if !t.opts.Transactions {
		return
	}
	n := len(t.txs.list)
	for id, tb := range t.tables {
		if !t.pastSnapshot(tb) {
			return
		}
		tb.frontier, tb.through = t.txs.advance(id, tb.frontier, tb.through)
		n = min(n, tb.frontier)
	}
	// A table not tracked yet starts complete through what was pruned, so
	// a transaction that counts such a table stays.
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

// started reports whether every partition has applied a change or has
// nothing to read: a partition none of whose changes is applied may begin
// with snapshot rows, which carry no transaction, of a snapshot nothing
// else has shown yet.
func (tb *table) started() bool {
	for p, pos := range tb.last {
		if pos == (codecs.Position{}) && !tb.caughtUp[p] {
			return false
		}
	}
	return true
}

// pastSnapshot reports whether the table holds every row of the latest
// snapshot. While the snapshot runs, a table that has not applied its end
// marker may still get rows; once it is over, all its rows were produced, so
// a partition holds none unapplied once it has passed their position or has
// nothing more to read.
func (t *Tracker) pastSnapshot(tb *table) bool {
	// Known complete at or past the snapshot's position (Resume): all its
	// rows are in, even if this tracker never saw the snapshot end.
	if tb.pastSnapshot == t.snapshotPos || tb.through.Through.Compare(t.snapshotPos) >= 0 {
		return true
	}
	if t.snapshotRunning && tb.snapshotEnded != t.snapshotPos {
		return false
	}
	for p, pos := range tb.last {
		if !tb.caughtUp[p] && pos.Compare(t.snapshotPos) <= 0 {
			return false
		}
	}
	// Final once the table's own rows are all produced: a partition that
	// then gets a re-delivered row does not undo it.
	if !t.snapshotRunning || tb.snapshotEnded == t.snapshotPos {
		tb.pastSnapshot = t.snapshotPos
	}
	return true
}
