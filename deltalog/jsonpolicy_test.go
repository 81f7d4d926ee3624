package deltalog_test

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// htmlSchema has <, > and & in a column comment, a metadata value and a name, as
// a source type "array<string>" or a comment "a < b & c" puts them there.
func htmlSchema() *deltalog.StructType {
	return &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong, Metadata: map[string]any{"comment": "key <pk> & more"}},
		{Name: "tags", Type: &deltalog.ArrayType{ElementType: deltalog.TypeString, ContainsNull: true}, Nullable: true,
			Metadata: map[string]any{"cdc2delta.type": "array<string>"}},
		{Name: "a&b", Type: deltalog.TypeString, Nullable: true},
	}}
}

// The log is written as Spark and delta-rs write it: no HTML escaping, the
// schemaString included; and the table reads back, from the commit file and from
// a checkpoint, with the comment intact.
func TestLogJSONNotHTMLEscaped(t *testing.T) {
	schema := htmlSchema()
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	require.Contains(t, ss, `"comment":"key <pk> & more"`)
	require.Contains(t, ss, `"array<string>"`)
	require.Contains(t, ss, `"name":"a&b"`)
	back, err := deltalog.ParseSchema(ss)
	require.NoError(t, err)
	require.Equal(t, schema.Fields[0].Metadata, back.Fields[0].Metadata)

	tbl, st, _ := newMemTable(t)
	_, err = tbl.Commit(t.Context(), nil, createActions(t, schema, nil), deltalog.Operation{
		Name: deltalog.OpCreateTable, Parameters: map[string]string{"note": "x > 1 && y < 2"}})
	require.NoError(t, err)
	raw := readObject(t, st, "_delta_log/00000000000000000000.json")
	for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
		require.NotContains(t, raw, esc, "commit file:\n%s", raw)
	}

	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Equal(t, "key <pk> & more", snap.Schema().Fields[0].Metadata["comment"])
	_, err = tbl.Checkpoint(t.Context(), snap)
	require.NoError(t, err)
	fromCkpt, err := deltalog.Open(t.Context(), st)
	require.NoError(t, err)
	snap2, err := fromCkpt.Snapshot(t.Context())
	require.NoError(t, err)
	require.Equal(t, ss, snap2.Metadata().SchemaString)
}

// Tables written by older versions hold an HTML-escaped schemaString: the same
// schema must compare equal, or a schema check would commit a metaData action
// that changes nothing but stops streaming readers.
func TestSameSchemaStringAcrossEscaping(t *testing.T) {
	ss, err := htmlSchema().SchemaString()
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal([]byte(ss), &v))
	escaped, err := json.Marshal(v) // the old spelling, keys sorted as well
	require.NoError(t, err)
	require.Contains(t, string(escaped), `\u003c`)

	require.True(t, deltalog.SameSchemaString(ss, string(escaped)))
	require.True(t, deltalog.Metadata{SchemaString: ss}.Equal(deltalog.Metadata{SchemaString: string(escaped)}))

	other, err := testSchema().SchemaString()
	require.NoError(t, err)
	require.False(t, deltalog.SameSchemaString(ss, other))
	require.False(t, deltalog.SameSchemaString(ss, "{not json"))
}

func readObject(t *testing.T, st *memstore.Store, p string) string {
	t.Helper()
	rc, err := st.Get(t.Context(), p)
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return string(b)
}
