package processor

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// TestJSONConverterTablesEqualAvro runs one workload through Kafka twice,
// written by the AvroConverter and by the JsonConverter, each into its own
// tables: the tables equal the workload model and each other, every
// column, type and comment.
func TestJSONConverterTablesEqualAvro(t *testing.T) {
	wo := dbzgen.WorkloadOptions{Seed: 40, Keys: 40, Snapshot: true, MaxTxEvents: 3, KeyChangeRatio: 0.05, Redeliver: 0.05}
	avro, js := newPipeline(t, wo), newPipeline(t, wo)
	js.json = true
	for _, pl := range []*pipeline{avro, js} {
		pl.start(pl.options("g"))
		pl.produce(600)
	}
	for _, pl := range []*pipeline{avro, js} {
		pl.waitCaughtUp()
		pl.requireModel()
	}
	for _, tb := range avro.tables {
		wantSchema, want := allRows(t, avro, tb)
		gotSchema, got := allRows(t, js, tb)
		require.Equal(t, wantSchema, gotSchema, "table %s", tb.Def().Name)
		require.NotEmpty(t, want)
		require.Equal(t, want, got, "table %s", tb.Def().Name)
	}
}

// allRows reads every column of the table's live rows, in sorted order.
func allRows(t *testing.T, pl *pipeline, tb *dbzgen.Table) ([]deltalog.StructField, []string) {
	t.Helper()
	ctx := t.Context()
	store := pl.store(tb)
	tbl, err := deltalog.Open(ctx, store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	var out []string
	for _, add := range snap.Files() {
		rows, err := datafile.Read(ctx, store, &add, snap.Schema(), datafile.ReadOptions{Properties: snap.Metadata().Configuration})
		require.NoError(t, err)
		for _, r := range rows {
			out = append(out, render(r))
		}
	}
	slices.Sort(out)
	return snap.Schema().Fields, out
}
