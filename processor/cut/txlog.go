package cut

import (
	"slices"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// txLog is what the tracker knows of transactions under the transaction
// rule, in commit order.
type txLog struct {
	list []*tx
	byID map[codecs.LSN]*tx
	// pruned counts the transactions forgotten; prunedThrough is what they
	// made complete, for tables tracked after they went.
	pruned        int
	prunedThrough Completeness
	// lastEnd is the latest transaction whose END was read.
	lastEnd codecs.LSN
}

type tx struct {
	commit codecs.LSN
	ended  bool
	counts map[codecs.TableID]int64
	// applied holds each table's applied data_collection_orders: a set, so
	// that a re-delivered event counts once.
	applied map[codecs.TableID]map[int64]bool
	// first is, per table, the earliest version that applied any of them.
	first map[codecs.TableID]int64
	// millis is the source commit time, from any applied event; 0 unknown.
	millis int64
}

func newTxLog() txLog { return txLog{byID: map[codecs.LSN]*tx{}} }

// get returns the transaction committed at commit, adding it in order.
func (l *txLog) get(commit codecs.LSN) *tx {
	if x := l.byID[commit]; x != nil {
		return x
	}
	x := &tx{commit: commit, applied: map[codecs.TableID]map[int64]bool{}, first: map[codecs.TableID]int64{}}
	i, _ := slices.BinarySearchFunc(l.list, commit, func(a *tx, c codecs.LSN) int { return a.commit.Compare(c) })
	l.list = slices.Insert(l.list, i, x)
	l.byID[commit] = x
	return x
}

func (l *txLog) pastPruned(commit codecs.LSN) bool {
	return l.pruned > 0 && commit.Compare(l.prunedThrough.Through.Commit) <= 0
}

func (l *txLog) observe(ev codecs.TxEvent) {
	if ev.Status == codecs.TxEnd && ev.Commit.Compare(l.lastEnd) > 0 {
		l.lastEnd = ev.Commit
	}
	if l.pastPruned(ev.Commit) {
		return // a re-delivery of a transaction already complete everywhere
	}
	x := l.get(ev.Commit)
	if ev.Status == codecs.TxEnd {
		x.ended, x.counts = true, ev.Counts
	}
}

func (l *txLog) apply(table codecs.TableID, commit codecs.LSN, order, millis, version int64) {
	if l.pastPruned(commit) {
		return
	}
	x := l.get(commit)
	if x.applied[table] == nil {
		x.applied[table] = map[int64]bool{}
		x.first[table] = version
	}
	x.first[table] = min(x.first[table], version)
	x.applied[table][order] = true
	if millis > 0 {
		x.millis = millis
	}
}

// advance walks a table's frontier from index i over the transactions that
// have ended, whose events of the table have all been applied, and whose
// end the table's partitions cover (nothing else unapplied at or below it,
// such as snapshot rows, which carry no transaction).
func (l *txLog) advance(table codecs.TableID, i int, through Completeness, covers func(codecs.Position) bool) (int, Completeness) {
	// The transactions pruned counted no table tracked after them.
	if i == 0 && l.pruned > 0 && through.Through.Compare(l.prunedThrough.Through) < 0 && covers(l.prunedThrough.Through) {
		through = l.prunedThrough
	}
	for ; i < len(l.list); i++ {
		x := l.list[i]
		if End(x.commit).Compare(through.Through) <= 0 {
			continue // complete already (Resume)
		}
		if !x.ended || int64(len(x.applied[table])) < x.counts[table] || !covers(End(x.commit)) {
			break
		}
		through.Through = End(x.commit)
		if x.millis > 0 {
			through.CommitMillis = x.millis
		}
	}
	return i, through
}

// prune forgets the first n transactions.
func (l *txLog) prune(n int) {
	if n == 0 {
		return
	}
	for _, x := range l.list[:n] {
		delete(l.byID, x.commit)
		l.prunedThrough.Through = End(x.commit)
		if x.millis > 0 {
			l.prunedThrough.CommitMillis = x.millis
		}
	}
	l.list = slices.Delete(l.list, 0, n)
	l.pruned += n
}

// scanFrom is the earliest version that applied a change of the
// transactions from index i on, for the table; -1 for none.
func (l *txLog) scanFrom(table codecs.TableID, i int) int64 {
	out := int64(-1)
	for _, x := range l.list[i:] {
		if v, ok := x.first[table]; ok && (out < 0 || v < out) {
			out = v
		}
	}
	return out
}
