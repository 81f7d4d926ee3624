package datafile

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

func statsOf(t *testing.T, add deltalog.Add) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(add.Stats), &m))
	return m
}

func TestStatsExact(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("name", deltalog.TypeString, true),
		field("ok", deltalog.TypeBoolean, true),
		field("ts", deltalog.TypeTimestamp, true),
		field("ntz", deltalog.TypeTimestampNTZ, true),
		field("d", deltalog.TypeDate, true),
		field("amt", deltalog.DecimalType{Precision: 10, Scale: 2}, true),
		field("f", deltalog.TypeFloat, true),
		field("st", &deltalog.StructType{Fields: []deltalog.StructField{field("x", deltalog.TypeInteger, true)}}, true),
		field("arr", &deltalog.ArrayType{ElementType: deltalog.TypeLong, ContainsNull: true}, true),
		field("bin", deltalog.TypeBinary, true),
	}}
	long := strings.Repeat("z", 40)
	rows := [][]any{
		{int64(5), "bob", true, int64(1_000_001_500), int64(1_500), int32(18000), decimal128.FromInt64(-1234), float32(0.1), []any{int32(7)}, []any{int64(1)}, []byte{1}},
		{int64(-3), long, nil, int64(1_000_000_000), int64(-1_500), int32(-1), decimal128.FromInt64(99), float32(-2), nil, nil, nil},
		{int64(9), nil, false, nil, nil, nil, nil, nil, []any{nil}, []any{}, []byte{}},
	}
	adds, _, _ := writeRead(t, Options{Schema: schema}, rows)
	require.Len(t, adds, 1)
	want := `{"numRecords":3,
	 "minValues":{"id":-3,"name":"bob","ts":"1970-01-01T00:16:40.000Z","ntz":"1969-12-31T23:59:59.998","d":"1969-12-31","amt":-12.34,"f":-2,"st":{"x":7}},
	 "maxValues":{"id":9,"name":"` + strings.Repeat("z", 32) + "\U0010FFFF" + `","ts":"1970-01-01T00:16:40.002Z","ntz":"1970-01-01T00:00:00.002","d":"2019-04-14","amt":0.99,"f":0.10000000149011612,"st":{"x":7}},
	 "nullCount":{"id":0,"name":1,"ok":1,"ts":1,"ntz":1,"d":1,"amt":1,"f":1,"st":{"x":2},"arr":1,"bin":1}}`
	require.JSONEq(t, want, adds[0].Stats)
}

func TestStatsOmitUnsafeBounds(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("nan", deltalog.TypeDouble, true),
		field("inf", deltalog.TypeDouble, true),
		field("max", deltalog.TypeString, true),
		field("bad", deltalog.TypeString, true),
	}}
	edge := strings.Repeat("a", 32) + "\U0010FFFF" + "b"
	rows := [][]any{
		{math.NaN(), math.Inf(1), edge, "\xff\xfe"},
		{1.5, -2.0, "a", "ok"},
	}
	adds, got, _ := writeRead(t, Options{Schema: schema}, rows)
	require.Equal(t, edge, got[0][2])
	st := statsOf(t, adds[0])
	minV, _ := st["minValues"].(map[string]any)
	maxV, _ := st["maxValues"].(map[string]any)
	require.NotContains(t, minV, "nan")
	require.NotContains(t, maxV, "nan")
	require.Equal(t, -2.0, minV["inf"])
	require.NotContains(t, maxV, "inf")
	require.Equal(t, "a", minV["max"])
	require.NotContains(t, maxV, "max", "prefix + U+10FFFF would sort below the real max")
	require.Equal(t, "ok", minV["bad"], "a valid UTF-8 min stays")
	require.NotContains(t, maxV, "bad", "invalid UTF-8 cannot be a JSON bound")
	require.Equal(t, map[string]any{"nan": 0.0, "inf": 0.0, "max": 0.0, "bad": 0.0}, st["nullCount"])
}

