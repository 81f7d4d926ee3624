package datafile

import (
	"bytes"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// The tests in this file write Parquet layouts other engines produce (Spark's INT96 and
// legacy lists, decimals as byte arrays, other codecs) with parquet-go's low-level API
// and check that Read maps them onto the Delta types.

type col struct {
	name string
	node parquet.Node
}

func rawGroup(cols ...col) *orderedGroup {
	g := &orderedGroup{Group: parquet.Group{}}
	for _, c := range cols {
		g.Group[c.name] = c.node
		g.fields = append(g.fields, &namedField{Node: c.node, name: c.name})
	}
	return g
}

// legacyList is a LIST-annotated group with whatever children the test gives it.
type legacyList struct{ *orderedGroup }

func (legacyList) Type() parquet.Type { return parquet.List(parquet.Leaf(parquet.Int32Type)).Type() }

// legacyMap is a MAP-annotated group.
type legacyMap struct{ *orderedGroup }

func (legacyMap) Type() parquet.Type {
	return parquet.Map(parquet.String(), parquet.Leaf(parquet.Int32Type)).Type()
}

func writeRaw(t *testing.T, s deltalog.Store, key string, root parquet.Node, rows []parquet.Row, opts ...parquet.WriterOption) deltalog.Add {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, append([]parquet.WriterOption{parquet.NewSchema("spark_schema", root)}, opts...)...)
	_, err := w.WriteRows(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, s.Put(t.Context(), key, buf.Bytes()))
	return deltalog.Add{Path: key, Size: int64(buf.Len()), PartitionValues: map[string]*string{}}
}

func lv(v parquet.Value, rep, def, col int) parquet.Value { return v.Level(rep, def, col) }

func int96(micros int64) deprecated.Int96 {
	days := micros/86400_000_000 + 2440588
	nanos := uint64(micros%86400_000_000) * 1000
	return deprecated.Int96{uint32(nanos), uint32(nanos >> 32), uint32(days)}
}

func TestReadForeignPrimitives(t *testing.T) {
	root := rawGroup(
		col{"ts96", parquet.Optional(parquet.Leaf(parquet.Int96Type))},
		col{"tsMillis", parquet.Optional(parquet.Timestamp(parquet.Millisecond))},
		col{"tsNanos", parquet.Optional(parquet.Timestamp(parquet.Nanosecond))},
		col{"decFixed5", parquet.Optional(parquet.Decimal(2, 10, parquet.FixedLenByteArrayType(5)))},
		col{"decBytes", parquet.Optional(parquet.Decimal(3, 38, parquet.ByteArrayType))},
		col{"decInt32", parquet.Optional(parquet.Decimal(1, 5, parquet.Int32Type))},
		col{"dict", parquet.Optional(parquet.Encoded(parquet.String(), &parquet.RLEDictionary))},
		col{"widen", parquet.Optional(parquet.Int(32))},
	)
	us := int64(1631099471_123456)
	var rows []parquet.Row
	for i := range 3 {
		if i == 2 {
			row := parquet.Row{}
			for c := range 8 {
				row = append(row, lv(parquet.NullValue(), 0, 0, c))
			}
			rows = append(rows, row)
			continue
		}
		neg := int64(1 - 2*i) // +1, -1
		rows = append(rows, parquet.Row{
			lv(parquet.Int96Value(int96(us)), 0, 1, 0),
			lv(parquet.Int64Value(us/1000*neg), 0, 1, 1),
			lv(parquet.Int64Value(us*1000*neg), 0, 1, 2),
			lv(parquet.FixedLenByteArrayValue(decimal128.FromInt64(-123456*neg).AppendBytes(nil, 5)), 0, 1, 3),
			lv(parquet.ByteArrayValue([]byte{0x00, 0x80 >> i}), 0, 1, 4), // 128, then 64: minimal and padded forms
			lv(parquet.Int32Value(int32(-42*neg)), 0, 1, 5),
			lv(parquet.ByteArrayValue([]byte("same")), 0, 1, 6),
			lv(parquet.Int32Value(int32(7*neg)), 0, 1, 7),
		})
	}
	s := newStore()
	add := writeRaw(t, s, "foreign.parquet", root, rows, parquet.Compression(&parquet.Gzip))
	f := openFile(t, s, add)
	require.Equal(t, parquet.Int96, f.Root().Column("ts96").Type().Kind())
	require.Equal(t, 5, f.Root().Column("decFixed5").Type().Length())
	require.Equal(t, parquet.ByteArray, f.Root().Column("decBytes").Type().Kind())
	require.Contains(t, f.Metadata().RowGroups[0].Columns[6].MetaData.Encoding, format.RLEDictionary, "dict column has a dictionary page")
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("ts96", deltalog.TypeTimestamp, true),
		field("tsMillis", deltalog.TypeTimestamp, true),
		field("tsNanos", deltalog.TypeTimestampNTZ, true),
		field("decFixed5", deltalog.DecimalType{Precision: 10, Scale: 2}, true),
		field("decBytes", deltalog.DecimalType{Precision: 38, Scale: 3}, true),
		field("decInt32", deltalog.DecimalType{Precision: 5, Scale: 1}, true),
		field("dict", deltalog.TypeString, true),
		field("widen", deltalog.TypeLong, true),
	}}
	got, err := Read(t.Context(), s, &add, schema, ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, [][]any{
		{us, us / 1000 * 1000, us, decimal128.FromInt64(-123456), decimal128.FromInt64(128), decimal128.FromInt64(-42), "same", int64(7)},
		{us, -us / 1000 * 1000, -us, decimal128.FromInt64(123456), decimal128.FromInt64(64), decimal128.FromInt64(42), "same", int64(-7)},
		{nil, nil, nil, nil, nil, nil, nil, nil},
	}, got)
}

