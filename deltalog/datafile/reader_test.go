package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func idSchema() *deltalog.StructType {
	return &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("s", deltalog.TypeString, true),
	}}
}

func idRows(n int) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int64(i), "some text that takes a few bytes " + string(rune('a'+i%26))}
	}
	return rows
}

func TestTargetFileSizeSplits(t *testing.T) {
	rows := idRows(20000)
	opts := Options{Schema: idSchema(), TargetFileSize: 64 << 10, RowGroupSize: 16 << 10, Properties: map[string]string{propCodec: "uncompressed"}}
	adds, got, s := writeRead(t, opts, rows)
	require.Greater(t, len(adds), 3)
	require.Equal(t, rows, got, "files hold the rows in order, none lost or repeated")
	var total int64
	for i, a := range adds {
		st, ok, err := deltalog.ParseStats(a.Stats)
		require.NoError(t, err)
		require.True(t, ok)
		total += st.NumRecords
		require.Regexp(t, fmt.Sprintf(`^part-%05d-`, i), a.Path)
		f := openFile(t, s, a)
		if i < len(adds)-1 {
			require.Greater(t, len(f.RowGroups()), 1, "row group size splits each full file")
		}
		require.Less(t, a.Size, int64(2*opts.TargetFileSize))
	}
	require.Equal(t, int64(len(rows)), total)
}

func TestEmptyWriteMakesNoRows(t *testing.T) {
	adds, got, _ := writeRead(t, Options{Schema: idSchema()}, nil)
	require.Len(t, adds, 1, "an empty write still yields one (empty) file")
	require.Empty(t, got)
	require.JSONEq(t, `{"numRecords":0,"nullCount":{"id":0,"s":0}}`, adds[0].Stats)
}

func TestReadAppliesDeletedRows(t *testing.T) {
	rows := idRows(10)
	s := newStore()
	w, err := NewWriter(Options{Schema: idSchema()})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), s, rows)
	require.NoError(t, err)
	got, err := ReadColumns(t.Context(), s, &adds[0], idSchema(), []string{"id"}, ReadOptions{DeletedRows: roaring64.BitmapOf(0, 3, 9, 100)})
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(1)}, {int64(2)}, {int64(4)}, {int64(5)}, {int64(6)}, {int64(7)}, {int64(8)}}, got)
}

// A read that keeps a few rows of a file (it skips converting the others'
// values) returns what a whole read does for them, in flat, nullable and
// repeated columns alike, across pages and row groups.
func TestReadOfFewRowsMatchesWholeRead(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("s", deltalog.TypeString, true),
		field("list", &deltalog.ArrayType{ElementType: deltalog.TypeInteger}, true),
		field("d", deltalog.TypeDouble, true),
	}}
	rows := make([][]any, 30000)
	for i := range rows {
		rows[i] = []any{int64(i), fmt.Sprintf("value %d", i), nil, nil}
		if i%3 == 0 {
			rows[i][1] = nil
		}
		if i%4 != 0 {
			rows[i][2] = []any{int32(i), int32(-i)}[:i%3]
		}
		if i%5 != 0 {
			rows[i][3] = float64(i) / 2
		}
	}
	s := newStore()
	w, err := NewWriter(Options{Schema: schema, RowGroupSize: 64 << 10})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), s, rows)
	require.NoError(t, err)
	require.Len(t, adds, 1)
	require.Greater(t, len(openFile(t, s, adds[0]).RowGroups()), 1)
	all, err := Read(t.Context(), s, &adds[0], schema, ReadOptions{DeletedRows: roaring64.New()})
	require.NoError(t, err)
	require.Len(t, all, len(rows))
	for _, keep := range [][]uint64{{0}, {1, 2, 3, 29999}, {7, 4096, 4097, 15000, 20001}, {}} {
		deleted := roaring64.New()
		deleted.AddRange(0, uint64(len(rows)))
		var want [][]any
		for _, r := range keep {
			deleted.Remove(r)
			want = append(want, all[r])
		}
		got, err := Read(t.Context(), s, &adds[0], schema, ReadOptions{DeletedRows: deleted})
		require.NoError(t, err)
		if len(want) == 0 {
			require.Empty(t, got)
			continue
		}
		require.Equal(t, want, got, "rows %v", keep)
	}
}

