package datafile

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

func allPrimitivesSchema() *deltalog.StructType {
	return &deltalog.StructType{Fields: []deltalog.StructField{
		field("b", deltalog.TypeBoolean, true),
		field("i8", deltalog.TypeByte, true),
		field("i16", deltalog.TypeShort, true),
		field("i32", deltalog.TypeInteger, true),
		field("i64", deltalog.TypeLong, true),
		field("f32", deltalog.TypeFloat, true),
		field("f64", deltalog.TypeDouble, true),
		field("s", deltalog.TypeString, true),
		field("bin", deltalog.TypeBinary, true),
		field("d", deltalog.TypeDate, true),
		field("ts", deltalog.TypeTimestamp, true),
		field("ntz", deltalog.TypeTimestampNTZ, true),
		field("dec9", deltalog.DecimalType{Precision: 9, Scale: 2}, true),
		field("dec18", deltalog.DecimalType{Precision: 18, Scale: 4}, true),
		field("dec38", deltalog.DecimalType{Precision: 38, Scale: 18}, true),
		field("req", deltalog.TypeLong, false),
	}}
}

const (
	day0001 = -719162 // 0001-01-01
	day9999 = 2932896 // 9999-12-31
	usMin   = int64(day0001) * 86400_000_000
	usMax   = int64(day9999+1)*86400_000_000 - 1
)

func TestRoundTripPrimitives(t *testing.T) {
	big38 := strings.Repeat("9", 38)
	rows := [][]any{
		{true, int8(math.MinInt8), int16(math.MinInt16), int32(math.MinInt32), int64(math.MinInt64), float32(-math.MaxFloat32), -math.MaxFloat64, "", []byte{},
			int32(day0001), usMin, usMin, decimal128.FromInt64(-999999999), decimal128.FromInt64(-999999999999999999), mustBig(t, "-"+big38), int64(0)},
		{false, int8(math.MaxInt8), int16(math.MaxInt16), int32(math.MaxInt32), int64(math.MaxInt64), float32(math.MaxFloat32), math.MaxFloat64, "héllo wörld ✓", make([]byte, 1<<16),
			int32(day9999), usMax, usMax, decimal128.FromInt64(999999999), decimal128.FromInt64(999999999999999999), mustBig(t, big38), int64(-1)},
		{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, int64(42)},
		{true, int8(0), int16(0), int32(0), int64(0), float32(math.Inf(1)), math.NaN(), "x", []byte{0, 1, 2}, int32(0), int64(0), int64(1), decimal128.FromInt64(0), decimal128.FromInt64(1), decimal128.FromInt64(-1), int64(7)},
	}
	opts := Options{Schema: allPrimitivesSchema()}
	adds, got, _ := writeRead(t, opts, rows)
	require.Len(t, adds, 1)
	require.Len(t, got, len(rows))
	for i := range rows {
		for j := range rows[i] {
			want := rows[i][j]
			if f, ok := want.(float64); ok && math.IsNaN(f) {
				require.True(t, math.IsNaN(got[i][j].(float64)), "row %d col %d", i, j)
				continue
			}
			require.Equal(t, want, got[i][j], "row %d col %d", i, j)
		}
	}
}

func TestParquetPhysicalTypes(t *testing.T) {
	opts := Options{Schema: allPrimitivesSchema()}
	row := make([]any, len(opts.Schema.Fields))
	row[len(row)-1] = int64(1)
	adds, _, s := writeRead(t, opts, [][]any{row})
	f := openFile(t, s, adds[0])

	type want struct {
		kind     parquet.Kind
		logical  string
		optional bool
	}
	cases := map[string]want{
		"b":     {parquet.Boolean, "", true},
		"i8":    {parquet.Int32, "INT(8,true)", true},
		"i16":   {parquet.Int32, "INT(16,true)", true},
		"i32":   {parquet.Int32, "INT(32,true)", true},
		"i64":   {parquet.Int64, "INT(64,true)", true},
		"f32":   {parquet.Float, "", true},
		"f64":   {parquet.Double, "", true},
		"s":     {parquet.ByteArray, "STRING", true},
		"bin":   {parquet.ByteArray, "", true},
		"d":     {parquet.Int32, "DATE", true},
		"ts":    {parquet.Int64, "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)", true},
		"ntz":   {parquet.Int64, "TIMESTAMP(isAdjustedToUTC=false,unit=MICROS)", true},
		"dec9":  {parquet.Int32, "DECIMAL(9,2)", true},
		"dec18": {parquet.Int64, "DECIMAL(18,4)", true},
		"dec38": {parquet.FixedLenByteArray, "DECIMAL(38,18)", true},
		"req":   {parquet.Int64, "INT(64,true)", false},
	}
	cols := f.Root().Columns()
	require.Len(t, cols, len(cases))
	for i, c := range cols {
		// Column order follows the Delta schema, not parquet-go's alphabetical groups.
		require.Equal(t, opts.Schema.Fields[i].Name, c.Name())
		w := cases[c.Name()]
		require.Equal(t, w.kind, c.Type().Kind(), c.Name())
		lt := ""
		if l := c.Type().LogicalType(); l != nil {
			lt = l.String()
		}
		require.Equal(t, w.logical, lt, c.Name())
		require.Equal(t, w.optional, c.Optional(), c.Name())
	}
	require.Equal(t, 16, f.Root().Column("dec38").Type().Length())
}