func TestStatsColumnSelection(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("a", deltalog.TypeLong, true),
		field("s", &deltalog.StructType{Fields: []deltalog.StructField{field("x", deltalog.TypeLong, true), field("y", deltalog.TypeLong, true)}}, true),
		field("p", deltalog.TypeString, true),
		field("Unit Price", deltalog.TypeLong, true),
	}}
	row := [][]any{{int64(1), []any{int64(2), int64(3)}, "part", int64(4)}}
	cases := []struct {
		name  string
		props map[string]string
		want  map[string]any
	}{
		{"default all", nil, map[string]any{"a": 0.0, "s": map[string]any{"x": 0.0, "y": 0.0}, "Unit Price": 0.0}},
		{"first two leaves", map[string]string{propNumIndexedCols: "2"}, map[string]any{"a": 0.0, "s": map[string]any{"x": 0.0}}},
		{"zero", map[string]string{propNumIndexedCols: "0"}, map[string]any{}},
		{"minus one", map[string]string{propNumIndexedCols: "-1"}, map[string]any{"a": 0.0, "s": map[string]any{"x": 0.0, "y": 0.0}, "Unit Price": 0.0}},
		{"stats columns", map[string]string{propStatsColumns: "s.y, `Unit Price`", propNumIndexedCols: "1"}, map[string]any{"s": map[string]any{"y": 0.0}, "Unit Price": 0.0}},
		{"whole struct", map[string]string{propStatsColumns: "s"}, map[string]any{"s": map[string]any{"x": 0.0, "y": 0.0}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			adds, _, _ := writeRead(t, Options{Schema: schema, PartitionColumns: []string{"p"}, Properties: tc.props}, row)
			st := statsOf(t, adds[0])
			nc, _ := st["nullCount"].(map[string]any)
			if len(tc.want) == 0 {
				require.Empty(t, nc)
				return
			}
			require.Equal(t, tc.want, nc)
		})
	}
}

func TestStatsTightBoundsWithDV(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{field("a", deltalog.TypeLong, true)}}
	adds, _, _ := writeRead(t, Options{Schema: schema, Properties: map[string]string{propDeletionVectors: "true"}}, [][]any{{int64(1)}})
	require.Equal(t, true, statsOf(t, adds[0])["tightBounds"])
	adds, _, _ = writeRead(t, Options{Schema: schema}, [][]any{{int64(1)}})
	require.NotContains(t, statsOf(t, adds[0]), "tightBounds")
}

// TestStatsBoundData checks min <= value <= max for every value of random data.
func TestStatsBoundData(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		field("i", deltalog.TypeInteger, true),
		field("s", deltalog.TypeString, true),
		field("ts", deltalog.TypeTimestampNTZ, true),
	}}
	var rows [][]any
	nulls := 0
	for i := range 500 {
		v := int32((i*7919)%1000 - 500)
		s := strings.Repeat(string(rune('a'+i%26)), i%50)
		var ts any = int64(i)*123_457 - 30_000_000
		if i%17 == 0 {
			ts = nil
			nulls++
		}
		rows = append(rows, []any{v, s, ts})
	}
	adds, _, _ := writeRead(t, Options{Schema: schema}, rows)
	st, ok, err := deltalog.ParseStats(adds[0].Stats)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(500), st.NumRecords)
	lo, _ := st.MinValues["i"].(json.Number).Int64()
	hi, _ := st.MaxValues["i"].(json.Number).Int64()
	smin, smax := st.MinValues["s"].(string), st.MaxValues["s"].(string)
	tmin, tmax := st.MinValues["ts"].(string), st.MaxValues["ts"].(string)
	for _, r := range rows {
		require.GreaterOrEqual(t, int64(r[0].(int32)), lo)
		require.LessOrEqual(t, int64(r[0].(int32)), hi)
		require.GreaterOrEqual(t, r[1].(string), smin)
		require.LessOrEqual(t, r[1].(string), smax)
		if r[2] != nil {
			f := timestampString(floorDiv(r[2].(int64), 1000), true).(string)
			require.GreaterOrEqual(t, f, tmin)
			require.LessOrEqual(t, f, tmax)
		}
	}
	n, _ := st.NullCount["ts"].(json.Number).Int64()
	require.Equal(t, int64(nulls), n)
}
