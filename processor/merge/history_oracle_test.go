package merge

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

var (
	histLayout = &codecs.Layout{Name: "t.Value", Columns: []codecs.Column{
		{Name: "id", Type: codecs.Type{Kind: codecs.KindInteger}},
		{Name: "name", Type: codecs.Type{Kind: codecs.KindString}, Nullable: true},
		{Name: "notes", Type: codecs.Type{Kind: codecs.KindString}, Nullable: true},
	}}
	histKeyLayout = &codecs.Layout{Name: "t.Key", Columns: []codecs.Column{{Name: "id", Type: codecs.Type{Kind: codecs.KindInteger}}}}
)

// histGen generates a random change stream over a few keys, in source
// order, with the shapes a history table must take: inserts, updates of
// tracked and untracked columns, unchanged-LOB placeholders (notes),
// deletes and re-inserts, primary-key changes (a delete and an insert in
// one transaction), truncates and Debezium's re-deliveries.
type histGen struct {
	r         *rand.Rand
	n         int // last position
	alive     map[int32]bool
	name      map[int32]string
	truncates bool
	noop      bool // updates may leave the name as it is
	// placeholders: updates may leave notes unavailable. A placeholder
	// takes the version in force when it is applied, so an earlier event
	// arriving after it cannot change it (ADR 0046): off for late events.
	placeholders bool
}

func (g *histGen) pos() (codecs.Position, int64) {
	g.n++
	var l codecs.LSN
	l[8], l[9] = byte(g.n>>8), byte(g.n)
	// Many changes share a millisecond: ties are broken by position.
	return codecs.Position{Commit: l, Change: l, Serial: 1}, 1_700_000_000_000 + int64(g.n/3)
}

func (g *histGen) change(op codecs.Op, id int32) codecs.Change {
	p, ms := g.pos()
	c := codecs.Change{Op: op, Pos: p, CommitMillis: ms}
	if op == codecs.OpTruncate {
		return c
	}
	c.Layout, c.KeyLayout, c.Key = histLayout, histKeyLayout, []any{id}
	if op != codecs.OpDelete && (!g.alive[id] || !g.noop || g.r.IntN(3) > 0) {
		g.name[id] = fmt.Sprintf("n%d", g.r.IntN(1000))
	}
	c.Row = []any{id, g.name[id], fmt.Sprintf("note%d", g.r.IntN(3))}
	if op == codecs.OpUpdate && g.placeholders && g.r.IntN(4) == 0 {
		c.Row[2], c.Unavailable = nil, []int{2}
	}
	return c
}

// next returns the changes of one source transaction.
func (g *histGen) next() []codecs.Change {
	id := int32(g.r.IntN(8))
	switch x := g.r.IntN(20); {
	case x == 0 && g.truncates:
		clear(g.alive)
		return []codecs.Change{g.change(codecs.OpTruncate, 0)}
	case x <= 2 && g.alive[id]:
		to := int32(8 + g.r.IntN(4))
		if g.alive[to] {
			break
		}
		// A primary-key change: Debezium emits a delete and an insert.
		g.name[to] = g.name[id]
		d, c := g.change(codecs.OpDelete, id), g.change(codecs.OpCreate, to)
		g.alive[id], g.alive[to] = false, true
		return []codecs.Change{d, c}
	case x <= 5 && g.alive[id]:
		g.alive[id] = false
		return []codecs.Change{g.change(codecs.OpDelete, id)}
	}
	if !g.alive[id] {
		g.alive[id] = true
		op := codecs.OpCreate
		if g.r.IntN(4) == 0 {
			op = codecs.OpRead
		}
		return []codecs.Change{g.change(op, id)}
	}
	return []codecs.Change{g.change(codecs.OpUpdate, id)}
}

type histRun struct {
	t       *testing.T
	store   deltalog.Store
	h       *History
	model   *cdcmodel.History
	opts    HistoryOptions
	offsets map[int32]int64
	commits int
}

func newHistRun(t *testing.T, opts HistoryOptions, tracked func(string) bool) *histRun {
	opts.Store, opts.TableName = memstore.New(memstore.Options{}), "orders_history"
	h, err := OpenHistory(t.Context(), opts)
	require.NoError(t, err)
	return &histRun{t: t, store: opts.Store, h: h, model: cdcmodel.NewHistory(tracked), opts: opts, offsets: map[int32]int64{}}
}

