package cut_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cut"
)

// TestTrackerHoldsUncoveredPartitions: the cases the simulation reaches
// only by chance. A table is complete through nothing a partition of it may
// still hold: one not declared, one with nothing applied, one whose last
// applied change is a snapshot row (others share its position).
func TestTrackerHoldsUncoveredPartitions(t *testing.T) {
	customers := codecs.TableID{Database: "sales", Schema: "dbo", Table: "customers"}
	orders := codecs.TableID{Database: "sales", Schema: "dbo", Table: "orders"}
	snap := codecs.Position{Commit: lsn(1)}
	at := func(commit byte) codecs.Position {
		return codecs.Position{Commit: lsn(commit), Change: lsn(commit), Serial: 2}
	}
	// tx is an ended transaction changing one order in partition 0.
	tx := func(tr *cut.Tracker, commit byte) {
		tr.Apply(cut.Change{Table: orders, Partition: 0, Pos: at(commit), TxOrder: 1, CommitMillis: int64(commit)})
		tr.Observe(codecs.TxEvent{Status: codecs.TxEnd, Commit: lsn(commit), Counts: map[codecs.TableID]int64{orders: 1}})
	}
	for _, c := range []struct {
		name         string
		transactions bool
		run          func(tr *cut.Tracker)
		want         codecs.Position // customers'
	}{{
		name: "partitions not declared", transactions: true,
		run: func(tr *cut.Tracker) {
			tr.Track(orders, 0)
			tx(tr, 2)
			tr.CaughtUp(customers, 0, true)
		},
	}, {
		name: "tracked after its transactions were pruned", transactions: true,
		run: func(tr *cut.Tracker) {
			tr.Track(orders, 0)
			tx(tr, 2)
			tx(tr, 3)
			tr.CaughtUp(orders, 0, true)
			tr.Prune()
			require.Equal(t, cut.End(lsn(3)), tr.Complete(orders).Through)
			tr.Track(customers, 0, 1)
			tr.Apply(cut.Change{Table: customers, Partition: 0, Pos: snap, Snapshot: "first"})
		},
	}, {
		name: "pruned transactions once its partitions are caught up", transactions: true,
		run: func(tr *cut.Tracker) {
			tr.Track(orders, 0)
			tx(tr, 2)
			tx(tr, 3)
			tr.CaughtUp(orders, 0, true)
			tr.Prune()
			tr.Track(customers, 0, 1)
			tr.CaughtUp(customers, 0, true)
			tr.CaughtUp(customers, 1, true)
		},
		want: cut.End(lsn(3)),
	}, {
		name: "a partition with nothing applied", transactions: true,
		run: func(tr *cut.Tracker) {
			tr.Track(orders, 0)
			tr.Track(customers, 0, 1)
			tr.Apply(cut.Change{Table: customers, Partition: 0, Pos: snap, Snapshot: "first"})
			tr.Apply(cut.Change{Table: customers, Partition: 0, Pos: snap, Snapshot: "last"})
			tx(tr, 2)
			tr.Apply(cut.Change{Table: customers, Partition: 0, Pos: at(3)})
		},
	}, {
		name: "both partitions past the snapshot", transactions: true,
		run: func(tr *cut.Tracker) {
			tr.Track(orders, 0)
			tr.Track(customers, 0, 1)
			tr.Apply(cut.Change{Table: customers, Partition: 1, Pos: snap, Snapshot: "first"})
			tx(tr, 2)
			tr.Apply(cut.Change{Table: customers, Partition: 0, Pos: at(3)})
			tr.Apply(cut.Change{Table: customers, Partition: 1, Pos: at(4)})
		},
		want: cut.End(lsn(2)),
	}, {
		name: "watermark: a partition at a snapshot row",
		run: func(tr *cut.Tracker) {
			tr.Track(customers, 0, 1)
			tr.Apply(cut.Change{Table: customers, Partition: 0, Pos: snap, Snapshot: "first"})
			tr.Apply(cut.Change{Table: customers, Partition: 1, Pos: at(3)})
		},
	}, {
		name: "watermark: caught up while the highest applied is a snapshot row",
		run: func(tr *cut.Tracker) {
			tr.Track(customers, 0, 1)
			tr.Apply(cut.Change{Table: customers, Partition: 0, Pos: snap, Snapshot: "first"})
			tr.CaughtUp(customers, 0, true)
			tr.CaughtUp(customers, 1, true)
		},
	}, {
		name: "watermark: past the snapshot",
		run: func(tr *cut.Tracker) {
			tr.Track(customers, 0, 1)
			tr.Apply(cut.Change{Table: customers, Partition: 0, Pos: snap, Snapshot: "first"})
			tr.Apply(cut.Change{Table: customers, Partition: 0, Pos: at(2)})
			tr.Apply(cut.Change{Table: customers, Partition: 1, Pos: at(3)})
		},
		want: at(2),
	}, {
		// A controller restarted while nothing changes: the control row's
		// highest applied position is a streaming change, which no other
		// change shares, so caught-up partitions cover it.
		name: "watermark: resumed, then caught up with nothing new",
		run: func(tr *cut.Tracker) {
			tr.Resume(customers, cut.Completeness{Through: at(2)}, cut.Completeness{Through: at(3)})
			tr.Track(customers, 0, 1)
			tr.CaughtUp(customers, 0, true)
			tr.CaughtUp(customers, 1, true)
		},
		want: at(3),
	}, {
		name: "watermark: resumed at a snapshot row, then caught up",
		run: func(tr *cut.Tracker) {
			tr.Resume(customers, cut.Completeness{}, cut.Completeness{Through: snap})
			tr.Track(customers, 0, 1)
			tr.CaughtUp(customers, 0, true)
			tr.CaughtUp(customers, 1, true)
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			tr := cut.New(cut.Options{Transactions: c.transactions})
			c.run(tr)
			require.Equal(t, c.want, tr.Complete(customers).Through)
		})
	}
}

func lsn(b byte) codecs.LSN { return codecs.LSN{9: b} }
