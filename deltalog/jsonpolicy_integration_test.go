//go:build integration

package deltalog_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// A schemaString written without HTML escaping, with <, > and & in a comment, a
// field metadata value and a column name, is read by delta-rs and DuckDB: the
// comment arrives intact and the rows, with such characters in values and
// stats, read back.
func TestEnginesReadUnescapedLogJSON(t *testing.T) {
	dir := t.TempDir()
	st, err := localstore.New(localstore.Options{Dir: dir, NoSync: true})
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), st)
	require.NoError(t, err)
	schema := htmlSchema()
	w, err := datafile.NewWriter(datafile.Options{Schema: schema})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), st, [][]any{{int64(1), []any{"x<y"}, "p&q"}, {int64(2), nil, "<b>"}})
	require.NoError(t, err)
	actions := createActions(t, schema, nil)
	for i := range adds {
		actions = append(actions, deltalog.Action{Add: &adds[i]})
	}
	_, err = tbl.Commit(t.Context(), nil, actions, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)

	out := fulltier.PythonCode(t, `
import json, sys, deltalake
dt = deltalake.DeltaTable(sys.argv[1])
print(json.dumps({f.name: f.metadata for f in dt.schema().fields}))
`, dir)
	var meta map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &meta), out)
	require.Equal(t, "key <pk> & more", meta["id"]["comment"])
	require.Equal(t, "array<string>", meta["tags"]["cdc2delta.type"])

	for _, e := range []fulltier.Engine{fulltier.DeltaRS, fulltier.DuckDB} {
		got := fulltier.ReadTable(t, e, dir, fulltier.ReadOptions{RowsOnly: true})
		require.Equal(t, []string{"id", "tags", "a&b"}, got.Columns(), "%s", e)
		require.Len(t, got.Rows, 2, "%s", e)
		require.Equal(t, "p&q", got.Rows[0]["a&b"], "%s", e)
		require.Equal(t, "<b>", got.Rows[1]["a&b"], "%s", e)
	}
}
