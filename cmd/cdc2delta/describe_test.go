package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

func TestDescribeTypesAndPartitions(t *testing.T) {
	dir := t.TempDir()
	inner := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "a", Type: deltalog.TypeInteger, Nullable: true},
		{Name: "unit-price", Type: deltalog.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
	}}
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong},
		{Name: "tags", Nullable: true, Type: &deltalog.ArrayType{ElementType: deltalog.TypeString, ContainsNull: true}},
		{Name: "attrs", Nullable: true, Type: &deltalog.MapType{KeyType: deltalog.TypeString, ValueType: deltalog.TypeInteger, ValueContainsNull: true}},
		{Name: "s", Nullable: true, Type: &deltalog.StructType{Fields: []deltalog.StructField{
			{Name: "a", Type: deltalog.TypeInteger, Nullable: true},
			{Name: "b", Type: deltalog.TypeString, Nullable: true},
			{Name: "items", Nullable: true, Type: &deltalog.ArrayType{ElementType: inner, ContainsNull: true}},
		}}},
		{Name: "m", Nullable: true, Type: &deltalog.MapType{KeyType: deltalog.TypeString,
			ValueType: &deltalog.ArrayType{ElementType: &deltalog.MapType{KeyType: deltalog.TypeLong, ValueType: inner}}}},
		{Name: "p", Type: deltalog.TypeString, Nullable: true},
		{Name: "n", Type: deltalog.TypeInteger, Nullable: true},
	}}
	p, n := "x", int32(1)
	createTable(t, dir, schema, []string{"p", "n"}, [][]any{{int64(1), nil, nil, nil, []datafile.KV{}, p, n}})

	const items = "array<struct<a:integer,`unit-price`:decimal(10,2)>>"
	want := []columnInfo{
		{Name: "id", Type: "long"},
		{Name: "tags", Type: "array<string>", Nullable: true},
		{Name: "attrs", Type: "map<string,integer>", Nullable: true},
		{Name: "s", Type: "struct<a:integer,b:string,items:" + items + ">", Nullable: true},
		{Name: "s.a", Type: "integer", Nullable: true},
		{Name: "s.b", Type: "string", Nullable: true},
		{Name: "s.items", Type: items, Nullable: true},
		{Name: "m", Type: "map<string,array<map<long,struct<a:integer,`unit-price`:decimal(10,2)>>>>", Nullable: true},
		{Name: "p", Type: "string", Nullable: true},
		{Name: "n", Type: "integer", Nullable: true},
	}
	r := cli(t, "describe", "--json", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	var d tableDescription
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	require.Equal(t, want, d.Columns)
	require.Contains(t, r.stdout, `"type": "map<string,integer>"`, "no HTML escaping")
	require.Equal(t, []string{"p", "n"}, d.PartitionColumns)

	r = cli(t, "describe", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "\nPartitioned by:    p, n\n")
	require.Contains(t, r.stdout, "\n  s.items  "+items+"  ")

	tests := []struct {
		table string
		want  string
	}{
		{"spark-partitioned", "\nPartitioned by:    p, n\n"},
		{"spark-colmap", "\nPartitioned by:    p\n"},
		{"spark-merge", "\nPartitioned by:    none\n"},
	}
	for _, tc := range tests {
		t.Run(tc.table, func(t *testing.T) {
			r := cli(t, "describe", filepath.Join("..", "..", "deltalog", "testdata", "tables", tc.table))
			require.Equal(t, exitOK, r.code, r.stderr)
			require.Contains(t, r.stdout, tc.want)
			require.False(t, strings.Contains(r.stdout, "Partitioned by:    \n"))
		})
	}
}
