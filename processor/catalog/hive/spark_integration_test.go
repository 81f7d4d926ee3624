//go:build integration

package hive_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

var (
	ordersV1 = &codecs.Layout{SchemaID: 1, Name: "sales.dbo.orders.Value", Columns: []codecs.Column{
		{Name: "id", Type: codecs.Type{Kind: codecs.KindInteger}},
		{Name: "region", Type: codecs.Type{Kind: codecs.KindString}, Nullable: true},
		{Name: "qty", Type: codecs.Type{Kind: codecs.KindLong}, Nullable: true},
	}}
	// ordersV2 adds a column: the source's schema evolved.
	ordersV2 = &codecs.Layout{SchemaID: 3, Name: "sales.dbo.orders.Value", Columns: append(append([]codecs.Column{}, ordersV1.Columns...),
		codecs.Column{Name: "note", Type: codecs.Type{Kind: codecs.KindString}, Nullable: true})}
	ordersKey = &codecs.Layout{SchemaID: 2, Name: "sales.dbo.orders.Key", Columns: []codecs.Column{{Name: "id", Type: codecs.Type{Kind: codecs.KindInteger}}}}
	ordersID  = codecs.TableID{Database: "sales", Schema: "dbo", Table: "orders"}
	ordersTP  = cdctable.TopicPartition{Topic: "sales.dbo.orders", Partition: 0}
)

// orderBatch makes a batch of changes to the orders table; each row is
// [id, region, qty] or, with layout ordersV2, [id, region, qty, note].
func orderBatch(layout *codecs.Layout, op codecs.Op, first int64, rows ...[]any) merge.Batch {
	b := merge.Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
	for i, r := range rows {
		off := first + int64(i)
		var l codecs.LSN
		l[8], l[9] = byte(off>>8), byte(off)
		b.Records = append(b.Records, merge.Record{TopicPartition: ordersTP, Offset: off, Change: codecs.Change{
			Op: op, Table: ordersID, Pos: codecs.Position{Commit: l, Change: l, Serial: 1},
			CommitMillis: 1_700_000_000_000 + off,
			Layout:       layout, KeyLayout: ordersKey, KeyIndex: []int{0},
			Key: []any{r[0]}, Row: r,
		}})
		b.LastOffsets[ordersTP] = off
	}
	return b
}

// A Delta table written by the merge sink and registered through the
// client reads by name in Spark SQL with the same metastore: its rows equal
// what delta-rs reads at its path, DESCRIBE HISTORY lists its versions, and
// a column added by schema evolution shows in the catalog and in Spark.
func TestSparkReadsRegisteredTableByName(t *testing.T) {
	uri := fulltier.HiveMetastore(t)
	c := newCatalog(t, uri)
	db := newDatabase(t, c)
	dir := t.TempDir()
	store, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	sink, err := merge.Open(t.Context(), merge.Options{Store: store, TableName: "orders", PartitionBy: []string{"region"}})
	require.NoError(t, err)
	defer sink.Close() //nolint:errcheck // the test's table is discarded
	apply := func(b merge.Batch) {
		t.Helper()
		_, err := sink.Apply(t.Context(), b)
		require.NoError(t, err)
	}
	entry := func() catalog.Entry {
		snap := sink.Snapshot()
		return catalog.Entry{
			Name:             catalog.Name{Schema: db, Table: "orders"},
			Location:         "file://" + dir,
			Schema:           snap.Schema(),
			PartitionColumns: snap.Metadata().PartitionColumns,
			Description:      "sales.dbo.orders",
		}
	}

	apply(orderBatch(ordersV1, codecs.OpCreate, 0, []any{int32(1), "eu", int64(10)}, []any{int32(2), "us", int64(20)}, []any{int32(3), nil, int64(30)}))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	require.NoError(t, c.Create(ctx, entry()))
	apply(orderBatch(ordersV1, codecs.OpUpdate, 3, []any{int32(2), "eu", int64(21)}))
	apply(orderBatch(ordersV1, codecs.OpDelete, 4, []any{int32(3), nil, int64(30)}))

	// The source adds a column; the table follows and so does its entry.
	apply(orderBatch(ordersV2, codecs.OpCreate, 5, []any{int32(4), "us", int64(40), "gift"}))
	e := entry()
	require.NotNil(t, e.Schema.Fields)
	got, err := c.Lookup(ctx, e.Name)
	require.NoError(t, err)
	require.NotEqual(t, e.Schema, got.Schema, "the entry still has the old schema")
	require.NoError(t, c.Update(ctx, e))
	got, err = c.Lookup(ctx, e.Name)
	require.NoError(t, err)
	require.Equal(t, e, got)
	_, hasNote := got.Schema.Field("note")
	require.True(t, hasNote)
	last := sink.Version()

	table := db + ".orders"
	res := fulltier.ReadHive(t, uri,
		fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: dir, Statements: []string{"SELECT * FROM " + table}},
		fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: dir, Statements: []string{"DESCRIBE HISTORY " + table}},
		fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: dir, Statements: []string{"DESCRIBE TABLE EXTENDED " + table}},
	)
	for _, r := range res {
		require.Empty(t, r.Err)
	}
	want := fulltier.ReadTable(t, fulltier.DeltaRS, dir, fulltier.ReadOptions{})
	require.Len(t, want.Rows, 3)
	require.Equal(t, want.Rows, res[0].Rows, "Spark by name and delta-rs by path disagree")
	require.Equal(t, want.Columns(), res[0].Columns())

	var versions []int64
	for _, row := range res[1].Rows {
		v, err := row["version"].(json.Number).Int64()
		require.NoError(t, err)
		versions = append(versions, v)
	}
	require.ElementsMatch(t, seq(last+1), versions, "DESCRIBE HISTORY %s", table)

	described := map[string]any{}
	for _, row := range res[2].Rows {
		described[row["col_name"].(string)] = row["data_type"]
	}
	require.Equal(t, "delta", described["Provider"], "DESCRIBE TABLE EXTENDED %s: %v", table, described)
	require.Equal(t, "string", described["note"])
}

func seq(n int64) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i)
	}
	return s
}
