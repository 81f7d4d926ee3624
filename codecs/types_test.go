package codecs

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// Avro type fragments as Debezium + AvroConverter write them (brief §4).
func dbzType(prim, connectName string) map[string]any {
	return map[string]any{"type": prim, "connect.version": 1, "connect.name": connectName}
}

func int16Type() map[string]any { return map[string]any{"type": "int", "connect.type": "int16"} }

func decType(p, s int) map[string]any {
	return map[string]any{"type": "bytes", "scale": s, "precision": p, "connect.version": 1,
		"connect.parameters": map[string]any{"scale": strconv.Itoa(s), "connect.decimal.precision": strconv.Itoa(p)},
		"connect.name":       nameDecimal, "logicalType": "decimal"}
}

func logicalType(prim, logical, connectName string) map[string]any {
	return map[string]any{"type": prim, "connect.version": 1, "connect.name": connectName, "logicalType": logical}
}

// propagated adds column.propagate.source.type parameters to a type.
func propagated(typ any, srcType, length, scale string) map[string]any {
	m := map[string]any{}
	if tm, ok := typ.(map[string]any); ok {
		for k, v := range tm {
			m[k] = v
		}
	} else {
		m["type"] = typ
	}
	params := map[string]any{"__debezium.source.column.type": srcType}
	if old, ok := m["connect.parameters"].(map[string]any); ok {
		for k, v := range old {
			params[k] = v
		}
	}
	if length != "" {
		params["__debezium.source.column.length"] = length
	}
	if scale != "" {
		params["__debezium.source.column.scale"] = scale
	}
	m["connect.parameters"] = params
	return m
}

