package datafile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestNewWriterRejectsBadOptions(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("st", &deltalog.StructType{Fields: []deltalog.StructField{field("x", deltalog.TypeLong, true)}}, true),
	}}
	cases := []struct {
		name string
		opts Options
	}{
		{"no schema", Options{}},
		{"unknown partition column", Options{Schema: schema, PartitionColumns: []string{"nope"}}},
		{"nested partition column", Options{Schema: schema, PartitionColumns: []string{"st"}}},
		{"twice", Options{Schema: schema, PartitionColumns: []string{"id", "ID"}}},
		{"no data column", Options{Schema: &deltalog.StructType{Fields: []deltalog.StructField{field("p", deltalog.TypeString, true)}}, PartitionColumns: []string{"p"}}},
		{"bad indexed cols", Options{Schema: schema, Properties: map[string]string{propNumIndexedCols: "lots"}}},
		{"bad mapping mode", Options{Schema: schema, Properties: map[string]string{propMappingMode: "maybe"}}},
		{"bad decimal", Options{Schema: &deltalog.StructType{Fields: []deltalog.StructField{field("d", deltalog.DecimalType{Precision: 40, Scale: 2}, true)}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewWriter(tc.opts)
			require.Error(t, err)
		})
	}
}

func TestAddFields(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_123)
	schema := &deltalog.StructType{Fields: []deltalog.StructField{field("id", deltalog.TypeLong, false)}}
	adds, _, _ := writeRead(t, Options{Schema: schema, NoDataChange: true, Now: func() time.Time { return now }}, [][]any{{int64(1)}})
	require.False(t, adds[0].DataChange)
	require.Equal(t, now.UnixMilli(), adds[0].ModificationTime)
	require.Equal(t, map[string]*string{}, adds[0].PartitionValues, "unpartitioned adds carry an empty map, not null")
	require.Regexp(t, `^part-00000-[0-9a-f-]{36}\.c000\.zstd\.parquet$`, adds[0].Path)
}

func TestWriterReusableAcrossCalls(t *testing.T) {
	w, err := NewWriter(Options{Schema: idSchema()})
	require.NoError(t, err)
	s := newStore()
	a1, err := w.Write(t.Context(), s, idRows(3))
	require.NoError(t, err)
	a2, err := w.Write(t.Context(), s, idRows(5)[3:])
	require.NoError(t, err)
	require.NotEqual(t, a1[0].Path, a2[0].Path)
	got, err := Read(t.Context(), s, &a2[0], idSchema(), ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, idRows(5)[3:], got)
	require.JSONEq(t, `{"numRecords":2,"minValues":{"id":3,"s":"some text that takes a few bytes"},"maxValues":{"id":4,"s":"some text that takes a few bytes􏿿"},"nullCount":{"id":0,"s":0}}`, a2[0].Stats, "stats reset between files")
}

func TestDirAndNamePrefix(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{field("id", deltalog.TypeLong, false), field("p", deltalog.TypeString, true)}}
	adds, got, _ := writeRead(t, Options{Schema: schema, PartitionColumns: []string{"p"}, Dir: "_change_data/", NamePrefix: "cdc"}, [][]any{{int64(1), "a"}})
	require.Regexp(t, `^_change_data/p=a/cdc-00000-[0-9a-f-]{36}\.c000\.zstd\.parquet$`, adds[0].Path)
	require.Equal(t, [][]any{{int64(1), "a"}}, got)
	for _, bad := range []Options{{Schema: schema, Dir: "../x"}, {Schema: schema, NamePrefix: "a b"}, {Schema: schema, Dir: "a/./b"}} {
		_, err := NewWriter(bad)
		require.ErrorIs(t, err, ErrSchema)
	}
}

func TestWriterRecoversAfterBadRow(t *testing.T) {
	w, err := NewWriter(Options{Schema: idSchema()})
	require.NoError(t, err)
	s := newStore()
	bad := idRows(3000)
	bad[2500][0] = nil
	_, err = w.Write(t.Context(), s, bad)
	require.ErrorIs(t, err, ErrNull)
	adds, err := w.Write(t.Context(), s, idRows(2))
	require.NoError(t, err)
	got, err := Read(t.Context(), s, &adds[0], idSchema(), ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, idRows(2), got, "no rows of the failed write leak into the next file")
	st, _, err := deltalog.ParseStats(adds[0].Stats)
	require.NoError(t, err)
	require.Equal(t, int64(2), st.NumRecords)
}

// TestWriterStatistics: with page header statistics off, a file's row
// group still carries each column's bounds and null count, and its column
// index the page bounds, which readers prune with.
func TestWriterStatistics(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{field("id", deltalog.TypeLong, false), field("name", deltalog.TypeString, true)}}
	adds, _, store := writeRead(t, Options{Schema: schema}, [][]any{{int64(3), "c"}, {int64(1), nil}, {int64(2), "a"}})
	require.Len(t, adds, 1)
	f := openFile(t, store, adds[0])
	chunks := f.Metadata().RowGroups[0].Columns
	require.Len(t, chunks, 2)
	id, name := chunks[0].MetaData.Statistics, chunks[1].MetaData.Statistics
	require.Equal(t, []byte{1, 0, 0, 0, 0, 0, 0, 0}, id.MinValue)
	require.Equal(t, []byte{3, 0, 0, 0, 0, 0, 0, 0}, id.MaxValue)
	require.Equal(t, []byte("a"), name.MinValue)
	require.Equal(t, []byte("c"), name.MaxValue)
	require.EqualValues(t, 1, name.NullCount)
	for i, col := range f.RowGroups()[0].ColumnChunks() {
		ci, err := col.ColumnIndex()
		require.NoError(t, err, "column %d", i)
		require.Equal(t, 1, ci.NumPages())
		require.Equal(t, chunks[i].MetaData.Statistics.MaxValue, ci.MaxValue(0).Bytes(), "column %d", i)
	}
}
