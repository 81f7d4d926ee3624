package merge

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

var (
	kInt = codecs.Type{Kind: codecs.KindInteger}
	kStr = codecs.Type{Kind: codecs.KindString}

	// itemsLayout is a hand-built row layout: a key, a name, a decimal
	// column whose name needs column mapping, and a LOB that updates may
	// leave unavailable.
	itemsLayout = &codecs.Layout{SchemaID: 1, Name: "sales.dbo.items.Value", Columns: []codecs.Column{
		{Name: "id", Type: kInt, Comment: "item id"},
		{Name: "name", Type: kStr, Nullable: true},
		{Name: "Unit Price", Type: codecs.DecimalType(10, 2), Nullable: true, SourceType: "DECIMAL(10,2)"},
		{Name: "notes", Type: kStr, Nullable: true},
	}}
	itemsKey = &codecs.Layout{SchemaID: 2, Name: "sales.dbo.items.Key", Columns: []codecs.Column{{Name: "id", Type: kInt}}}
	itemsID  = codecs.TableID{Database: "sales", Schema: "dbo", Table: "items"}
)

// pos makes a streaming position ordered by n.
func pos(n int) codecs.Position {
	var l codecs.LSN
	l[8], l[9] = byte(n>>8), byte(n)
	return codecs.Position{Commit: l, Change: l, Serial: 1}
}

// ev describes one test event of the items table.
type ev struct {
	op          codecs.Op
	id          int32
	pos         int
	name        string
	price       int64 // cents
	notes       string
	unavailable bool // notes not carried
	part        int32
	offset      int64
}

func (e ev) record() Record {
	c := codecs.Change{Op: e.op, Table: itemsID, Pos: pos(e.pos), CommitMillis: 1_700_000_000_000 + int64(e.pos)}
	if e.op != codecs.OpTruncate {
		c.Layout, c.KeyLayout, c.KeyIndex = itemsLayout, itemsKey, []int{0}
		c.Key = []any{e.id}
		c.Row = []any{e.id, e.name, decimal128.FromInt64(e.price), e.notes}
		if e.unavailable {
			c.Row[3] = nil
			c.Unavailable = []int{3}
		}
	}
	return Record{TopicPartition: cdctable.TopicPartition{Topic: itemsTopic, Partition: e.part}, Offset: e.offset, Change: c}
}

// itemsTopic is the topic of ev's records.
const itemsTopic = "sales.dbo.items"

func batchOf(evs ...ev) Batch {
	b := Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
	for _, e := range evs {
		r := e.record()
		b.Records = append(b.Records, r)
		if r.Offset > b.LastOffsets[r.TopicPartition] {
			b.LastOffsets[r.TopicPartition] = r.Offset
		}
	}
	return b
}

// item is a row of the items table as read back.
type item struct {
	name, notes string
	price       int64
	pos         string
	op          string
	deleted     bool
}

// readItems reads the live rows of the table with deltalog and datafile,
// independently of the Sink's index.
func readItems(t *testing.T, store deltalog.Store) map[int32]item {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	meta := snap.Metadata()
	out := map[int32]item{}
	for _, add := range snap.Files() {
		rows, err := datafile.Read(t.Context(), store, &add, snap.Schema(), datafile.ReadOptions{Properties: meta.Configuration})
		require.NoError(t, err)
		for _, r := range rows {
			get := func(name string) any {
				for i, f := range snap.Schema().Fields {
					if f.Name == name {
						return r[i]
					}
				}
				t.Fatalf("no column %s", name)
				return nil
			}
			id := get("id").(int32)
			_, dup := out[id]
			require.False(t, dup, "key %d stored twice", id)
			it := item{pos: get(cdctable.ColPosition).(string), op: get(cdctable.ColOp).(string)}
			it.name, _ = get("name").(string)
			it.notes, _ = get("notes").(string)
			if d, ok := get("Unit Price").(decimal128.Num); ok {
				it.price = d.Big().Int64()
			}
			if _, ok := snap.Schema().Field(cdctable.ColDeleted); ok {
				it.deleted = get(cdctable.ColDeleted).(bool)
			}
			out[id] = it
		}
	}
	return out
}

// itemNames is each stored item's name, by id.
func itemNames(t *testing.T, store deltalog.Store) map[int32]string {
	t.Helper()
	out := map[int32]string{}
	for id, it := range readItems(t, store) {
		out[id] = it.name
	}
	return out
}

func newTestSink(t *testing.T, store deltalog.Store, mode Mode, del DeleteMode) *Sink {
	t.Helper()
	s, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: mode, DeleteMode: del})
	require.NoError(t, err)
	return s
}

func newMemStore() *memstore.Store { return memstore.New(memstore.Options{}) }

// newFaultStore returns a memory store behind a wrapper that injects faults.
func newFaultStore() *faultstore.Store { return faultstore.Wrap(newMemStore()) }

// applyMixedBatches applies six batches of 40 random events over 60 keys
// (inserts, updates, deletes, updates with an unavailable LOB) and returns
// the last offset.
func applyMixedBatches(t *testing.T, s *Sink) int64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	p, off := 0, int64(-1)
	for batch := range 6 {
		var evs []ev
		for range 40 {
			p++
			off++
			e := ev{op: opU, id: int32(rng.IntN(60)), pos: p, name: fmt.Sprintf("n%d-%d", batch, p), price: int64(rng.IntN(100000)) - 500, notes: "lob " + strconv.Itoa(p), offset: off}
			switch x := rng.IntN(10); {
			case batch == 0 || x < 2:
				e.op = opC
			case x < 3:
				e.op = opD
			case x < 5:
				e.unavailable = true
			}
			evs = append(evs, e)
		}
		_, err := s.Apply(t.Context(), batchOf(evs...))
		require.NoError(t, err)
	}
	return off
}
