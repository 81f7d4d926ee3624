package deltalog_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// sparkSchema is a schemaString as Spark writes it (key order, metadata always present,
// column mapping ids as numbers, a comment and an unknown metadata key).
const sparkSchema = `{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":false,"metadata":{"comment":"primary key","delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-a"}},` +
	`{"name":"amount","type":"decimal(38,18)","nullable":true,"metadata":{"custom":{"nested":[1,2.5,"x"]}}},` +
	`{"name":"ts","type":"timestamp_ntz","nullable":true,"metadata":{}},` +
	`{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},` +
	`{"name":"attrs","type":{"type":"map","keyType":"string","valueType":{"type":"struct","fields":[{"name":"v","type":"binary","nullable":true,"metadata":{}}]},"valueContainsNull":false},"nullable":true,"metadata":{}},` +
	`{"name":"s","type":{"type":"struct","fields":[{"name":"d","type":"date","nullable":true,"metadata":{}},{"name":"b","type":"byte","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}` +
	`]}`

func TestSchemaRoundTrip(t *testing.T) {
	st, err := deltalog.ParseSchema(sparkSchema)
	require.NoError(t, err)
	require.Len(t, st.Fields, 6)
	require.Equal(t, deltalog.DecimalType{Precision: 38, Scale: 18}, st.Fields[1].Type)
	require.Equal(t, "primary key", st.Fields[0].Metadata["comment"])
	id, ok := deltalog.ColumnID(st.Fields[0])
	require.True(t, ok)
	require.Equal(t, int64(1), id)
	m := st.Fields[4].Type.(*deltalog.MapType)
	require.False(t, m.ValueContainsNull)
	require.Equal(t, deltalog.TypeBinary, m.ValueType.(*deltalog.StructType).Fields[0].Type)

	out, err := st.SchemaString()
	require.NoError(t, err)
	require.Equal(t, sparkSchema, out, "byte-identical to Spark's JSON")
}

func TestParsePrimitiveSpellings(t *testing.T) {
	tests := []struct {
		in      string
		want    deltalog.Type
		wantErr bool
	}{
		{`"decimal(10,2)"`, deltalog.DecimalType{Precision: 10, Scale: 2}, false},
		{`"decimal( 10 , 2 )"`, deltalog.DecimalType{Precision: 10, Scale: 2}, false},
		{`"decimal(38,0)"`, deltalog.DecimalType{Precision: 38, Scale: 0}, false},
		{`"decimal(39,0)"`, nil, true},
		{`"decimal(5,6)"`, nil, true},
		{`"decimal(5)"`, nil, true},
		{`"timestamp"`, deltalog.TypeTimestamp, false},
		{`"integer"`, deltalog.TypeInteger, false},
		{`"int"`, nil, true},
		{`"variant"`, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			js := `{"type":"struct","fields":[{"name":"c","type":` + tc.in + `,"nullable":true,"metadata":{}}]}`
			st, err := deltalog.ParseSchema(js)
			if tc.wantErr {
				require.ErrorIs(t, err, deltalog.ErrInvalidSchema)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, st.Fields[0].Type)
		})
	}
}

func TestSchemaValidate(t *testing.T) {
	f := func(name string, typ deltalog.Type) deltalog.StructField {
		return deltalog.StructField{Name: name, Type: typ, Nullable: true}
	}
	tests := []struct {
		name    string
		st      *deltalog.StructType
		wantErr bool
	}{
		{"ok", &deltalog.StructType{Fields: []deltalog.StructField{f("a", deltalog.TypeLong), f("B", deltalog.TypeString)}}, false},
		{"dup case-insensitive", &deltalog.StructType{Fields: []deltalog.StructField{f("Name", deltalog.TypeLong), f("nAME", deltalog.TypeString)}}, true},
		{"dup nested", &deltalog.StructType{Fields: []deltalog.StructField{f("s", &deltalog.StructType{Fields: []deltalog.StructField{
			f("x", deltalog.TypeLong), f("X", deltalog.TypeLong)}})}}, true},
		{"same name different levels ok", &deltalog.StructType{Fields: []deltalog.StructField{f("x", deltalog.TypeLong), f("s", &deltalog.StructType{Fields: []deltalog.StructField{
			f("x", deltalog.TypeLong)}})}}, false},
		{"decimal too wide", &deltalog.StructType{Fields: []deltalog.StructField{f("d", deltalog.DecimalType{Precision: 40, Scale: 2})}}, true},
		{"empty name", &deltalog.StructType{Fields: []deltalog.StructField{f("", deltalog.TypeLong)}}, true},
		{"nil type", &deltalog.StructType{Fields: []deltalog.StructField{f("a", nil)}}, true},
		{"unknown primitive", &deltalog.StructType{Fields: []deltalog.StructField{f("a", deltalog.PrimitiveType("uuid"))}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.st.Validate()
			if tc.wantErr {
				require.ErrorIs(t, err, deltalog.ErrInvalidSchema)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

func TestSchemaMarshalAlwaysEmitsMetadata(t *testing.T) {
	st := &deltalog.StructType{Fields: []deltalog.StructField{{Name: "a", Type: deltalog.TypeLong}}}
	b, err := json.Marshal(st)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"struct","fields":[{"name":"a","type":"long","nullable":false,"metadata":{}}]}`, string(b))
	require.Contains(t, string(b), `"metadata":{}`)
}

func FuzzParseSchema(f *testing.F) {
	f.Add(sparkSchema)
	f.Add(`{"type":"struct","fields":[]}`)
	f.Add(`{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":{"type":"array","elementType":"long","containsNull":true},"containsNull":false},"nullable":true,"metadata":{}}]}`)
	f.Add(`"long"`)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<16 {
			return
		}
		st, err := deltalog.ParseSchema(s)
		if err != nil {
			return
		}
		// Whatever parses must re-encode and parse back to the same schema.
		out, err := st.SchemaString()
		require.NoError(t, err)
		st2, err := deltalog.ParseSchema(out)
		require.NoError(t, err)
		out2, err := st2.SchemaString()
		require.NoError(t, err)
		require.Equal(t, out, out2)
	})
}
