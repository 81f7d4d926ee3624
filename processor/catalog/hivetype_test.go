package catalog

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestHiveTypeRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		t    deltalog.Type
		hive string
	}{
		{deltalog.TypeLong, "bigint"},
		{deltalog.TypeInteger, "int"},
		{deltalog.TypeShort, "smallint"},
		{deltalog.TypeByte, "tinyint"},
		{deltalog.TypeString, "string"},
		{deltalog.TypeTimestamp, "timestamp"},
		{deltalog.DecimalType{Precision: 38, Scale: 6}, "decimal(38,6)"},
		{&deltalog.ArrayType{ElementType: deltalog.TypeDate, ContainsNull: true}, "array<date>"},
		{&deltalog.MapType{KeyType: deltalog.TypeString, ValueType: deltalog.TypeDouble, ValueContainsNull: true}, "map<string,double>"},
		{&deltalog.StructType{Fields: []deltalog.StructField{{Name: "a", Type: deltalog.TypeInteger, Nullable: true},
			{Name: "b", Type: &deltalog.ArrayType{ElementType: deltalog.TypeBinary, ContainsNull: true}, Nullable: true}}}, "struct<a:int,b:array<binary>>"},
	} {
		require.Equal(t, tc.hive, HiveType(tc.t))
		back, err := ParseHiveType(tc.hive)
		require.NoError(t, err, tc.hive)
		require.Equal(t, tc.t, back, tc.hive)
	}
	require.Equal(t, "timestamp", HiveType(deltalog.TypeTimestampNTZ), "Hive has no timestamp without time zone")
	for s, want := range map[string]deltalog.Type{"varchar(20)": deltalog.TypeString, "DECIMAL": deltalog.DecimalType{Precision: 10}, "Long": deltalog.TypeLong} {
		got, err := ParseHiveType(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	_, err := ParseHiveType("struct<a:int")
	require.Error(t, err)
	_, err = ParseHiveType("geometry")
	require.ErrorContains(t, err, `reading column type "geometry": unknown type`)
}