func TestReadLegacyLists(t *testing.T) {
	// arr2: optional group (LIST) { repeated int32 array }           -- 2-level, primitive
	// arrT: optional group (LIST) { repeated group array { x; y } }  -- 2-level, struct element
	// bare: repeated int32 bare                                      -- unannotated repeated field
	// m:    optional group (MAP) { repeated group map { key; value } }
	root := rawGroup(
		col{"arr2", parquet.Optional(legacyList{rawGroup(col{"array", parquet.Repeated(parquet.Int(32))})})},
		col{"arrT", parquet.Optional(legacyList{rawGroup(col{"array", parquet.Repeated(rawGroup(
			col{"x", parquet.Required(parquet.Int(32))}, col{"y", parquet.Optional(parquet.String())}))})})},
		col{"bare", parquet.Repeated(parquet.Int(32))},
		col{"m", parquet.Optional(legacyMap{rawGroup(col{"map", parquet.Repeated(rawGroup(
			col{"key", parquet.Required(parquet.String())}, col{"value", parquet.Optional(parquet.Int(32))}))})})},
	)
	i32 := func(v int32) parquet.Value { return parquet.Int32Value(v) }
	str := func(v string) parquet.Value { return parquet.ByteArrayValue([]byte(v)) }
	null := parquet.NullValue()
	rows := []parquet.Row{
		{ // arr2=[1,2] arrT=[{1,"a"},{2,null}] bare=[5] m={"k":1,"n":null}
			lv(i32(1), 0, 2, 0), lv(i32(2), 1, 2, 0),
			lv(i32(1), 0, 2, 1), lv(i32(2), 1, 2, 1),
			lv(str("a"), 0, 3, 2), lv(null, 1, 2, 2),
			lv(i32(5), 0, 1, 3),
			lv(str("k"), 0, 2, 4), lv(str("n"), 1, 2, 4),
			lv(i32(1), 0, 3, 5), lv(null, 1, 2, 5),
		},
		{ // arr2=[] arrT=null bare=[] m={}
			lv(null, 0, 1, 0),
			lv(null, 0, 0, 1), lv(null, 0, 0, 2),
			lv(null, 0, 0, 3),
			lv(null, 0, 1, 4), lv(null, 0, 1, 5),
		},
		{ // arr2=null arrT=[] bare=[7,8] m=null
			lv(null, 0, 0, 0),
			lv(null, 0, 1, 1), lv(null, 0, 1, 2),
			lv(i32(7), 0, 1, 3), lv(i32(8), 1, 1, 3),
			lv(null, 0, 0, 4), lv(null, 0, 0, 5),
		},
	}
	s := newStore()
	add := writeRaw(t, s, "lists.parquet", root, rows, parquet.Compression(&parquet.Snappy))
	f := openFile(t, s, add)
	arr2 := f.Root().Column("arr2").Columns()
	require.True(t, arr2[0].Leaf() && arr2[0].Repeated(), "arr2 really is a 2-level list")
	require.Equal(t, "LIST", f.Root().Column("arr2").Type().LogicalType().String())
	require.Equal(t, "MAP", f.Root().Column("m").Type().LogicalType().String())
	elem := &deltalog.StructType{Fields: []deltalog.StructField{field("x", deltalog.TypeInteger, false), field("y", deltalog.TypeString, true)}}
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("arr2", &deltalog.ArrayType{ElementType: deltalog.TypeInteger}, true),
		field("arrT", &deltalog.ArrayType{ElementType: elem}, true),
		field("bare", &deltalog.ArrayType{ElementType: deltalog.TypeInteger}, false),
		field("m", &deltalog.MapType{KeyType: deltalog.TypeString, ValueType: deltalog.TypeInteger, ValueContainsNull: true}, true),
	}}
	got, err := Read(t.Context(), s, &add, schema, ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, [][]any{
		{[]any{int32(1), int32(2)}, []any{[]any{int32(1), "a"}, []any{int32(2), nil}}, []any{int32(5)}, []KV{{"k", int32(1)}, {"n", nil}}},
		{[]any{}, nil, []any{}, []KV{}},
		{nil, []any{}, []any{int32(7), int32(8)}, nil},
	}, got)
}

