package cdcmodel_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
)

var (
	layout = &codecs.Layout{Name: "t.Value", Columns: []codecs.Column{
		{Name: "id", Type: codecs.Type{Kind: codecs.KindInteger}},
		{Name: "name", Type: codecs.Type{Kind: codecs.KindString}, Nullable: true},
		{Name: "notes", Type: codecs.Type{Kind: codecs.KindString}, Nullable: true},
	}}
	keyLayout = &codecs.Layout{Name: "t.Key", Columns: []codecs.Column{{Name: "id", Type: codecs.Type{Kind: codecs.KindInteger}}}}
	tp0       = cdcmodel.TopicPartition{Topic: "t", Partition: 0}
	tp1       = cdcmodel.TopicPartition{Topic: "t", Partition: 1}
)

func pos(n int) codecs.Position {
	var l codecs.LSN
	l[9] = byte(n)
	return codecs.Position{Commit: l, Change: l, Serial: 1}
}

// ev is a test event: notes "" is the unavailable placeholder.
type ev struct {
	op          codecs.Op
	id          int32
	pos         int
	name, notes string
	tp          cdcmodel.TopicPartition
	off         int64
}

func (e ev) record() cdcmodel.Record {
	if e.tp.Topic == "" {
		e.tp = tp0
	}
	c := codecs.Change{Op: e.op, Pos: pos(e.pos), CommitMillis: int64(e.pos)}
	if e.op != codecs.OpTruncate {
		c.Layout, c.KeyLayout, c.Key = layout, keyLayout, []any{e.id}
		c.Row = []any{e.id, e.name, e.notes}
		if e.notes == "" {
			c.Row[2], c.Unavailable = nil, []int{2}
		}
	}
	return cdcmodel.Record{TopicPartition: e.tp, Offset: e.off, Change: c}
}

// commit feeds the events and commits up to their offsets.
func commit(t *testing.T, m *cdcmodel.Model, evs ...ev) cdcmodel.Commit {
	t.Helper()
	upTo := map[cdcmodel.TopicPartition]int64{}
	for _, e := range evs {
		r := e.record()
		m.Feed(r)
		upTo[r.TopicPartition] = max(upTo[r.TopicPartition], r.Offset)
	}
	c, ok := m.Commit(upTo)
	require.True(t, ok)
	return c
}

// table renders the model's rows as id → name/notes/op/deleted.
func table(m *cdcmodel.Model) map[int32][4]any {
	out := map[int32][4]any{}
	for _, r := range m.Rows() {
		out[r["id"].(int32)] = [4]any{r["name"], r["notes"], r[cdcmodel.ColOp], r[cdcmodel.ColDeleted]}
	}
	return out
}