// record gives a change its partition (by key, as Kafka does) and offset.
func (hr *histRun) record(c codecs.Change) Record {
	part := int32(0)
	if c.Key != nil {
		part = c.Key[0].(int32) % 2
	}
	off := hr.offsets[part]
	hr.offsets[part]++
	return Record{TopicPartition: cdctable.TopicPartition{Topic: "t", Partition: part}, Offset: off, Change: c}
}

// apply commits the batch to the engine and the model, and compares the
// whole history table with the model's.
func (hr *histRun) apply(recs []Record, replay bool) {
	t := hr.t
	b := Batch{Records: recs, LastOffsets: map[cdctable.TopicPartition]int64{}}
	upTo := map[cdcmodel.TopicPartition]int64{}
	for _, r := range recs {
		b.LastOffsets[r.TopicPartition] = max(b.LastOffsets[r.TopicPartition], r.Offset)
		mtp := cdcmodel.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		upTo[mtp] = max(upTo[mtp], r.Offset)
		hr.model.Feed(cdcmodel.Record{TopicPartition: mtp, Offset: r.Offset, Change: r.Change})
	}
	v, err := hr.h.Apply(t.Context(), b)
	require.NoError(t, err)
	ok := hr.model.Commit(upTo)
	if replay {
		require.Equal(t, int64(-1), v, "a replayed batch commits nothing")
		return
	}
	require.Equal(t, ok, v >= 0)
	if v < 0 {
		return
	}
	hr.commits++
	hr.compare(v)
}

func (hr *histRun) compare(v int64) {
	t := hr.t
	keys := append(hr.model.KeyColumns(), cdcmodel.ColStartPosition)
	got, err := cdcmodel.ReadVersion(t.Context(), hr.store, v, keys)
	require.NoError(t, err)
	cols := append(hr.model.Columns(), cdcmodel.ColStartAt, cdcmodel.ColEndAt, cdcmodel.ColStartPosition, cdcmodel.ColEndPosition,
		cdcmodel.ColPosition, cdcmodel.ColCommitTime)
	require.Equal(t, cols, got.Columns)
	norm := func(rows map[string]cdcmodel.Row) map[string]cdcmodel.Row {
		for _, r := range rows {
			for c, x := range r {
				if tm, ok := x.(time.Time); ok {
					r[c] = tm.UnixMicro()
				}
			}
		}
		return rows
	}
	require.Equal(t, cdcmodel.RenderRows(hr.model.Rows(), cols), cdcmodel.RenderRows(norm(got.Rows), cols), "history table at version %d", v)
	// At most one open version per key, and none overlap.
	open := map[string]int{}
	for _, r := range got.Rows {
		if r[cdcmodel.ColEndPosition] == nil {
			k := cdcmodel.RowKey(r, hr.model.KeyColumns())
			open[k]++
			require.Equal(t, 1, open[k], "key %v has two open versions", k)
		}
	}
}

// reopen opens the history table again, as a restart does.
func (hr *histRun) reopen() {
	h, err := OpenHistory(hr.t.Context(), hr.opts)
	require.NoError(hr.t, err)
	hr.h = h
}

// TestHistoryOracle applies random change streams in source order, with
// re-deliveries, replayed batches and restarts, and compares the whole
// history table with the model after every commit.
func TestHistoryOracle(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 41))
			var opts HistoryOptions
			var tracked func(string) bool
			switch seed % 3 {
			case 1:
				opts.TrackHistoryExcept = []string{"notes"}
				tracked = func(c string) bool { return c != "notes" }
			case 2:
				opts.DeletionVectors = new(false)
			}
			hr := newHistRun(t, opts, tracked)
			g := &histGen{r: r, alive: map[int32]bool{}, name: map[int32]string{}, truncates: true, noop: true, placeholders: true}
			var sent []Record
			for range 40 {
				var batch []Record
				for range 1 + r.IntN(12) {
					for _, c := range g.next() {
						rec := hr.record(c)
						batch = append(batch, rec)
						sent = append(sent, rec)
					}
				}
				if r.IntN(4) == 0 && len(sent) > 3 {
					// Debezium re-delivers after a connector restart: the last
					// events again, at new offsets.
					for _, old := range sent[len(sent)-1-r.IntN(3):] {
						batch = append(batch, hr.record(old.Change))
					}
				}
				hr.apply(batch, false)
				if r.IntN(5) == 0 {
					hr.apply(batch, true) // the same records again: below the txn
				}
				if r.IntN(6) == 0 {
					hr.reopen()
				}
			}
			require.Greater(t, hr.commits, 30)
		})
	}
}