func TestReadErrorsNameTheFile(t *testing.T) {
	s := newStore()
	w, err := NewWriter(Options{Schema: idSchema()})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), s, idRows(100))
	require.NoError(t, err)
	good := fileBytes(t, s, adds[0].Path)

	cases := []struct {
		name string
		data []byte
	}{
		{"empty", []byte{}},
		{"truncated", good[:len(good)/2]},
		{"no footer", good[:len(good)-8]},
		{"garbage", bytes.Repeat([]byte("PAR1"), 64)},
		{"flipped page bytes", flip(good, 40)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, s.Put(t.Context(), "bad.parquet", tc.data))
			_, err := Read(t.Context(), s, &deltalog.Add{Path: "bad.parquet"}, idSchema(), ReadOptions{})
			if tc.name == "flipped page bytes" && err == nil {
				return // a flip inside a value can still decode; the point is no panic
			}
			var cf *deltalog.CorruptFileError
			require.ErrorAs(t, err, &cf)
			require.Equal(t, "bad.parquet", cf.Path)
		})
	}
	t.Run("missing", func(t *testing.T) {
		_, err := Read(t.Context(), s, &deltalog.Add{Path: "gone%20away.parquet"}, idSchema(), ReadOptions{})
		var cf *deltalog.CorruptFileError
		require.ErrorAs(t, err, &cf)
		require.Equal(t, "gone away.parquet", cf.Path)
		require.ErrorIs(t, err, deltalog.ErrNotExist)
	})
	t.Run("type mismatch", func(t *testing.T) {
		other := &deltalog.StructType{Fields: []deltalog.StructField{field("id", deltalog.TypeString, false)}}
		_, err := Read(t.Context(), s, &adds[0], other, ReadOptions{})
		require.ErrorIs(t, err, ErrSchema)
	})
	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := Read(ctx, s, &adds[0], idSchema(), ReadOptions{})
		require.True(t, errors.Is(err, context.Canceled), "got %v", err)
	})
}

func fileBytes(t testing.TB, s deltalog.Store, key string) []byte {
	t.Helper()
	rc, err := s.Get(t.Context(), key)
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return b
}

func flip(b []byte, at int) []byte {
	out := append([]byte{}, b...)
	for i := at; i < at+16 && i < len(out); i++ {
		out[i] ^= 0xff
	}
	return out
}

func TestWriteCanceled(t *testing.T) {
	w, err := NewWriter(Options{Schema: idSchema()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = w.Write(ctx, newStore(), idRows(10))
	require.ErrorIs(t, err, context.Canceled)
}

func TestReadAppliesDeletionVector(t *testing.T) {
	s := newStore()
	w, err := NewWriter(Options{Schema: idSchema()})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), s, idRows(6))
	require.NoError(t, err)
	dvs, err := deltalog.WriteDeletionVectors(t.Context(), s, "ab", []*roaring64.Bitmap{roaring64.BitmapOf(1, 4)})
	require.NoError(t, err)
	add := adds[0]
	add.DeletionVector = &dvs[0]
	got, err := ReadColumns(t.Context(), s, &add, idSchema(), []string{"id"}, ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(0)}, {int64(2)}, {int64(3)}, {int64(5)}}, got)

	// A deletion vector whose file is gone is an error, never a silent full read.
	add.DeletionVector = &deltalog.DeletionVector{StorageType: "u", PathOrInlineDV: "WYbkwCTB$gH)J7t?$/sK", SizeInBytes: 36, Cardinality: 2}
	_, err = Read(t.Context(), s, &add, idSchema(), ReadOptions{})
	require.ErrorIs(t, err, deltalog.ErrNotExist)
}