func kinds(c cdcmodel.Commit) map[string][]int32 {
	out := map[string][]int32{}
	for _, ch := range c.Changes {
		out[ch.Type] = append(out[ch.Type], ch.Row["id"].(int32))
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

const (
	opC = codecs.OpCreate
	opR = codecs.OpRead
	opU = codecs.OpUpdate
	opD = codecs.OpDelete
	opT = codecs.OpTruncate
)

func TestUnavailableTakesTheLatestEarlierImage(t *testing.T) {
	m := cdcmodel.New(cdcmodel.Options{})
	c := commit(t, m,
		ev{op: opR, id: 1, pos: 1, name: "a", notes: "lob", off: 0},
		ev{op: opU, id: 1, pos: 2, name: "a2", off: 1},
		ev{op: opU, id: 2, pos: 3, name: "b", off: 2}, // never seen: nothing to keep
	)
	require.Equal(t, map[int32][4]any{1: {"a2", "lob", "u", nil}, 2: {"b", nil, "u", nil}}, table(m))
	require.Equal(t, 1, c.Unresolved)
	require.Equal(t, map[string][]int32{cdcmodel.Insert: {1, 2}}, kinds(c))

	// A delete ends the chain; a re-insert starts a new one.
	c = commit(t, m,
		ev{op: opD, id: 1, pos: 4, name: "a2", notes: "lob", off: 3},
		ev{op: opU, id: 1, pos: 5, name: "ghost", off: 4},
		ev{op: opC, id: 1, pos: 6, name: "new", notes: "lob2", off: 5},
		ev{op: opU, id: 1, pos: 7, name: "new2", off: 6},
	)
	require.Equal(t, map[int32][4]any{1: {"new2", "lob2", "u", nil}, 2: {"b", nil, "u", nil}}, table(m))
	require.Equal(t, 1, c.Unresolved)
	require.Equal(t, map[string][]int32{cdcmodel.UpdatePreimage: {1}, cdcmodel.UpdatePostimage: {1}}, kinds(c))
}

func TestPositionGuard(t *testing.T) {
	m := cdcmodel.New(cdcmodel.Options{})
	commit(t, m, ev{op: opC, id: 1, pos: 5, name: "a", notes: "n", off: 0}, ev{op: opD, id: 2, pos: 6, name: "b", notes: "n", off: 1})
	c := commit(t, m,
		ev{op: opU, id: 1, pos: 4, name: "old", notes: "n", off: 2},            // below the row
		ev{op: opC, id: 2, pos: 6, name: "late", notes: "n", off: 3},           // at the delete
		ev{op: opU, id: 1, pos: 5, name: "dup", notes: "n", tp: tp1, off: 0},   // a duplicate
		ev{op: opC, id: 3, pos: 7, name: "c", notes: "n", tp: tp1, off: 1},     // new
		ev{op: opU, id: 3, pos: 7, name: "c-dup", notes: "n", tp: tp1, off: 2}, // first wins
	)
	require.Equal(t, map[int32][4]any{1: {"a", "n", "c", nil}, 3: {"c", "n", "c", nil}}, table(m))
	require.Equal(t, map[string][]int32{cdcmodel.Insert: {3}}, kinds(c))

	// Records at or below the committed offsets are replays.
	m.Feed(ev{op: opU, id: 1, pos: 9, name: "replayed", notes: "n", off: 2}.record())
	_, ok := m.Commit(map[cdcmodel.TopicPartition]int64{tp0: 3, tp1: 2})
	require.False(t, ok)
	require.Equal(t, "a", table(m)[1][0])
}

func TestTruncateKeepsLaterRows(t *testing.T) {
	m := cdcmodel.New(cdcmodel.Options{})
	commit(t, m, ev{op: opC, id: 1, pos: 1, name: "a", notes: "n", off: 0}, ev{op: opC, id: 2, pos: 2, name: "b", notes: "n", off: 1})
	// Key 3's insert at 5 arrives before the truncate at 3 from another partition.
	c := commit(t, m,
		ev{op: opC, id: 3, pos: 5, name: "c", notes: "n", off: 2},
		ev{op: opU, id: 2, pos: 4, name: "b2", notes: "n", off: 3},
		ev{op: opT, pos: 3, tp: tp1, off: 0},
		ev{op: opC, id: 1, pos: 2, name: "late", notes: "n", off: 4}, // below the truncate
	)
	require.Equal(t, map[int32][4]any{2: {"b2", "n", "u", nil}, 3: {"c", "n", "c", nil}}, table(m))
	// Key 2's stored row went with the truncate: a delete, then an insert.
	require.Equal(t, map[string][]int32{cdcmodel.Delete: {1, 2}, cdcmodel.Insert: {2, 3}}, kinds(c))
}

func TestSoftDelete(t *testing.T) {
	m := cdcmodel.New(cdcmodel.Options{SoftDelete: true})
	commit(t, m, ev{op: opC, id: 1, pos: 1, name: "a", notes: "n", off: 0})
	c := commit(t, m, ev{op: opD, id: 1, pos: 2, name: "a", notes: "n", off: 1}, ev{op: opD, id: 2, pos: 3, name: "x", notes: "m", off: 2})
	require.Equal(t, map[int32][4]any{1: {"a", "n", "d", true}, 2: {"x", "m", "d", true}}, table(m))
	require.Equal(t, map[string][]int32{cdcmodel.UpdatePreimage: {1}, cdcmodel.UpdatePostimage: {1}, cdcmodel.Insert: {2}}, kinds(c))
	c = commit(t, m, ev{op: opU, id: 1, pos: 4, name: "ghost", off: 3}, ev{op: opC, id: 2, pos: 5, name: "y", notes: "m2", off: 4}, ev{op: opU, id: 2, pos: 6, name: "y2", off: 5})
	require.Equal(t, map[int32][4]any{1: {"ghost", nil, "u", false}, 2: {"y2", "m2", "u", false}}, table(m))
	require.Equal(t, 1, c.Unresolved)
}

func TestNoTableNoCommit(t *testing.T) {
	m := cdcmodel.New(cdcmodel.Options{})
	m.Feed(ev{op: opT, pos: 3, off: 0}.record())
	_, ok := m.Commit(map[cdcmodel.TopicPartition]int64{tp0: 0})
	require.False(t, ok)
	// The truncate still holds back older events.
	c := commit(t, m, ev{op: opC, id: 1, pos: 2, name: "old", notes: "n", tp: tp1, off: 0}, ev{op: opC, id: 2, pos: 4, name: "new", notes: "n", tp: tp1, off: 1})
	require.Equal(t, map[int32][4]any{2: {"new", "n", "c", nil}}, table(m))
	require.Len(t, c.Changes, 1)
}