func primOf(typ any) string {
	if m, ok := typ.(map[string]any); ok {
		return m["type"].(string)
	}
	return typ.(string)
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// decodeOne decodes an insert of a table (id int key, v <typ>) carrying raw.
func decodeOne(t *testing.T, opts Options, v tcol, raw any) (Change, error) {
	t.Helper()
	d, key, value := buildOne(t, opts, v, raw)
	return d.Decode(t.Context(), key, value)
}

func buildOne(t *testing.T, opts Options, v tcol, raw any) (d *Decoder, key, value []byte) {
	t.Helper()
	cols := []tcol{{name: "id", typ: "int"}, v}
	src := newMapSource()
	env := envelopeSchema(layoutV3, cols)
	src.add(1, keySchema(cols[:1]))
	src.add(2, env)
	row := map[string]any{"id": int32(1), v.name: raw}
	if v.nullable && raw != nil {
		row[v.name] = union(primOf(v.typ), raw)
	}
	value = encode(t, 2, env, envelope(layoutV3, "c", nil, row,
		srcBlock{commit: "0000002b:00000e10:0005", change: "0000002b:00000e10:0003", serial: int64(1), tsMS: 1}, ""))
	key = encode(t, 1, keySchema(cols[:1]), map[string]any{"id": int32(1)})
	d, err := NewDecoder(src, opts)
	require.NoError(t, err)
	return d, key, value
}

func TestTypeMapping(t *testing.T) {
	placeholder := []byte(DefaultPlaceholder)
	maxBinary := bytes.Repeat([]byte{0xab}, 8000)
	tests := []struct {
		name        string
		opts        Options
		col         tcol
		raw         any
		wantType    Type
		want        any
		unavailable bool
		wantErr     error
	}{
		// bit, integers, floating point.
		{name: "bit", col: tcol{name: "v", typ: "boolean"}, raw: true, wantType: Type{Kind: KindBoolean}, want: true},
		{name: "tinyint max", col: tcol{name: "v", typ: int16Type()}, raw: int32(255), wantType: Type{Kind: KindShort}, want: int16(255)},
		{name: "tinyint zero", col: tcol{name: "v", typ: int16Type(), nullable: true}, raw: int32(0), wantType: Type{Kind: KindShort}, want: int16(0)},
		{name: "int16 overflow", col: tcol{name: "v", typ: int16Type()}, raw: int32(40000), wantErr: ErrOutOfRange},
		{name: "smallint min", col: tcol{name: "v", typ: int16Type()}, raw: int32(-32768), wantType: Type{Kind: KindShort}, want: int16(-32768)},
		{name: "int8", col: tcol{name: "v", typ: map[string]any{"type": "int", "connect.type": "int8"}}, raw: int32(-128), wantType: Type{Kind: KindByte}, want: int8(-128)},
		{name: "int max", col: tcol{name: "v", typ: "int", nullable: true}, raw: int32(math.MaxInt32), wantType: Type{Kind: KindInteger}, want: int32(math.MaxInt32)},
		{name: "bigint min", col: tcol{name: "v", typ: "long"}, raw: int64(math.MinInt64), wantType: Type{Kind: KindLong}, want: int64(math.MinInt64)},
		{name: "real", col: tcol{name: "v", typ: "float"}, raw: float32(1.5), wantType: Type{Kind: KindFloat}, want: float32(1.5)},
		{name: "float", col: tcol{name: "v", typ: "double", nullable: true}, raw: -2.25, wantType: Type{Kind: KindDouble}, want: -2.25},
		{name: "null value", col: tcol{name: "v", typ: "long", nullable: true}, raw: nil, wantType: Type{Kind: KindLong}, want: nil},

		// decimal.handling.mode=precise.
		{name: "decimal(10,2) 123.45", col: tcol{name: "v", typ: decType(10, 2), nullable: true}, raw: []byte{0x30, 0x39}, wantType: DecimalType(10, 2), want: decimal128.FromInt64(12345)},
		{name: "decimal(10,2) -1.00", col: tcol{name: "v", typ: decType(10, 2)}, raw: []byte{0x9c}, wantType: DecimalType(10, 2), want: decimal128.FromInt64(-100)},
		{name: "decimal zero empty bytes", col: tcol{name: "v", typ: decType(10, 2)}, raw: []byte{}, wantType: DecimalType(10, 2), want: decimal128.FromInt64(0)},
		{name: "money 9.9900", col: tcol{name: "v", typ: decType(19, 4), nullable: true}, raw: []byte{0x01, 0x86, 0x3c}, wantType: DecimalType(19, 4), want: decimal128.FromInt64(99900)},
		{name: "smallmoney max", col: tcol{name: "v", typ: decType(10, 4)}, raw: mustHex("7fffffff"), wantType: DecimalType(10, 4), want: decimal128.FromInt64(2147483647)},
		{name: "decimal(38,0) max", col: tcol{name: "v", typ: decType(38, 0)}, raw: mustHex("4b3b4ca85a86c47a098a223fffffffff"), wantType: DecimalType(38, 0),
			want: decimal128.Num{Hi: 0x4b3b4ca85a86c47a, Lo: 0x098a223fffffffff}},
		{name: "decimal(38,10) min", col: tcol{name: "v", typ: decType(38, 10)}, raw: mustHex("b4c4b357a5793b85f675ddc000000001"), wantType: DecimalType(38, 10),
			want: decimal128.Num{Hi: -0x4b3b4ca85a86c47b, Lo: 0xf675ddc000000001}},
		{name: "decimal(38,0) sign-padded", col: tcol{name: "v", typ: decType(38, 0)}, raw: mustHex("004b3b4ca85a86c47a098a223fffffffff"), wantType: DecimalType(38, 0),
			want: decimal128.Num{Hi: 0x4b3b4ca85a86c47a, Lo: 0x098a223fffffffff}},
		{name: "decimal(38,0) 10^38", col: tcol{name: "v", typ: decType(38, 0)}, raw: mustHex("4b3b4ca85a86c47a098a224000000000"), wantErr: ErrOutOfRange},
		{name: "decimal(4,0) 99999", col: tcol{name: "v", typ: decType(4, 0)}, raw: mustHex("01869f"), wantErr: ErrOutOfRange},
		{name: "decimal 17 significant bytes", col: tcol{name: "v", typ: decType(38, 0)}, raw: mustHex("0100000000000000000000000000000000"), wantErr: ErrOutOfRange},

		// decimal.handling.mode=string and double.
		{name: "decimal string mode", col: tcol{name: "v", typ: propagated("string", "DECIMAL", "10", "2"), nullable: true}, raw: "123.45", wantType: DecimalType(10, 2), want: decimal128.FromInt64(12345)},
		{name: "decimal string mode negative", col: tcol{name: "v", typ: propagated("string", "NUMERIC", "10", "2")}, raw: "-0.01", wantType: DecimalType(10, 2), want: decimal128.FromInt64(-1)},
		{name: "money string mode", col: tcol{name: "v", typ: propagated("string", "MONEY", "19", "4")}, raw: "9.9900", wantType: DecimalType(19, 4), want: decimal128.FromInt64(99900)},
		{name: "decimal string mode too precise", col: tcol{name: "v", typ: propagated("string", "DECIMAL", "10", "2")}, raw: "1.234", wantErr: ErrOutOfRange},
		{name: "decimal string mode without source type", col: tcol{name: "v", typ: "string"}, raw: "123.45", wantType: Type{Kind: KindString}, want: "123.45"},
		{name: "decimal double mode", col: tcol{name: "v", typ: propagated("double", "DECIMAL", "10", "2")}, raw: 123.45, wantType: Type{Kind: KindDouble}, want: 123.45},

		// Strings.
		{name: "char padded", col: tcol{name: "v", typ: "string"}, raw: "cc ", wantType: Type{Kind: KindString}, want: "cc "},
		{name: "empty string", col: tcol{name: "v", typ: "string", nullable: true}, raw: "", wantType: Type{Kind: KindString}, want: ""},
		{name: "uniqueidentifier", col: tcol{name: "v", typ: "string"}, raw: "6F9619FF-8B86-D011-B42D-00C04FC964FF", wantType: Type{Kind: KindString}, want: "6F9619FF-8B86-D011-B42D-00C04FC964FF"},
		{name: "nvarchar unicode", col: tcol{name: "v", typ: "string"}, raw: "Zürich 東京", wantType: Type{Kind: KindString}, want: "Zürich 東京"},

		// binary.handling.mode.
		{name: "varbinary bytes", col: tcol{name: "v", typ: "bytes", nullable: true}, raw: []byte{0xde, 0xad}, wantType: Type{Kind: KindBinary}, want: []byte{0xde, 0xad}},
		{name: "binary empty", col: tcol{name: "v", typ: "bytes"}, raw: []byte{}, wantType: Type{Kind: KindBinary}, want: []byte{}},
		{name: "binary(8000) max length", col: tcol{name: "v", typ: "bytes"}, raw: maxBinary, wantType: Type{Kind: KindBinary}, want: maxBinary},
		{name: "base64 mode", opts: Options{BinaryHandling: BinaryBase64}, col: tcol{name: "v", typ: propagated("string", "VARBINARY", "16", "")}, raw: "3q2+7w==", wantType: Type{Kind: KindBinary}, want: []byte{0xde, 0xad, 0xbe, 0xef}},
		{name: "base64 url mode", opts: Options{BinaryHandling: BinaryBase64URL}, col: tcol{name: "v", typ: propagated("string", "BINARY", "4", "")}, raw: "3q2-7w==", wantType: Type{Kind: KindBinary}, want: []byte{0xde, 0xad, 0xbe, 0xef}},
		{name: "hex mode", opts: Options{BinaryHandling: BinaryHex}, col: tcol{name: "v", typ: propagated("string", "VARBINARY", "16", "")}, raw: "deadbeef", wantType: Type{Kind: KindBinary}, want: []byte{0xde, 0xad, 0xbe, 0xef}},
		{name: "hex mode bad digits", opts: Options{BinaryHandling: BinaryHex}, col: tcol{name: "v", typ: propagated("string", "VARBINARY", "16", "")}, raw: "zz", wantErr: ErrBadBody},
		{name: "base64 mode without source type", opts: Options{BinaryHandling: BinaryBase64}, col: tcol{name: "v", typ: "string"}, raw: "3q2+7w==", wantType: Type{Kind: KindString}, want: "3q2+7w=="},

		// time.precision.mode=adaptive / adaptive_time_microseconds.
		{name: "date 2024-03-15", col: tcol{name: "v", typ: dbzType("int", nameDate), nullable: true}, raw: int32(19797), wantType: Type{Kind: KindDate}, want: int32(19797)},
		{name: "date 0001-01-01", col: tcol{name: "v", typ: dbzType("int", nameDate)}, raw: int32(-719162), wantType: Type{Kind: KindDate}, want: int32(-719162)},
		{name: "date 9999-12-31", col: tcol{name: "v", typ: dbzType("int", nameDate)}, raw: int32(2932896), wantType: Type{Kind: KindDate}, want: int32(2932896)},
		{name: "date past 9999", col: tcol{name: "v", typ: dbzType("int", nameDate)}, raw: int32(2932897), wantErr: ErrOutOfRange},
		{name: "time(2) millis", col: tcol{name: "v", typ: dbzType("int", nameTime)}, raw: int32(37425680), wantType: Type{Kind: KindTime}, want: int64(37425680000)},
		{name: "time(4) micros", col: tcol{name: "v", typ: dbzType("long", nameMicroTime)}, raw: int64(37425678900), wantType: Type{Kind: KindTime}, want: int64(37425678900)},
		{name: "time(7) nanos truncated", col: tcol{name: "v", typ: dbzType("long", nameNanoTime), nullable: true}, raw: int64(37425678901200), wantType: Type{Kind: KindTime}, want: int64(37425678901)},
		{name: "time 24:00 out of range", col: tcol{name: "v", typ: dbzType("long", nameNanoTime)}, raw: int64(86400000000000), wantErr: ErrOutOfRange},
		{name: "datetime millis", col: tcol{name: "v", typ: dbzType("long", nameTimestamp)}, raw: int64(1710498645123), wantType: Type{Kind: KindTimestampNTZ}, want: int64(1710498645123000)},
		{name: "datetime max 9999-12-31 23:59:59.997", col: tcol{name: "v", typ: dbzType("long", nameTimestamp)}, raw: int64(253402300799997), wantType: Type{Kind: KindTimestampNTZ}, want: int64(253402300799997000)},
		{name: "datetime2(3) 0001-01-01", col: tcol{name: "v", typ: dbzType("long", nameTimestamp)}, raw: int64(-62135596800000), wantType: Type{Kind: KindTimestampNTZ}, want: int64(-62135596800000000)},
		{name: "datetime2(6) 0001-01-01", col: tcol{name: "v", typ: dbzType("long", nameMicroTs)}, raw: int64(-62135596800000000), wantType: Type{Kind: KindTimestampNTZ}, want: int64(-62135596800000000)},
		{name: "datetime2(6) 9999-12-31 23:59:59.999999", col: tcol{name: "v", typ: dbzType("long", nameMicroTs)}, raw: int64(253402300799999999), wantType: Type{Kind: KindTimestampNTZ}, want: int64(253402300799999999)},
		{name: "datetime2(6) past 9999", col: tcol{name: "v", typ: dbzType("long", nameMicroTs)}, raw: int64(253402300800000000), wantErr: ErrOutOfRange},
		{name: "datetime2(3) far past", col: tcol{name: "v", typ: dbzType("long", nameTimestamp)}, raw: int64(math.MinInt64), wantErr: ErrOutOfRange},
		{name: "datetime2(7) nanos", col: tcol{name: "v", typ: dbzType("long", nameNanoTs), nullable: true}, raw: int64(1531481025340000000), wantType: Type{Kind: KindTimestampNTZ}, want: int64(1531481025340000)},
		{name: "datetime2(7) 100ns digit dropped", col: tcol{name: "v", typ: dbzType("long", nameNanoTs)}, raw: int64(1531481025340000070), wantType: Type{Kind: KindTimestampNTZ}, want: int64(1531481025340000)},
		{name: "datetime2(7) before epoch floors", col: tcol{name: "v", typ: dbzType("long", nameNanoTs)}, raw: int64(-100), wantType: Type{Kind: KindTimestampNTZ}, want: int64(-1)},

		// time.precision.mode=connect (Avro logical types).
		{name: "connect date", col: tcol{name: "v", typ: logicalType("int", "date", nameConnectDate)}, raw: int32(19797), wantType: Type{Kind: KindDate}, want: int32(19797)},
		{name: "connect time", col: tcol{name: "v", typ: logicalType("int", "time-millis", nameConnectTime)}, raw: int32(37425678), wantType: Type{Kind: KindTime}, want: int64(37425678000)},
		{name: "connect timestamp", col: tcol{name: "v", typ: logicalType("long", "timestamp-millis", nameConnectTs), nullable: true}, raw: int64(1710498645123), wantType: Type{Kind: KindTimestampNTZ}, want: int64(1710498645123000)},
		{name: "bare timestamp-micros", col: tcol{name: "v", typ: map[string]any{"type": "long", "logicalType": "timestamp-micros"}}, raw: int64(5), wantType: Type{Kind: KindTimestampNTZ}, want: int64(5)},

		// datetimeoffset (ZonedTimestamp).
		{name: "datetimeoffset +11:00", col: tcol{name: "v", typ: dbzType("string", nameZonedTs), nullable: true}, raw: "2018-07-13T12:23:45.456+11:00", wantType: Type{Kind: KindTimestamp}, want: int64(1531445025456000)},
		{name: "datetimeoffset 7 digits", col: tcol{name: "v", typ: dbzType("string", nameZonedTs)}, raw: "2024-03-15T10:30:45.1234567+02:00", wantType: Type{Kind: KindTimestamp}, want: int64(1710491445123456)},
		{name: "datetimeoffset negative offset", col: tcol{name: "v", typ: dbzType("string", nameZonedTs)}, raw: "2024-03-15T10:30:45-08:00", wantType: Type{Kind: KindTimestamp}, want: int64(1710527445000000)},
		{name: "datetimeoffset Z", col: tcol{name: "v", typ: dbzType("string", nameZonedTs)}, raw: "2024-03-15T10:30:45Z", wantType: Type{Kind: KindTimestamp}, want: int64(1710498645000000)},
		{name: "datetimeoffset 0001-01-01Z", col: tcol{name: "v", typ: dbzType("string", nameZonedTs)}, raw: "0001-01-01T00:00:00Z", wantType: Type{Kind: KindTimestamp}, want: int64(-62135596800000000)},
		{name: "datetimeoffset before year 1 in UTC", col: tcol{name: "v", typ: dbzType("string", nameZonedTs)}, raw: "0001-01-01T00:30:00+01:00", wantErr: ErrOutOfRange},
		{name: "datetimeoffset after 9999 in UTC", col: tcol{name: "v", typ: dbzType("string", nameZonedTs)}, raw: "9999-12-31T23:59:59.9999999-01:00", wantErr: ErrOutOfRange},
		{name: "datetimeoffset garbage", col: tcol{name: "v", typ: dbzType("string", nameZonedTs)}, raw: "yesterday", wantErr: ErrBadBody},

		// Unchanged LOB placeholder, in every rendering.
		{name: "placeholder string", col: tcol{name: "v", typ: "string", nullable: true}, raw: DefaultPlaceholder, wantType: Type{Kind: KindString}, unavailable: true},
		{name: "placeholder bytes", col: tcol{name: "v", typ: "bytes", nullable: true}, raw: placeholder, wantType: Type{Kind: KindBinary}, unavailable: true},
		{name: "placeholder base64", opts: Options{BinaryHandling: BinaryBase64}, col: tcol{name: "v", typ: propagated("string", "VARBINARY", "2147483647", "")}, raw: "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==", wantType: Type{Kind: KindBinary}, unavailable: true},
		{name: "placeholder hex", opts: Options{BinaryHandling: BinaryHex}, col: tcol{name: "v", typ: propagated("string", "VARBINARY", "2147483647", "")}, raw: "5f5f646562657a69756d5f756e617661696c61626c655f76616c7565", wantType: Type{Kind: KindBinary}, unavailable: true},
		{name: "custom placeholder", opts: Options{Placeholder: "<skip>"}, col: tcol{name: "v", typ: "string"}, raw: "<skip>", wantType: Type{Kind: KindString}, unavailable: true},
		{name: "default placeholder not special when customised", opts: Options{Placeholder: "<skip>"}, col: tcol{name: "v", typ: "string"}, raw: DefaultPlaceholder, wantType: Type{Kind: KindString}, want: DefaultPlaceholder},

		// Union order: a column with a SQL default is [T,"null"].
		{name: "null-last union", col: tcol{name: "v", typ: "string", nullable: true, nullLast: true, def: "x"}, raw: "y", wantType: Type{Kind: KindString}, want: "y"},
		{name: "null-last union null", col: tcol{name: "v", typ: "int", nullable: true, nullLast: true, def: 0}, raw: nil, wantType: Type{Kind: KindInteger}, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := decodeOne(t, tc.opts, tc.col, tc.raw)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				var de *DecodeError
				require.ErrorAs(t, err, &de)
				return
			}
			require.NoError(t, err)
			require.Len(t, ch.Row, 2)
			col := ch.Layout.Columns[1]
			require.Equal(t, tc.wantType, col.Type)
			require.Equal(t, tc.col.nullable, col.Nullable)
			require.Equal(t, int32(1), ch.Row[0])
			if tc.unavailable {
				require.Equal(t, []int{1}, ch.Unavailable)
				require.True(t, ch.IsUnavailable(1))
				require.Nil(t, ch.Row[1])
				return
			}
			require.Empty(t, ch.Unavailable)
			require.Equal(t, tc.want, ch.Row[1])
		})
	}
}

