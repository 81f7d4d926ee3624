package cut_test

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cut"
)

// delivery is one simulated source: a workload produced into per-partition
// queues and the transaction topic, consumed in random interleavings, with
// partitions that stall (a paused consumer) and deliver late.
type delivery struct {
	t       *testing.T
	rng     *rand.Rand
	w       *dbzgen.Workload
	tables  []*dbzgen.Table
	queues  map[string][]item // by table topic and partition; "tx" for the transaction topic
	emitted map[codecs.TableID][]item
	seen    map[string]bool // delivered events by identity
	ends    map[codecs.LSN]codecs.TxEvent
	begun   map[codecs.LSN]bool
	txOf    map[codecs.LSN]bool // transactions with a delivered data event
	// stalled holds, per queue, the step until which it delivers nothing.
	stalled map[string]int
	step    int
}

type item struct {
	queue  string
	id     string // table, key and position: what a re-delivery repeats
	change cut.Change
	tx     *codecs.TxEvent
}

// The shapes: customers, two partitions, alone in the snapshot
// (the other tables are empty then) on odd seeds, with no change in the
// first transactions; its partitions stall at the start.
func newDelivery(t *testing.T, seed uint64) *delivery {
	gen := dbzgen.New(nil, dbzgen.Options{})
	var tables []*dbzgen.Table
	for _, def := range []dbzgen.TableDef{dbzgen.Customers(), dbzgen.Orders(), dbzgen.Tickets()} {
		tb, err := gen.Table(def)
		require.NoError(t, err)
		tables = append(tables, tb)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	opts := dbzgen.WorkloadOptions{Seed: seed, Keys: 20, Snapshot: true, MaxTxEvents: 6,
		TransactionTopic: true, LateEnd: 0.3, Redeliver: 0.05, QuietStart: map[string]int{"customers": 5 + rng.IntN(40)}}
	if seed%2 == 1 {
		opts.SnapshotSkip = []string{"orders", "tickets"}
	}
	w, err := dbzgen.NewWorkload(opts, tables...)
	require.NoError(t, err)
	d := &delivery{t: t, rng: rng, w: w, tables: tables, queues: map[string][]item{},
		emitted: map[codecs.TableID][]item{}, seen: map[string]bool{}, ends: map[codecs.LSN]codecs.TxEvent{},
		begun: map[codecs.LSN]bool{}, txOf: map[codecs.LSN]bool{}, stalled: map[string]int{}}
	for p := range partitionsOf(tables[0]) {
		if p == 0 || rng.IntN(2) == 0 {
			d.stalled[fmt.Sprintf("%s/%d", tables[0].Topic(), p)] = 200 + rng.IntN(1500)
		}
	}
	return d
}

// partitionsOf is how many partitions a table's topic has.
func partitionsOf(tb *dbzgen.Table) int32 {
	if tb.Def().Name == "customers" {
		return 2
	}
	return 3
}

func tableID(tb *dbzgen.Table) codecs.TableID {
	d := tb.Def()
	return codecs.TableID{Database: d.Database, Schema: d.Schema, Table: d.Name}
}

// produce emits the workload's next event into its queue.
func (d *delivery) produce() {
	ev := d.w.Next()
	if m := ev.Marker; m != nil {
		commit, err := codecs.ParseLSN(m.ID)
		require.NoError(d.t, err)
		tx := codecs.TxEvent{Status: codecs.TxStatus(m.Status), ID: m.ID, Commit: commit}
		if m.Status == dbzgen.TxEnd {
			tx.Counts = map[codecs.TableID]int64{}
			for tb, n := range m.Counts {
				tx.Counts[tableID(tb)] = n
				tx.EventCount += n
			}
		}
		d.queues["tx"] = append(d.queues["tx"], item{queue: "tx", tx: &tx})
		return
	}
	if ev.Tombstone {
		return
	}
	image := ev.After
	if ev.Op == dbzgen.OpDelete {
		image = ev.Before
	}
	var key []any
	for _, k := range ev.Table.Def().Key {
		key = append(key, image[k])
	}
	h := fnv.New32a()
	fmt.Fprint(h, key...)
	part := int32(h.Sum32() % uint32(partitionsOf(ev.Table)))
	pos := codecs.Position{Commit: codecs.LSN(ev.Source.CommitLSN), Change: codecs.LSN(ev.Source.ChangeLSN), Serial: ev.Source.SerialNo}
	c := cut.Change{Table: tableID(ev.Table), Partition: part, Pos: pos, CommitMillis: ev.Source.Time.UnixMilli(), Snapshot: ev.Source.Snapshot}
	if ev.Transaction != nil {
		c.TxOrder = ev.Transaction.DataCollectionOrder
	}
	q := fmt.Sprintf("%s/%d", ev.Table.Topic(), part)
	it := item{queue: q, id: fmt.Sprintf("%s %v %s", c.Table, key, pos), change: c}
	d.queues[q] = append(d.queues[q], it)
	d.emitted[c.Table] = append(d.emitted[c.Table], it)
}

// deliver pops one event from a random non-empty queue that is not
// stalled into tr, and sometimes stalls a queue for a while. It reports
// whether any queue holds events.
func (d *delivery) deliver(tr *cut.Tracker) bool {
	d.step++
	var names []string
	pending := false
	for q, items := range d.queues {
		pending = pending || len(items) > 0
		if len(items) > 0 && d.stalled[q] <= d.step {
			names = append(names, q)
		}
	}
	if len(names) == 0 {
		return pending
	}
	if d.rng.IntN(200) == 0 {
		slices.Sort(names)
		d.stalled[names[d.rng.IntN(len(names))]] = d.step + 50 + d.rng.IntN(400)
	}
	slices.Sort(names)
	q := names[d.rng.IntN(len(names))]
	it := d.queues[q][0]
	d.queues[q] = d.queues[q][1:]
	if it.tx != nil {
		tr.Observe(*it.tx)
		d.begun[it.tx.Commit] = true
		if it.tx.Status == codecs.TxEnd {
			d.ends[it.tx.Commit] = *it.tx
		}
		return true
	}
	tr.Apply(it.change)
	d.seen[it.id] = true
	if it.change.TxOrder > 0 {
		d.txOf[it.change.Pos.Commit] = true
	}
	return true
}

// caughtUp tells the tracker which partitions have nothing more to read.
func (d *delivery) caughtUp(tr *cut.Tracker) {
	for _, tb := range d.tables {
		for p := range partitionsOf(tb) {
			tr.CaughtUp(tableID(tb), p, len(d.queues[fmt.Sprintf("%s/%d", tb.Topic(), p)]) == 0)
		}
	}
}

// frontier is the transaction rule computed from scratch: the latest
// transaction such that it and every earlier one known have ended, have all
// their events of the table delivered, and every partition of the table
// has either nothing left to deliver or delivered an event above it.
func (d *delivery) frontier(id codecs.TableID) (codecs.LSN, bool) {
	known := map[codecs.LSN]bool{}
	for c := range d.begun {
		known[c] = true
	}
	for c := range d.txOf {
		known[c] = true
	}
	var out codecs.LSN
	ok := false
	for _, c := range slices.SortedFunc(maps.Keys(known), codecs.LSN.Compare) {
		end, ended := d.ends[c]
		if !ended || !d.passed(id, cut.End(c)) {
			break
		}
		// Re-deliveries are one event; count distinct identities.
		distinct := map[string]bool{}
		for _, it := range d.emitted[id] {
			if it.change.TxOrder > 0 && it.change.Pos.Commit == c && d.seen[it.id] {
				distinct[it.id] = true
			}
		}
		if int64(len(distinct)) < end.Counts[id] {
			break
		}
		out, ok = c, true
	}
	return out, ok
}

// passed reports whether every partition of the table has nothing left to
// deliver or delivered an event above x.
func (d *delivery) passed(id codecs.TableID, x codecs.Position) bool {
	for p := range partitionsOf(d.table(id)) {
		q := fmt.Sprintf("%s/%d", d.table(id).Topic(), p)
		if len(d.queues[q]) == 0 {
			continue
		}
		if !slices.ContainsFunc(d.emitted[id], func(it item) bool { return it.queue == q && d.seen[it.id] && it.change.Pos.Compare(x) > 0 }) {
			return false
		}
	}
	return true
}

func TestTracker(t *testing.T) {
	for _, rule := range []struct {
		name string
		opts cut.Options
	}{{"transactions", cut.Options{Transactions: true}}, {"watermark", cut.Options{}}} {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("%s/seed=%d", rule.name, seed), func(t *testing.T) {
				d := newDelivery(t, seed)
				tr := cut.New(rule.opts)
				for _, tb := range d.tables {
					parts := make([]int32, partitionsOf(tb))
					for p := range parts {
						parts[p] = int32(p)
					}
					tr.Track(tableID(tb), parts...)
				}
				last := map[codecs.TableID]codecs.Position{}
				exact, claims := 0, 0
				// Produce and deliver for 3000 steps, then deliver what is left.
				for step := 0; ; step++ {
					if step < 3000 && d.rng.IntN(3) > 0 {
						d.produce()
					} else if !d.deliver(tr) && step >= 3000 {
						break
					}
					d.caughtUp(tr)
					if step%7 == 0 {
						tr.Prune()
					}
					for _, tb := range d.tables {
						if step%5 != 0 {
							break
						}
						id := tableID(tb)
						c := tr.Complete(id)
						require.GreaterOrEqual(t, c.Through.Compare(last[id]), 0, "step %d: %s went back", step, id)
						last[id] = c.Through
						if c.IsZero() {
							continue
						}
						claims++
						for _, it := range d.emitted[id] {
							if it.change.Pos.Compare(c.Through) <= 0 {
								require.True(t, d.seen[it.id], "step %d: %s complete through %s, but %s is not applied", step, id, c.Through, it.id)
							}
						}
						if rule.opts.Transactions && step%25 == 0 {
							// As far as it may: at least where the partitions
							// and transactions are now.
							if f, ok := d.frontier(id); ok {
								require.GreaterOrEqual(t, c.Through.Compare(cut.End(f)), 0, "step %d: %s claims %s, short of %s", step, id, c.Through, cut.End(f))
								exact++
							}
						}
					}
				}
				for q, items := range d.queues {
					require.Empty(t, items, q)
				}
				require.Positive(t, claims)
				group := make([]codecs.TableID, 0, len(d.tables))
				for _, tb := range d.tables {
					group = append(group, tableID(tb))
				}
				var g cut.Completeness
				for i, id := range group {
					if c := tr.Complete(id); i == 0 || c.Through.Compare(g.Through) < 0 {
						g = c
					}
				}
				if rule.opts.Transactions {
					require.Positive(t, exact)
					var lastEnd codecs.LSN
					for c := range d.ends {
						if c.Compare(lastEnd) > 0 {
							lastEnd = c
						}
					}
					require.Equal(t, cut.End(lastEnd), g.Through, "every delivered END completes the group")
				} else {
					require.Positive(t, g.CommitMillis)
					for _, tb := range d.tables {
						require.Equal(t, g.Through, tr.Complete(tableID(tb)).Through, "caught up: every table at the highest position")
					}
				}
			})
		}
	}
}

func (d *delivery) table(id codecs.TableID) *dbzgen.Table {
	for _, tb := range d.tables {
		if tableID(tb) == id {
			return tb
		}
	}
	return nil
}