func nestedSchema() *deltalog.StructType {
	inner := &deltalog.StructType{Fields: []deltalog.StructField{
		field("x", deltalog.TypeLong, true),
		field("tags", &deltalog.ArrayType{ElementType: deltalog.TypeString, ContainsNull: true}, true),
	}}
	return &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("st", inner, true),
		field("arr", &deltalog.ArrayType{ElementType: deltalog.TypeInteger, ContainsNull: true}, true),
		field("arrReq", &deltalog.ArrayType{ElementType: deltalog.TypeString, ContainsNull: false}, false),
		field("m", &deltalog.MapType{KeyType: deltalog.TypeString, ValueType: deltalog.TypeLong, ValueContainsNull: true}, true),
		field("nested", &deltalog.ArrayType{ElementType: &deltalog.ArrayType{ElementType: inner, ContainsNull: true}, ContainsNull: true}, true),
		field("dec", &deltalog.ArrayType{ElementType: deltalog.DecimalType{Precision: 38, Scale: 2}, ContainsNull: true}, true),
	}}
}

func TestRoundTripNested(t *testing.T) {
	rows := [][]any{
		{int64(1), []any{int64(5), []any{"a", nil, "c"}}, []any{int32(1), nil, int32(3)}, []any{"x"},
			[]KV{{"k1", int64(1)}, {"k2", nil}}, []any{[]any{[]any{int64(1), []any{}}, nil}, nil, []any{}}, []any{mustBig(t, "-12345678901234567890123456789012345678"), nil}},
		{int64(2), nil, nil, []any{}, nil, nil, nil},
		{int64(3), []any{nil, nil}, []any{}, []any{"a", "b"}, []KV{}, []any{}, []any{}},
		{int64(4), []any{int64(-1), []any{}}, []any{nil}, []any{""}, []KV{{"", nil}}, []any{[]any{nil}}, []any{nil}},
	}
	_, got, _ := writeRead(t, Options{Schema: nestedSchema()}, rows)
	require.Equal(t, rows, got)
}

func TestReadColumnsSubset(t *testing.T) {
	rows := [][]any{
		{int64(1), []any{int64(5), []any{"a"}}, nil, []any{}, nil, nil, nil},
		{int64(2), nil, []any{int32(9)}, []any{"z"}, nil, nil, nil},
	}
	opts := Options{Schema: nestedSchema()}
	s := newStore()
	w, err := NewWriter(opts)
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), s, rows)
	require.NoError(t, err)
	got, err := ReadColumns(t.Context(), s, &adds[0], opts.Schema, []string{"arr", "id"}, ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, [][]any{{nil, int64(1)}, {[]any{int32(9)}, int64(2)}}, got)
	_, err = ReadColumns(t.Context(), s, &adds[0], opts.Schema, []string{"nope"}, ReadOptions{})
	require.ErrorIs(t, err, ErrSchema)
}

func TestWriteRejectsBadValues(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("dec", deltalog.DecimalType{Precision: 5, Scale: 2}, true),
		field("arr", &deltalog.ArrayType{ElementType: deltalog.TypeLong, ContainsNull: false}, true),
	}}
	cases := []struct {
		name string
		row  []any
		want error
	}{
		{"null in required", []any{nil, nil, nil}, ErrNull},
		{"wrong type", []any{"1", nil, nil}, ErrValueType},
		{"decimal too wide", []any{int64(1), decimal128.FromInt64(100000), nil}, ErrDecimalRange},
		{"null element", []any{int64(1), nil, []any{nil}}, ErrNull},
		{"short row", []any{int64(1)}, ErrSchema},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWriter(Options{Schema: schema})
			require.NoError(t, err)
			_, err = w.Write(t.Context(), newStore(), [][]any{{int64(0), nil, nil}, tc.row})
			require.ErrorIs(t, err, tc.want)
			var ve *ValueError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, 1, ve.Row)
		})
	}
}

func TestWriteAcceptsTime(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("ts", deltalog.TypeTimestamp, true),
		field("ntz", deltalog.TypeTimestampNTZ, true),
	}}
	zone := time.FixedZone("x", 2*3600)
	at := time.Date(2024, 3, 1, 12, 0, 0, 1000, zone)
	_, got, _ := writeRead(t, Options{Schema: schema}, [][]any{{at, at}})
	require.Equal(t, at.UnixMicro(), got[0][0], "timestamp is the instant")
	require.Equal(t, time.Date(2024, 3, 1, 12, 0, 0, 1000, time.UTC).UnixMicro(), got[0][1], "timestamp_ntz is the wall clock")
}
