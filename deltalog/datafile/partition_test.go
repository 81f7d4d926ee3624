package datafile

import (
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/deltatext"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

func TestPartitionedWriteNastyValues(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("p", deltalog.TypeString, true),
		field("n", deltalog.TypeInteger, true),
	}}
	values := []any{nil, "a b", "100%", "x=y", "a/b", "", "ü", "#?:"}
	var rows [][]any
	for i, v := range values {
		rows = append(rows, []any{int64(i), v, int32(i % 2)}, []any{int64(i + 100), v, int32(i % 2)})
	}
	opts := Options{Schema: schema, PartitionColumns: []string{"p", "n"}}
	adds, got, s := writeRead(t, opts, rows)

	// "" is written as null: (null,0) from nil and (null,1) from "" make 8 partitions.
	require.Len(t, adds, 8)
	wantDirs := map[string]bool{
		"p=__HIVE_DEFAULT_PARTITION__/n=0/": true, "p=__HIVE_DEFAULT_PARTITION__/n=1/": true, "p=a b/n=1/": true, "p=100%25/n=0/": true,
		"p=x%3Dy/n=1/": true, "p=a%2Fb/n=0/": true, "p=ü/n=0/": true, "p=%23%3F%3A/n=1/": true,
	}
	for _, a := range adds {
		key, err := url.PathUnescape(a.Path)
		require.NoError(t, err)
		dir := key[:strings.LastIndexByte(key, '/')+1]
		require.True(t, wantDirs[dir], "unexpected dir %q (path %q)", dir, a.Path)
		require.NotContains(t, a.Path, " ", "add.path must be URI-encoded")
		require.Contains(t, a.PartitionValues, "p")
		require.Contains(t, a.PartitionValues, "n")
		if strings.Contains(dir, "HIVE_DEFAULT") {
			require.Nil(t, a.PartitionValues["p"])
		}
		f := openFile(t, s, a)
		require.Len(t, f.Root().Columns(), 1, "partition columns are not stored in the file")
		require.True(t, a.DataChange)
		require.Regexp(t, `/part-00000-[0-9a-f-]{36}\.c000\.zstd\.parquet$`, a.Path)
	}
	require.Equal(t, `p=100%2525/n=0/`, adds[2].Path[:len(`p=100%2525/n=0/`)])

	// Rows come back with partition values, "" as null, grouped by partition.
	sortRows(got)
	var want [][]any
	for _, r := range rows {
		w := append([]any{}, r...)
		if w[1] == "" {
			w[1] = nil
		}
		want = append(want, w)
	}
	sortRows(want)
	require.Equal(t, want, got)
}

func sortRows(rows [][]any) {
	sort.Slice(rows, func(i, j int) bool { return rows[i][0].(int64) < rows[j][0].(int64) })
}

func TestPartitionValueFormats(t *testing.T) {
	cases := []struct {
		typ  deltalog.Type
		v    any
		want string
	}{
		{deltalog.TypeBoolean, true, "true"},
		{deltalog.TypeByte, int8(-8), "-8"},
		{deltalog.TypeShort, int16(300), "300"},
		{deltalog.TypeInteger, int32(-7), "-7"},
		{deltalog.TypeLong, int64(1) << 60, "1152921504606846976"},
		{deltalog.TypeFloat, float32(1), "1.0"},
		{deltalog.TypeDouble, 2.5, "2.5"},
		{deltalog.DecimalType{Precision: 5, Scale: 2}, decimal128.FromInt64(1230), "12.30"},
		{deltalog.DecimalType{Precision: 5, Scale: 2}, decimal128.FromInt64(-5), "-0.05"},
		{deltalog.TypeDate, int32(day0001), "0001-01-01"},
		{deltalog.TypeDate, int32(day9999), "9999-12-31"},
		{deltalog.TypeTimestamp, int64(123456), "1970-01-01T00:00:00.123456Z"},
		{deltalog.TypeTimestampNTZ, int64(-1), "1969-12-31 23:59:59.999999"},
		{deltalog.TypeString, "a b", "a b"},
	}
	for _, tc := range cases {
		t.Run(tc.typ.String()+"/"+tc.want, func(t *testing.T) {
			s, err := PartitionValue(tc.typ, tc.v)
			require.NoError(t, err)
			require.Equal(t, tc.want, *s)
			back, err := ParsePartitionValue(tc.typ, s)
			require.NoError(t, err)
			require.Equal(t, tc.v, back)
		})
	}
}

