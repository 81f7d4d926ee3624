package main

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// valuesTable has one row of edge values: a decimal(38,10) with all 38 digits,
// non-finite floats at the top level and nested, and a string that HTML escaping mangles.
func valuesTable(t *testing.T, dir string) {
	t.Helper()
	dec := deltalog.DecimalType{Precision: 38, Scale: 10}
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong},
		{Name: "d", Type: dec, Nullable: true},
		{Name: "x", Type: deltalog.TypeDouble, Nullable: true},
		{Name: "f", Type: deltalog.TypeFloat, Nullable: true},
		{Name: "s", Nullable: true, Type: &deltalog.StructType{Fields: []deltalog.StructField{
			{Name: "z", Type: dec, Nullable: true},
			{Name: "n", Type: deltalog.TypeDouble, Nullable: true},
			{Name: "a", Type: deltalog.TypeString, Nullable: true},
		}}},
		{Name: "arr", Nullable: true, Type: &deltalog.ArrayType{ElementType: deltalog.TypeDouble, ContainsNull: true}},
		{Name: "m", Nullable: true, Type: &deltalog.MapType{KeyType: deltalog.TypeString, ValueType: deltalog.TypeFloat, ValueContainsNull: true}},
	}}
	big38, ok := new(big.Int).SetString("12345678901234567890123456780123456789", 10)
	require.True(t, ok)
	d38, ok := decimal128.FromBig(big38)
	require.True(t, ok)
	tiny := decimal128.FromInt64(-1) // -0.0000000001
	createTable(t, dir, schema, nil, [][]any{
		{int64(1), d38, math.NaN(), float32(math.Inf(1)), []any{tiny, math.Inf(-1), "a<b&c"},
			[]any{math.NaN(), 1.5, nil}, []datafile.KV{{Key: "k", Value: float32(math.Inf(-1))}}},
		{int64(2), tiny, math.Inf(1), float32(0.1), nil, nil, nil},
		{int64(3), nil, math.Inf(-1), float32(math.NaN()), nil, nil, nil},
	})
}

func TestShowValuesAsStored(t *testing.T) {
	dir := t.TempDir()
	valuesTable(t, dir)

	r := cli(t, "show", "--format", "jsonl", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3)
	var rows []map[string]any
	for _, line := range lines {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var m map[string]any
		require.NoError(t, dec.Decode(&m), line)
		rows = append(rows, m)
	}
	// A JSON number with every digit: a parser keeping numbers exact (UseNumber, Python's
	// parse_float=Decimal) gets the stored value back.
	require.Equal(t, json.Number("1234567890123456789012345678.0123456789"), rows[0]["d"])
	require.Equal(t, json.Number("-0.0000000001"), rows[1]["d"])
	require.Nil(t, rows[2]["d"])
	require.Equal(t, []any{"NaN", "Infinity", "-Infinity"}, []any{rows[0]["x"], rows[1]["x"], rows[2]["x"]})
	require.Equal(t, []any{"Infinity", json.Number("0.1"), "NaN"}, []any{rows[0]["f"], rows[1]["f"], rows[2]["f"]})
	require.Equal(t, []any{"NaN", json.Number("1.5"), nil}, rows[0]["arr"])
	require.Equal(t, []any{map[string]any{"key": "k", "value": "-Infinity"}}, rows[0]["m"])
	// Struct fields keep their schema order, strings are not HTML-escaped.
	require.Contains(t, lines[0], `"s":{"z":-0.0000000001,"n":"-Infinity","a":"a<b&c"}`)

	r = cli(t, "show", "--format", "csv", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "id,d,x,f,s,arr,m\n"+
		`1,1234567890123456789012345678.0123456789,NaN,Infinity,"{""z"":-0.0000000001,""n"":""-Infinity"",""a"":""a<b&c""}","[""NaN"",1.5,null]","[{""key"":""k"",""value"":""-Infinity""}]"`+"\n"+
		"2,-0.0000000001,Infinity,0.1,,,\n"+
		"3,,-Infinity,NaN,,,\n", r.stdout)

	r = cli(t, "show", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	lines = strings.Split(r.stdout, "\n")
	require.Equal(t, []string{"1", "1234567890123456789012345678.0123456789", "NaN", "Infinity"}, strings.Fields(lines[1])[:4])
	require.Equal(t, []string{"2", "-0.0000000001", "Infinity", "0.1", "NULL", "NULL", "NULL"}, strings.Fields(lines[2]))
	require.Equal(t, []string{"3", "NULL", "-Infinity", "NaN", "NULL", "NULL", "NULL"}, strings.Fields(lines[3]))
}
