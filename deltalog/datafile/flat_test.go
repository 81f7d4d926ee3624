package datafile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// flatSchema has a column of every kind ReadFlat returns, all nullable.
func flatSchema() *deltalog.StructType {
	return &deltalog.StructType{Fields: []deltalog.StructField{
		field("b", deltalog.TypeByte, true), field("s", deltalog.TypeShort, true),
		field("i", deltalog.TypeInteger, true), field("d", deltalog.TypeDate, true),
		field("l", deltalog.TypeLong, true), field("str", deltalog.TypeString, true),
		field("bin", deltalog.TypeBinary, true), field("id", deltalog.TypeLong, false),
	}}
}

func flatRows(rng *rand.Rand, n int) [][]any {
	rows := make([][]any, n)
	for r := range rows {
		row := []any{int8(rng.Int32()), int16(rng.Int32()), rng.Int32(), rng.Int32N(30000), rng.Int64() - rng.Int64(),
			fmt.Sprintf("key %d é", rng.IntN(1000)), []byte{byte(r), 0, byte(r >> 8)}, int64(r)}
		for c := range 7 {
			if rng.IntN(5) == 0 {
				row[c] = nil
			}
		}
		if r%7 == 0 {
			row[5] = "" // empty, not null
		}
		rows[r] = row
	}
	return rows
}

// requireFlatMatchesRead checks ReadFlat of columns against ReadColumns of
// every physical row: the same values, as ReadFlat's kinds hold them.
func requireFlatMatchesRead(t testing.TB, s deltalog.Store, add *deltalog.Add, schema *deltalog.StructType, columns []string, opts ReadOptions) (ok bool) {
	t.Helper()
	cols, rows, ok, err := ReadFlat(t.Context(), s, add, schema, columns, opts)
	opts.DeletedRows = roaring64.New()
	want, wantErr := ReadColumns(t.Context(), s, add, schema, columns, opts)
	if err != nil {
		var cf *deltalog.CorruptFileError
		require.True(t, errors.As(err, &cf) && cf.Path == add.Path, "error does not name the file: %v", err)
		require.Error(t, wantErr, "ReadFlat refused what Read reads: %v", err)
		return false
	}
	if !ok {
		return false
	}
	require.NoError(t, wantErr, "ReadFlat read what Read refuses")
	require.EqualValues(t, len(want), rows)
	require.Len(t, cols, len(columns))
	require.Equal(t, cols, readFlatGroups(t, s, add, schema, columns, opts), "read a row group at a time")
	for r, row := range want {
		for c, v := range row {
			col := cols[c]
			null := col.Null != nil && col.Null[r]
			require.Equal(t, v == nil, null, "row %d column %s", r, columns[c])
			if null {
				continue
			}
			var got any
			switch col.Kind {
			case FlatInt:
				got = col.Ints[r]
			case FlatString:
				got = string(col.Bytes[r])
			case FlatBinary:
				got = col.Bytes[r]
			}
			switch x := v.(type) {
			case int8:
				v = int64(x)
			case int16:
				v = int64(x)
			case int32:
				v = int64(x)
			}
			require.Equal(t, v, got, "row %d column %s", r, columns[c])
		}
	}
	return true
}

// readFlatGroups reads columns through OpenFlat, a row group at a time,
// and joins the groups as ReadFlat returns them.
func readFlatGroups(t testing.TB, s deltalog.Store, add *deltalog.Add, schema *deltalog.StructType, columns []string, opts ReadOptions) []FlatColumn {
	t.Helper()
	f, ok, err := OpenFlat(t.Context(), s, add, schema, columns, opts)
	require.NoError(t, err)
	require.True(t, ok)
	out := make([]FlatColumn, len(columns))
	var next int64
	for g := range f.Groups() {
		cols, first, err := f.ReadGroup(t.Context(), g)
		require.NoError(t, err)
		require.Equal(t, next, first, "row group %d", g)
		next += int64(max(len(cols[0].Ints), len(cols[0].Bytes)))
		for c, col := range cols {
			out[c].Kind = col.Kind
			if col.Null != nil && out[c].Null == nil {
				out[c].Null = make([]bool, f.Rows())
			}
			if col.Null != nil {
				copy(out[c].Null[first:], col.Null)
			}
			if col.Kind == FlatInt {
				out[c].Ints = append(out[c].Ints, col.Ints...)
			} else {
				out[c].Bytes = append(out[c].Bytes, col.Bytes...)
			}
		}
	}
	require.Equal(t, f.Rows(), next)
	return out
}