// A date or timestamp past 9999 has no text a reader parses back, so writing it
// as a partition value is refused with the value named, not stored unreadable.
func TestPartitionValueOutsideYearsRefused(t *testing.T) {
	for _, tc := range []struct {
		typ deltalog.Type
		v   any
	}{
		{deltalog.TypeDate, int32(day9999 + 1)},
		{deltalog.TypeDate, int32(day0001 - 1)},
		{deltalog.TypeTimestamp, int64(253402300800000000)},
		{deltalog.TypeTimestampNTZ, int64(-62135596800000001)},
	} {
		s, err := PartitionValue(tc.typ, tc.v)
		require.ErrorIs(t, err, deltatext.ErrRange, "%s %v gave %v", tc.typ, tc.v, s)
	}
}

func TestParsePartitionTimestampForms(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"2021-09-08 11:11:11", 1631099471_000000},
		{"2021-09-08 11:11:11.5", 1631099471_500000},
		{"2021-09-08T11:11:11.000001Z", 1631099471_000001},
		{"2021-09-08T13:11:11+02:00", 1631099471_000000},
	}
	for _, tc := range cases {
		v, err := ParsePartitionValue(deltalog.TypeTimestamp, &tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, v, tc.in)
	}
	empty := ""
	v, err := ParsePartitionValue(deltalog.TypeLong, &empty)
	require.NoError(t, err)
	require.Nil(t, v)
	bad := "yesterday"
	_, err = ParsePartitionValue(deltalog.TypeTimestamp, &bad)
	require.Error(t, err)
}

func TestHiveEscape(t *testing.T) {
	require.Equal(t, "a%2Fb%3Dc%25d%3Ae", hiveEscape("a/b=c%d:e"))
	// Spark's verified example: value "bar+%21" -> dir "bar+%2521" -> log path "bar+%252521".
	require.Equal(t, "bar+%2521", hiveEscape("bar+%21"))
	// We also encode "+", which Spark leaves alone; readers percent-decode either form.
	require.Equal(t, "_2=bar%2B%252521", uriEscapePath("_2="+hiveEscape("bar+%21")))
}

// TestGroupByPartitionRuns: rows that repeat the previous row's partition
// join its group, and rows that return to an earlier partition, or spell its
// value with another Go type, find that group; groups keep first-appearance
// order and row order.
func TestGroupByPartitionRuns(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("d", deltalog.TypeDate, true),
		field("s", deltalog.TypeString, true),
	}}
	w, err := NewWriter(Options{Schema: schema, PartitionColumns: []string{"d", "s"}})
	require.NoError(t, err)
	rows := [][]any{
		{int64(0), int32(1), "a"}, {int64(1), int32(1), "a"}, {int64(2), int32(2), "a"}, {int64(3), int32(1), "a"},
		{int64(4), 1, "a"}, {int64(5), nil, "a"}, {int64(6), nil, "a"}, {int64(7), int32(2), "b"}, {int64(8), int32(2), "b"},
		{int64(9), int32(2), "a"}, {int64(10), int32(1), ""}, {int64(11), int32(1), nil},
	}
	groups, values, err := w.groupRows(batch{rows: rows})
	require.NoError(t, err)
	require.Equal(t, [][]int{{0, 1, 3, 4}, {2, 9}, {5, 6}, {7, 8}, {10, 11}}, groups)
	var got []string
	for _, v := range values {
		var parts []string
		for _, s := range v {
			if s == nil {
				parts = append(parts, "null")
			} else {
				parts = append(parts, *s)
			}
		}
		got = append(got, strings.Join(parts, "/"))
	}
	require.Equal(t, []string{"1970-01-02/a", "1970-01-03/a", "null/a", "1970-01-03/b", "1970-01-02/null"}, got)
}
