package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// createTable commits version 0 of a table in dir: schema, partition columns and the
// data files of rows (one per partition value).
func createTable(t *testing.T, dir string, schema *deltalog.StructType, partitionCols []string, rows [][]any) *deltalog.Table {
	t.Helper()
	ctx := t.Context()
	st, err := localstore.New(localstore.Options{Dir: dir, NoSync: true})
	require.NoError(t, err)
	tbl, err := deltalog.Open(ctx, st, deltalog.DisableCheckpoints())
	require.NoError(t, err)
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	conf := map[string]string{}
	proto := deltalog.MinimalProtocol(schema, conf)
	if partitionCols == nil {
		partitionCols = []string{}
	}
	actions := []deltalog.Action{
		{Protocol: &proto},
		{Metadata: &deltalog.Metadata{ID: "22222222-3333-4444-5555-666666666666",
			Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}}, SchemaString: ss,
			PartitionColumns: partitionCols, Configuration: conf}},
	}
	w, err := datafile.NewWriter(datafile.Options{Schema: schema, PartitionColumns: partitionCols, Properties: conf})
	require.NoError(t, err)
	adds, err := w.Write(ctx, st, rows)
	require.NoError(t, err)
	for _, a := range adds {
		actions = append(actions, deltalog.Action{Add: &a})
	}
	_, err = tbl.Commit(ctx, nil, actions, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
	return tbl
}