func TestRangeErrorCarriesColumn(t *testing.T) {
	_, err := decodeOne(t, Options{}, tcol{name: "shipped", typ: dbzType("int", nameDate)}, int32(-719163))
	var re *RangeError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "shipped", re.Column)
	require.Equal(t, Type{Kind: KindDate}, re.Type)
	require.Equal(t, "-719163 days", re.Value)
}

func TestTimeColumnCommentNamesUnit(t *testing.T) {
	ch, err := decodeOne(t, Options{}, tcol{name: "v", typ: propagated(dbzType("long", nameNanoTime), "TIME", "16", "7")}, int64(0))
	require.NoError(t, err)
	require.Equal(t, "TIME(7); time of day in microseconds since midnight", ch.Layout.Columns[1].Comment)
	ch, err = decodeOne(t, Options{}, tcol{name: "v", typ: dbzType("int", nameTime)}, int32(0))
	require.NoError(t, err)
	require.Equal(t, "time of day in microseconds since midnight", ch.Layout.Columns[1].Comment)
}

func TestBinaryValueDoesNotAliasRecord(t *testing.T) {
	d, key, value := buildOne(t, Options{}, tcol{name: "v", typ: "bytes"}, []byte{1, 2, 3})
	ch, err := d.Decode(t.Context(), key, value)
	require.NoError(t, err)
	for i := range value {
		value[i] = 0xff // the consumer may reuse or free the record buffer
	}
	require.Equal(t, []byte{1, 2, 3}, ch.Row[1])
}

