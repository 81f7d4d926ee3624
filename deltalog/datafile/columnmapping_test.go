package datafile

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

func mapped(name string, t deltalog.Type, id int, phys string) deltalog.StructField {
	f := field(name, t, true)
	f.Metadata[metaColumnID] = json.Number(itoa(id))
	f.Metadata[metaPhysicalName] = phys
	return f
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func mappedSchema() *deltalog.StructType {
	inner := &deltalog.StructType{Fields: []deltalog.StructField{mapped("a b", deltalog.TypeLong, 4, "col-inner")}}
	return &deltalog.StructType{Fields: []deltalog.StructField{
		mapped("Unit Price", deltalog.DecimalType{Precision: 10, Scale: 2}, 1, "col-11111111-aaaa"),
		mapped("Qty (kg)", deltalog.TypeDouble, 2, "col-22222222-bbbb"),
		mapped("s", inner, 3, "col-33333333-cccc"),
		mapped("region", deltalog.TypeString, 5, "col-55555555-eeee"),
	}}
}

func TestColumnMappingWrite(t *testing.T) {
	props := map[string]string{propMappingMode: "name"}
	opts := Options{Schema: mappedSchema(), PartitionColumns: []string{"region"}, Properties: props}
	rows := [][]any{{decimal128.FromInt64(1999), 2.5, []any{int64(7)}, "eu west"}}
	adds, got, s := writeRead(t, opts, rows)
	require.Equal(t, rows, got)
	require.Len(t, adds, 1)
	a := adds[0]
	require.Regexp(t, `^[A-Za-z0-9]{2}/part-00000-[0-9a-f-]{36}\.c000\.zstd\.parquet$`, a.Path, "random prefix dirs, not Hive dirs")
	require.Equal(t, map[string]*string{"col-55555555-eeee": ptr("eu west")}, a.PartitionValues)
	require.JSONEq(t, `{"numRecords":1,
		"minValues":{"col-11111111-aaaa":19.99,"col-22222222-bbbb":2.5,"col-33333333-cccc":{"col-inner":7}},
		"maxValues":{"col-11111111-aaaa":19.99,"col-22222222-bbbb":2.5,"col-33333333-cccc":{"col-inner":7}},
		"nullCount":{"col-11111111-aaaa":0,"col-22222222-bbbb":0,"col-33333333-cccc":{"col-inner":0}}}`, a.Stats)

	f := openFile(t, s, a)
	cols := f.Root().Columns()
	require.Len(t, cols, 3)
	for i, want := range []struct {
		name string
		id   int
	}{{"col-11111111-aaaa", 1}, {"col-22222222-bbbb", 2}, {"col-33333333-cccc", 3}} {
		require.Equal(t, want.name, cols[i].Name())
		require.Equal(t, want.id, cols[i].ID())
	}
	inner := cols[2].Columns()
	require.Equal(t, "col-inner", inner[0].Name())
	require.Equal(t, 4, inner[0].ID())
}

func ptr(s string) *string { return &s }

func TestColumnMappingReadAfterSchemaChanges(t *testing.T) {
	props := map[string]string{propMappingMode: "name"}
	opts := Options{Schema: mappedSchema(), Properties: props}
	rows := [][]any{{decimal128.FromInt64(5), 1.0, nil, "x"}}
	s := newStore()
	w, err := NewWriter(opts)
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), s, rows)
	require.NoError(t, err)

	// Rename "Qty (kg)" and add a column: same physical names, new logical ones.
	renamed := mappedSchema()
	renamed.Fields[1].Name = "Quantity"
	renamed.Fields = append(renamed.Fields, mapped("added", deltalog.TypeLong, 6, "col-66666666-ffff"))
	got, err := Read(t.Context(), s, &adds[0], renamed, ReadOptions{Properties: props})
	require.NoError(t, err)
	require.Equal(t, [][]any{{decimal128.FromInt64(5), 1.0, nil, "x", nil}}, got)

	// Id mode resolves by field id even when physical names differ.
	byID := mappedSchema()
	byID.Fields[0].Metadata[metaPhysicalName] = "other"
	got, err = ReadColumns(t.Context(), s, &adds[0], byID, []string{"Unit Price"}, ReadOptions{Properties: map[string]string{propMappingMode: "id"}})
	require.NoError(t, err)
	require.Equal(t, [][]any{{decimal128.FromInt64(5)}}, got)

	// Without column mapping the logical names do not exist in the file: all null.
	got, err = ReadColumns(t.Context(), s, &adds[0], mappedSchema(), []string{"Unit Price"}, ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, [][]any{{nil}}, got)
}
