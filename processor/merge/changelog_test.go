package merge

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

// readLog reads the change log's rows as "topic/partition/offset op id name
// notes unavailable", sorted.
func readLog(t *testing.T, store deltalog.Store) []string {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	meta, schema := snap.Metadata(), snap.Schema()
	idx := func(name string) int {
		return slices.IndexFunc(schema.Fields, func(f deltalog.StructField) bool { return f.Name == name })
	}
	var out []string
	for _, f := range snap.Files() {
		rows, err := datafile.Read(t.Context(), store, &f, schema, datafile.ReadOptions{Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns})
		require.NoError(t, err)
		for _, r := range rows {
			extra := ""
			if i := idx("extra"); i >= 0 {
				extra = fmt.Sprintf(" extra=%v", r[i])
			}
			out = append(out, fmt.Sprintf("%v/%v/%v %v id=%v name=%v notes=%v unavailable=%v%s",
				r[idx(LogKafkaTopic)], r[idx(LogKafkaPart)], r[idx(LogKafkaOffset)], r[idx(LogOp)], r[idx("id")], r[idx("name")], r[idx("notes")], r[idx(LogUnavailable)], extra))
		}
	}
	slices.Sort(out)
	return out
}

// TestChangeLog: every event is logged once, replays included, with its
// coordinates; a placeholder is NULL and named; a new source column is
// appended to the log's schema.
func TestChangeLog(t *testing.T) {
	store := newMemStore()
	l, err := OpenChangeLog(t.Context(), ChangeLogOptions{Store: store, TableName: "sales/dbo/items_changes"})
	require.NoError(t, err)
	b := batchOf(ev{op: opC, id: 1, pos: 1, name: "a", notes: "n1", offset: 1}, ev{op: opU, id: 1, pos: 2, name: "b", unavailable: true, offset: 2},
		ev{op: opD, id: 2, pos: 3, name: "gone", offset: 5, part: 1})
	v, err := l.Append(t.Context(), b)
	require.NoError(t, err)
	require.EqualValues(t, 0, v)
	v, err = l.Append(t.Context(), b)
	require.NoError(t, err)
	require.EqualValues(t, -1, v, "a replay writes nothing")

	// A new column in the source.
	wide := &codecs.Layout{SchemaID: 9, Name: itemsLayout.Name, Columns: append(slices.Clone(itemsLayout.Columns), codecs.Column{Name: "extra", Type: kStr, Nullable: true})}
	r := ev{op: opU, id: 1, pos: 4, name: "c", notes: "n2", offset: 3}.record()
	r.Change.Layout = wide
	r.Change.Row = append(r.Change.Row, "x")
	_, err = l.Append(t.Context(), Batch{Records: append(slices.Clone(b.Records), r), LastOffsets: map[TopicPartition]int64{r.TopicPartition: 3}})
	require.NoError(t, err)

	pos, err := l.Positions(t.Context())
	require.NoError(t, err)
	require.Equal(t, map[TopicPartition]int64{{Topic: "sales.dbo.items", Partition: 0}: 3, {Topic: "sales.dbo.items", Partition: 1}: 5}, pos)
	require.Equal(t, []string{
		"sales.dbo.items/0/1 c id=1 name=a notes=n1 unavailable=<nil> extra=<nil>",
		"sales.dbo.items/0/2 u id=1 name=b notes=<nil> unavailable=notes extra=<nil>",
		"sales.dbo.items/0/3 u id=1 name=c notes=n2 unavailable=<nil> extra=x",
		"sales.dbo.items/1/5 d id=2 name=gone notes= unavailable=<nil> extra=<nil>",
	}, readLog(t, store))

	// A column whose type changes cannot be logged in place.
	narrow := &codecs.Layout{SchemaID: 10, Name: itemsLayout.Name, Columns: slices.Clone(wide.Columns)}
	narrow.Columns[4].Type = kInt
	r = ev{op: opU, id: 1, pos: 5, offset: 4}.record()
	r.Change.Layout, r.Change.Row = narrow, append(r.Change.Row, int32(1))
	_, err = l.Append(t.Context(), Batch{Records: []Record{r}, LastOffsets: map[TopicPartition]int64{r.TopicPartition: 4}})
	var se *SchemaError
	require.ErrorAs(t, err, &se)
}