func TestRefusedSourceTypesNamed(t *testing.T) {
	// What PostgreSQL and MySQL columns Debezium maps to shapes without a
	// faithful Delta type is refused with the type's name and the fix.
	vsd := map[string]any{"type": "record", "name": "VariableScaleDecimal", "namespace": "io.debezium.data",
		"fields":       []any{map[string]any{"name": "scale", "type": "int"}, map[string]any{"name": "value", "type": "bytes"}},
		"connect.name": "io.debezium.data.VariableScaleDecimal"}
	tests := []struct {
		name string
		col  tcol
		want []string
	}{
		{"numeric without precision", tcol{name: "nfree", typ: vsd}, []string{`column "nfree"`, "VariableScaleDecimal", "decimal.handling.mode=string"}},
		{"array", tcol{name: "arr", typ: map[string]any{"type": "array", "items": "int"}}, []string{`column "arr"`, "array", "column.exclude.list"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deriveColumn(fieldSchemaJSON(t, tc.col), &Options{})
			require.ErrorIs(t, err, ErrUnsupportedSchema)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// fieldSchemaJSON is fieldSchema as the decoder sees it (through JSON).
func fieldSchemaJSON(t *testing.T, c tcol) map[string]any {
	t.Helper()
	b, err := json.Marshal(fieldSchema(c))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}
