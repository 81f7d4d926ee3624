package datafile

import (
	"math/rand/v2"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// addBytes is the content of add's data file.
func addBytes(t *testing.T, s deltalog.Store, add deltalog.Add) []byte {
	t.Helper()
	key, err := url.PathUnescape(add.Path)
	require.NoError(t, err)
	return fileBytes(t, s, key)
}

// columnsOf turns rows into Columns, typed where kinds says so ('i' Ints,
// 's' Strs, 'v' Values).
func columnsOf(rows [][]any, kinds string) []Column {
	cols := make([]Column, len(kinds))
	for j, k := range kinds {
		c := &cols[j]
		for i, r := range rows {
			v := r[j]
			if k != 'v' && v == nil {
				if c.Null == nil {
					c.Null = make([]bool, len(rows))
				}
				c.Null[i] = true
			}
			switch k {
			case 'i':
				var x int64
				switch y := v.(type) {
				case int8:
					x = int64(y)
				case int16:
					x = int64(y)
				case int32:
					x = int64(y)
				case int64:
					x = y
				case int:
					x = int64(y)
				}
				c.Ints = append(c.Ints, x)
			case 's':
				var x string
				switch y := v.(type) {
				case string:
					x = y
				case []byte:
					x = string(y)
				}
				c.Strs = append(c.Strs, x)
			default:
				c.Values = append(c.Values, v)
			}
		}
	}
	return cols
}

// TestWriteColumnsSameFilesAsWrite: the same rows given column by column make
// byte-for-byte the files, statistics and partition values Write makes, on a
// flat schema of every typed kind with nulls, a struct column given as values,
// a partitioned write over several partitions and small row groups, and a
// schema with a list (the row-wise fallback).
func TestWriteColumnsSameFilesAsWrite(t *testing.T) {
	flat := &deltalog.StructType{Fields: []deltalog.StructField{
		field("b", deltalog.TypeByte, true),
		field("sh", deltalog.TypeShort, false),
		field("i", deltalog.TypeInteger, true),
		field("l", deltalog.TypeLong, false),
		field("d", deltalog.TypeDate, true),
		field("ts", deltalog.TypeTimestamp, true),
		field("ntz", deltalog.TypeTimestampNTZ, true),
		field("s", deltalog.TypeString, false),
		field("bin", deltalog.TypeBinary, true),
		field("dbl", deltalog.TypeDouble, true),
		field("st", &deltalog.StructType{Fields: []deltalog.StructField{field("x", deltalog.TypeLong, true), field("y", deltalog.TypeString, true)}}, true),
		field("p", deltalog.TypeString, true),
	}}
	rng := rand.New(rand.NewPCG(1, 2))
	row := func(i int) []any {
		maybe := func(v any) any {
			if rng.IntN(5) == 0 {
				return nil
			}
			return v
		}
		var st any
		if rng.IntN(4) > 0 {
			st = []any{maybe(int64(rng.IntN(100))), maybe("y" + string(rune('a'+rng.IntN(26))))}
		}
		parts := []any{"a", "b", "", nil}
		return []any{
			maybe(int8(rng.IntN(256) - 128)), int16(rng.IntN(65536) - 32768), maybe(int32(rng.Uint32())), int64(rng.Uint64()),
			maybe(int32(rng.IntN(40000))), maybe(int64(rng.Uint64() >> 12)), maybe(int64(rng.Uint64() >> 12)),
			"text " + string(rune('a'+i%26)) + string(rune('a'+rng.IntN(26))), maybe([]byte{byte(i), 0, 255}),
			maybe(rng.Float64()), st, parts[rng.IntN(len(parts))],
		}
	}
	var rows [][]any
	for i := range 5000 {
		rows = append(rows, row(i))
	}
	cases := []struct {
		name  string
		opts  Options
		kinds string
		rows  [][]any
	}{
		{"flat", Options{Schema: flat}, "iiiiiiissvvs", rows},
		{"partitioned, small row groups and files", Options{Schema: flat, PartitionColumns: []string{"p", "d"}, RowGroupSize: 20 << 10, TargetFileSize: 60 << 10}, "iiiiiiissvvs", rows},
		{"partitioned by typed columns, values elsewhere", Options{Schema: flat, PartitionColumns: []string{"d"}, Properties: map[string]string{propCodec: "snappy"}}, "vvvvivvvvvvv", rows},
		{"few statistics", Options{Schema: flat, Properties: map[string]string{propStatsColumns: "l,s"}}, "iiiiiiissvvs", rows[:100]},
		{"empty", Options{Schema: flat}, "iiiiiiissvvs", nil},
	}
	list := &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("tags", &deltalog.ArrayType{ElementType: deltalog.TypeString, ContainsNull: true}, true),
	}}
	cases = append(cases, struct {
		name  string
		opts  Options
		kinds string
		rows  [][]any
	}{"with a list", Options{Schema: list}, "iv", [][]any{{int64(1), []any{"a", nil}}, {int64(2), nil}, {int64(3), []any{}}}})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore()
			w, err := NewWriter(tc.opts)
			require.NoError(t, err)
			want, err := w.Write(t.Context(), s, tc.rows)
			require.NoError(t, err)
			cols := columnsOf(tc.rows, tc.kinds)
			if len(tc.rows) == 0 {
				for i := range cols {
					cols[i].Values = []any{}
				}
			}
			got, err := w.WriteColumns(t.Context(), s, cols)
			require.NoError(t, err)
			require.Len(t, got, len(want))
			if tc.opts.TargetFileSize > 0 {
				require.Greater(t, len(want), 4, "several files per partition")
			}
			for i := range want {
				require.Equal(t, want[i].PartitionValues, got[i].PartitionValues)
				require.Equal(t, want[i].Size, got[i].Size)
				require.Equal(t, want[i].Stats, got[i].Stats)
				require.Equal(t, addBytes(t, s, want[i]), addBytes(t, s, got[i]), "file %d", i)
			}
		})
	}
}

// TestWriteColumnsRefusesBadColumns: typed values a column cannot hold, a
// null in a non-nullable column and columns of unequal lengths are errors,
// naming the row where one is at fault.
func TestWriteColumnsRefusesBadColumns(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("i", deltalog.TypeInteger, false),
		field("s", deltalog.TypeString, true),
	}}
	w, err := NewWriter(Options{Schema: schema})
	require.NoError(t, err)
	s := newStore()
	_, err = w.WriteColumns(t.Context(), s, []Column{{Ints: []int64{1, 1 << 40}}, {Strs: []string{"a", "b"}}})
	var ve *ValueError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, 1, ve.Row)
	require.ErrorIs(t, err, ErrValueType)
	_, err = w.WriteColumns(t.Context(), s, []Column{{Ints: []int64{1, 2}, Null: []bool{false, true}}, {Strs: []string{"a", "b"}}})
	require.ErrorAs(t, err, &ve)
	require.Equal(t, 1, ve.Row)
	require.ErrorIs(t, err, ErrNull)
	_, err = w.WriteColumns(t.Context(), s, []Column{{Strs: []string{"1", "2"}}, {Strs: []string{"a", "b"}}})
	require.ErrorIs(t, err, ErrValueType)
	_, err = w.WriteColumns(t.Context(), s, []Column{{Ints: []int64{1, 2}}, {Strs: []string{"a"}}})
	require.ErrorIs(t, err, ErrSchema)
	_, err = w.WriteColumns(t.Context(), s, []Column{{Ints: []int64{1, 2}}})
	require.ErrorIs(t, err, ErrSchema)
}