// TestHistoryLateEvents delivers each key's updates and deletes late (a
// late update of a deleted key, a delete after the re-insert) and requires
// the history the events give in source order.
func TestHistoryLateEvents(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 43))
			hr := newHistRun(t, HistoryOptions{}, nil)
			g := &histGen{r: r, alive: map[int32]bool{}, name: map[int32]string{}}
			var stream []codecs.Change
			for range 150 {
				stream = append(stream, g.next()...)
			}
			// Move random updates and deletes later in the stream. (An insert
			// arriving after a delete of its key that preceded it in the
			// source is placed up to the key's next version: the history
			// table keeps no trace of a delete of an absent key, ADR 0046.)
			for range 40 {
				i := r.IntN(len(stream) - 1)
				if op := stream[i].Op; op != codecs.OpUpdate && op != codecs.OpDelete {
					continue
				}
				j := min(len(stream)-1, i+1+r.IntN(6))
				c := stream[i]
				copy(stream[i:j], stream[i+1:j+1])
				stream[j] = c
			}
			for len(stream) > 0 {
				n := min(len(stream), 1+r.IntN(10))
				var batch []Record
				for _, c := range stream[:n] {
					batch = append(batch, hr.record(c))
				}
				stream = stream[n:]
				if testing.Verbose() {
					for _, b := range batch {
						t.Logf("%c %v %v p%d/%d", b.Change.Op, b.Change.Key, b.Change.Pos.Hex()[16:20], b.Partition, b.Offset)
					}
				}
				hr.apply(batch, false)
			}
			require.Greater(t, hr.commits, 10)
		})
	}
}

// TestHistoryOracleWorkload applies dbzgen workloads with the shapes a
// source sends outside tests (primary-key changes as a delete and an insert
// and as Debezium's key update with its headers, late updates of deleted
// keys, re-deliveries), encoded and decoded as the consumer reads them, in
// random batches with replays and restarts, and compares the whole history
// table with the model after every commit.
func TestHistoryOracleWorkload(t *testing.T) {
	lateAcross := 0
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			recs, w, _ := workloadRecords(t, dbzgen.WorkloadOptions{Seed: seed, Keys: 15, Snapshot: seed%2 == 0, MaxTxEvents: 3,
				DeleteRatio: 0.2, KeyChangeRatio: 0.05, KeyUpdateRatio: 0.05, LateUpdate: 0.4, Redeliver: 0.1}, 600)
			c := w.Counts()
			require.Positive(t, c.KeyUpdates, "key updates")
			require.Greater(t, c.KeyChanges, c.KeyUpdates, "key changes as a delete and an insert")
			require.Positive(t, c.LateUpdates, "late updates of deleted keys")
			require.Positive(t, c.Redeliveries, "re-deliveries")
			r := rand.New(rand.NewPCG(seed, 47))
			hr := newHistRun(t, HistoryOptions{DeletionVectors: []*bool{nil, new(false)}[seed%2]}, nil)
			deleted := map[string]codecs.Position{} // by key, deletes of earlier batches
			for len(recs) > 0 {
				n := min(len(recs), 1+r.IntN(40))
				batch := recs[:n]
				recs = recs[n:]
				for _, rec := range batch {
					if p, ok := deleted[fmt.Sprint(rec.Change.Key)]; ok && rec.Change.Op == codecs.OpUpdate && rec.Change.Pos.Compare(p) < 0 {
						lateAcross++ // a late update in a later batch than its key's delete
					}
				}
				for _, rec := range batch {
					if rec.Change.Op == codecs.OpDelete {
						deleted[fmt.Sprint(rec.Change.Key)] = rec.Change.Pos
					}
				}
				hr.apply(batch, false)
				if r.IntN(5) == 0 {
					hr.apply(batch, true)
				}
				if r.IntN(6) == 0 {
					hr.reopen()
				}
			}
			require.Greater(t, hr.commits, 10)
			t.Logf("%d commits; counts %+v", hr.commits, c)
		})
	}
	require.Positive(t, lateAcross, "updates older than a delete of their key committed in an earlier batch")
	t.Logf("%d updates older than a delete of their key committed in an earlier batch", lateAcross)
}