func TestReadCodecs(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{field("s", deltalog.TypeString, true)}}
	for _, c := range []compress.Codec{&parquet.Uncompressed, &parquet.Snappy, &parquet.Gzip, &parquet.Zstd, &parquet.Lz4Raw, &parquet.Brotli} {
		t.Run(c.String(), func(t *testing.T) {
			s := newStore()
			var rows []parquet.Row
			for i := range 100 {
				rows = append(rows, parquet.Row{lv(parquet.ByteArrayValue([]byte{byte('a' + i%3)}), 0, 1, 0)})
			}
			add := writeRaw(t, s, "c.parquet", rawGroup(col{"s", parquet.Optional(parquet.String())}), rows, parquet.Compression(c))
			got, err := Read(t.Context(), s, &add, schema, ReadOptions{})
			require.NoError(t, err)
			require.Len(t, got, 100)
			require.Equal(t, "c", got[98][0])
		})
	}
}

func TestWriterCodecs(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{field("s", deltalog.TypeString, true)}}
	for _, tc := range []struct{ name, tag string }{{"snappy", ".snappy"}, {"zstd", ".zstd"}, {"gzip", ".gz"}, {"uncompressed", ""}, {"", ".zstd"}} {
		t.Run(tc.name, func(t *testing.T) {
			adds, got, s := writeRead(t, Options{Schema: schema, Properties: map[string]string{propCodec: tc.name}}, [][]any{{"x"}, {nil}})
			require.Equal(t, [][]any{{"x"}, {nil}}, got)
			require.Regexp(t, `\.c000`+regexpQuote(tc.tag)+`\.parquet$`, adds[0].Path)
			f := openFile(t, s, adds[0])
			want := map[string]string{"snappy": "SNAPPY", "zstd": "ZSTD", "": "ZSTD", "gzip": "GZIP", "uncompressed": "UNCOMPRESSED"}[tc.name]
			require.Equal(t, want, f.Metadata().RowGroups[0].Columns[0].MetaData.Codec.String())
		})
	}
	_, err := NewWriter(Options{Schema: schema, Properties: map[string]string{propCodec: "lzo"}})
	require.ErrorIs(t, err, ErrSchema)
}

func regexpQuote(s string) string {
	var b bytes.Buffer
	for _, c := range s {
		if c == '.' {
			b.WriteString(`\.`)
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

func TestReadRejectsOtherDecimalScale(t *testing.T) {
	s := newStore()
	add := writeRaw(t, s, "d.parquet", rawGroup(col{"d", parquet.Optional(parquet.Decimal(3, 9, parquet.Int32Type))}),
		[]parquet.Row{{lv(parquet.Int32Value(1234), 0, 1, 0)}})
	schema := &deltalog.StructType{Fields: []deltalog.StructField{field("d", deltalog.DecimalType{Precision: 9, Scale: 2}, true)}}
	_, err := Read(t.Context(), s, &add, schema, ReadOptions{})
	require.ErrorIs(t, err, ErrSchema)
	schema.Fields[0].Type = deltalog.DecimalType{Precision: 9, Scale: 3}
	got, err := Read(t.Context(), s, &add, schema, ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, [][]any{{decimal128.FromInt64(1234)}}, got)
}
