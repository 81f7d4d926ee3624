package tableops_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

// dmlTable describes a table for the UPDATE and DELETE tests.
type dmlTable struct {
	schema     *deltalog.StructType
	partitions []string
	dv, cdf    bool
	mapping    bool
	// files are the rows of each data file of version 0, one add each.
	files [][][]any
}

// create writes the table into store at version 0 and returns it with its snapshot.
func (d dmlTable) create(t *testing.T, store deltalog.Store, opts ...deltalog.Option) (*deltalog.Table, *deltalog.Snapshot) {
	t.Helper()
	ctx := t.Context()
	schema := d.schema
	conf := map[string]string{}
	if d.dv {
		conf[deltalog.PropEnableDeletionVectors] = "true"
	}
	if d.cdf {
		conf[deltalog.PropEnableChangeDataFeed] = "true"
	}
	if d.mapping {
		var maxID int64
		schema, maxID = deltalog.AssignColumnMapping(schema, 0)
		conf[deltalog.PropColumnMappingMode] = "name"
		conf[deltalog.PropColumnMappingMaxID] = strconv.FormatInt(maxID, 10)
	}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	meta := deltalog.Metadata{
		ID: uuid.NewString(), Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString: ss, PartitionColumns: d.partitions, Configuration: conf,
	}
	proto := deltalog.MinimalFeaturesProtocol(schema, conf)
	tbl, err := deltalog.Open(ctx, store, opts...)
	require.NoError(t, err)
	w, err := datafile.NewWriter(datafile.Options{Schema: schema, PartitionColumns: d.partitions, Properties: conf})
	require.NoError(t, err)
	actions := []deltalog.Action{{Protocol: &proto}, {Metadata: &meta}}
	for _, rows := range d.files {
		adds, err := w.Write(ctx, store, rows)
		require.NoError(t, err)
		for _, a := range adds {
			actions = append(actions, deltalog.Action{Add: &a})
		}
	}
	_, err = tbl.Commit(ctx, nil, actions, deltalog.Operation{Name: deltalog.OpWrite, Parameters: map[string]string{"mode": `"Append"`}})
	require.NoError(t, err)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	return tbl, snap
}

// tableRows reads every live row of snap, rendered and sorted.
func tableRows(t *testing.T, tbl *deltalog.Table, snap *deltalog.Snapshot) []string {
	t.Helper()
	meta := snap.Metadata()
	var out []string
	for _, f := range snap.Files() {
		rows, err := datafile.Read(t.Context(), tbl.Store(), &f, snap.Schema(), datafile.ReadOptions{
			Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns,
		})
		require.NoError(t, err)
		for _, r := range rows {
			out = append(out, renderRow(r))
		}
	}
	slices.Sort(out)
	return out
}

func renderRow(r []any) string {
	parts := make([]string, len(r))
	for i, v := range r {
		switch x := v.(type) {
		case nil:
			parts[i] = "NULL"
		case []byte:
			parts[i] = fmt.Sprintf("%x", x)
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return strings.Join(parts, "|")
}