// TestReadFlat compares ReadFlat with ReadColumns on files of every flat
// kind, with nulls, several row groups and pages, and a deletion vector
// (ReadFlat returns every physical row); and checks what it leaves to Read.
func TestReadFlat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	schema := flatSchema()
	all := []string{"b", "s", "i", "d", "l", "str", "bin", "id"}
	s := newStore()
	w, err := NewWriter(Options{Schema: schema, TargetFileSize: 1 << 30, RowGroupSize: 256 << 10})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), s, flatRows(rng, 30_000))
	require.NoError(t, err)
	require.Len(t, adds, 1)
	add := adds[0]
	require.Greater(t, len(openFile(t, s, add).RowGroups()), 1, "the file has several row groups")
	descs, err := deltalog.WriteDeletionVectors(t.Context(), s, "", []*roaring64.Bitmap{roaring64.BitmapOf(0, 7, 29_999)})
	require.NoError(t, err)
	withDV := add
	withDV.DeletionVector = &descs[0]

	for _, tc := range []struct {
		name    string
		add     deltalog.Add
		columns []string
	}{
		{"every kind", add, all},
		{"a key and a position", withDV, []string{"id", "str"}},
		{"one column twice", add, []string{"l", "l"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, requireFlatMatchesRead(t, s, &tc.add, schema, tc.columns, ReadOptions{}))
		})
	}

	mapped := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "Unit Price", Type: deltalog.TypeLong, Nullable: true, Metadata: map[string]any{
			deltalog.MetaColumnMappingID: int64(1), deltalog.MetaColumnMappingPhysicalName: "col-1"}},
	}}
	props := map[string]string{deltalog.PropColumnMappingMode: "name"}
	mw, err := NewWriter(Options{Schema: mapped, Properties: props})
	require.NoError(t, err)
	madds, err := mw.Write(t.Context(), s, [][]any{{int64(4)}, {nil}})
	require.NoError(t, err)
	t.Run("column mapping", func(t *testing.T) {
		require.True(t, requireFlatMatchesRead(t, s, &madds[0], mapped, []string{"Unit Price"}, ReadOptions{Properties: props}))
	})

	older := &deltalog.StructType{Fields: schema.Fields[:7]}
	ow, err := NewWriter(Options{Schema: older})
	require.NoError(t, err)
	oadds, err := ow.Write(t.Context(), s, [][]any{{nil, nil, nil, nil, int64(1), "a", nil}})
	require.NoError(t, err)
	nested := &deltalog.StructType{Fields: []deltalog.StructField{
		field("st", &deltalog.StructType{Fields: []deltalog.StructField{field("x", deltalog.TypeLong, true)}}, true),
	}}
	part := "7"
	partitioned := add
	partitioned.PartitionValues = map[string]*string{"id": &part}
	for _, tc := range []struct {
		name    string
		add     deltalog.Add
		schema  *deltalog.StructType
		columns []string
		opts    ReadOptions
	}{
		{"a double", add, &deltalog.StructType{Fields: []deltalog.StructField{field("l", deltalog.TypeDouble, true)}}, []string{"l"}, ReadOptions{}},
		{"a column the file lacks", oadds[0], schema, []string{"id"}, ReadOptions{}},
		{"a partition column", partitioned, schema, []string{"id", "str"}, ReadOptions{PartitionColumns: []string{"id"}}},
		{"a long read as a string", add, &deltalog.StructType{Fields: []deltalog.StructField{field("l", deltalog.TypeString, true)}}, []string{"l"}, ReadOptions{}},
		{"a struct", add, nested, []string{"st"}, ReadOptions{}},
	} {
		t.Run("left to Read: "+tc.name, func(t *testing.T) {
			_, _, ok, err := ReadFlat(t.Context(), s, &tc.add, tc.schema, tc.columns, tc.opts)
			require.NoError(t, err)
			require.False(t, ok)
		})
	}
}

// FuzzReadFlat feeds arbitrary bytes to ReadFlat: it must never panic, must
// name the file in its errors, and must agree with ReadColumns whenever it
// reads. Seeds are real files, whole and cut.
//
//	go test -run '^$' -fuzz FuzzReadFlat -fuzztime 60s ./deltalog/datafile
func FuzzReadFlat(f *testing.F) {
	const maxInput = 1 << 16
	schema := flatSchema()
	s := newStore()
	w, err := NewWriter(Options{Schema: schema, Properties: map[string]string{propCodec: "snappy"}})
	require.NoError(f, err)
	adds, err := w.Write(f.Context(), s, flatRows(rand.New(rand.NewPCG(3, 4)), 40))
	require.NoError(f, err)
	data := fileBytes(f, s, adds[0].Path)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add(data[len(data)/3:])
	f.Add([]byte("PAR1PAR1"))
	columns := []string{"id", "str", "b", "bin", "d"}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput || claimsTooMuch(data) {
			return
		}
		s := newStore()
		require.NoError(t, s.Put(t.Context(), "f.parquet", data))
		requireFlatMatchesRead(t, s, &deltalog.Add{Path: "f.parquet", Size: int64(len(data))}, schema, columns, ReadOptions{})
	})
}
