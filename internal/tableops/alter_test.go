package tableops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// legacyTable is a table on protocol (1,2) with one file of rows (id, "Unit Price").
func legacyTable(t *testing.T) (*deltalog.Table, deltalog.Store) {
	t.Helper()
	store := memstore.New(memstore.Options{})
	return legacyTableIn(t, store), store
}

// legacyTableIn is legacyTable in store.
func legacyTableIn(t *testing.T, store deltalog.Store) *deltalog.Table {
	t.Helper()
	ctx := t.Context()
	tbl, err := deltalog.Open(ctx, store, deltalog.DisableCheckpoints())
	require.NoError(t, err)
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong, Nullable: true},
		{Name: "price", Type: deltalog.TypeString, Nullable: true},
	}}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	proto := deltalog.MinimalProtocol(schema, nil)
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, proto)
	w, err := datafile.NewWriter(datafile.Options{Schema: schema})
	require.NoError(t, err)
	adds, err := w.Write(ctx, store, [][]any{{int64(1), "a"}, {int64(2), "b"}})
	require.NoError(t, err)
	actions := []deltalog.Action{{Protocol: &proto}, {Metadata: &deltalog.Metadata{ID: "aaaaaaaa-2222-3333-4444-555555555555",
		Format: deltalog.Format{Provider: "parquet"}, SchemaString: ss, Configuration: map[string]string{}}}}
	for _, a := range adds {
		actions = append(actions, deltalog.Action{Add: &a})
	}
	_, err = tbl.Commit(ctx, nil, actions, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
	return tbl
}

func TestAlterRefusesBadProperties(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts tableops.AlterOptions
		want string
	}{
		{"unknown delta key", tableops.AlterOptions{Set: map[string]string{"delta.logRetentionDurations": "7 days"}}, "unknown Delta table property"},
		{"bad interval", tableops.AlterOptions{Set: map[string]string{"delta.logRetentionDuration": "7 fortnights"}}, "an interval"},
		{"months", tableops.AlterOptions{Set: map[string]string{"delta.deletedFileRetentionDuration": "interval 1 month"}}, "an interval"},
		{"bad bool", tableops.AlterOptions{Set: map[string]string{"delta.appendOnly": "yes"}}, "true or false"},
		{"bad int", tableops.AlterOptions{Set: map[string]string{"delta.checkpointInterval": "0"}}, "positive integer"},
		{"protocol key", tableops.AlterOptions{Set: map[string]string{"delta.minReaderVersion": "2"}}, "Delta sets it itself"},
		{"mode id", tableops.AlterOptions{Set: map[string]string{"delta.columnMapping.mode": "id"}}, "new table"},
		{"unsupported feature", tableops.AlterOptions{Set: map[string]string{"delta.enableRowTracking": "true"}}, "does not set"},
		{"unset missing", tableops.AlterOptions{Unset: []string{"owner"}}, "does not have it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, _ := legacyTable(t)
			snap, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			_, err = tableops.Alter(t.Context(), tbl, snap, tc.opts)
			var pe *deltalog.PropertyError
			require.ErrorAs(t, err, &pe)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestAlterSetsAndUnsetsAsSpark(t *testing.T) {
	ctx := t.Context()
	tbl, _ := legacyTable(t)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	// Case as the user wrote it; the key is stored as Delta spells it.
	res, err := tableops.Alter(ctx, tbl, snap, tableops.AlterOptions{Set: map[string]string{"delta.LogRetentionDuration": "interval 7 days", "owner": "ops"}})
	require.NoError(t, err)
	require.False(t, res.Upgraded)
	ci, err := tbl.CommitInfo(ctx, res.Version)
	require.NoError(t, err)
	require.Equal(t, "SET TBLPROPERTIES", ci.Operation)
	require.JSONEq(t, `{"delta.logRetentionDuration":"interval 7 days","owner":"ops"}`, ci.OperationParameters.Text("properties"))
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"delta.logRetentionDuration": "interval 7 days", "owner": "ops"}, snap.Metadata().Configuration)

	_, err = tableops.Alter(ctx, tbl, snap, tableops.AlterOptions{Set: map[string]string{"owner": "ops"}})
	require.ErrorIs(t, err, tableops.ErrNoChange)

	res, err = tableops.Alter(ctx, tbl, snap, tableops.AlterOptions{Unset: []string{"owner"}})
	require.NoError(t, err)
	ci, err = tbl.CommitInfo(ctx, res.Version)
	require.NoError(t, err)
	require.Equal(t, "UNSET TBLPROPERTIES", ci.Operation)
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"delta.logRetentionDuration": "interval 7 days"}, snap.Metadata().Configuration)
}

func TestAlterEnablesColumnMapping(t *testing.T) {
	ctx := t.Context()
	tbl, store := legacyTable(t)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	set := tableops.AlterOptions{Set: map[string]string{"delta.columnMapping.mode": "name"}}
	_, err = tableops.Alter(ctx, tbl, snap, set)
	var pu *tableops.ProtocolUpgradeError
	require.ErrorAs(t, err, &pu)
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, pu.To)

	set.UpgradeProtocol = true
	res, err := tableops.Alter(ctx, tbl, snap, set)
	require.NoError(t, err)
	require.True(t, res.Upgraded)
	require.Equal(t, 2, res.MappedColumns)
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, snap.Protocol())
	require.Equal(t, "2", snap.Metadata().Configuration[deltalog.PropColumnMappingMaxID])
	for i, f := range snap.Schema().Fields {
		id, ok := deltalog.ColumnID(f)
		require.True(t, ok)
		require.Equal(t, int64(i+1), id)
		require.Equal(t, f.Name, deltalog.PhysicalName(f), "existing columns keep their names in the data files")
	}
	// The old files read through the mapping.
	meta := snap.Metadata()
	var rows [][]any
	for _, a := range snap.Files() {
		r, err := datafile.Read(ctx, store, &a, snap.Schema(), datafile.ReadOptions{Properties: meta.Configuration})
		require.NoError(t, err)
		rows = append(rows, r...)
	}
	require.Equal(t, [][]any{{int64(1), "a"}, {int64(2), "b"}}, rows)

	_, err = tableops.Alter(ctx, tbl, snap, tableops.AlterOptions{Set: map[string]string{"delta.columnMapping.mode": "none"}})
	require.ErrorContains(t, err, "cannot be turned off")
}

// A table already on table features gets column mapping as a listed feature.
func TestAlterColumnMappingOnFeaturesTable(t *testing.T) {
	f := newFixture(t)
	snap := f.snapshot(t, -1)
	require.Equal(t, 7, snap.Protocol().MinWriterVersion)
	res, err := tableops.Alter(t.Context(), f.table, snap, tableops.AlterOptions{
		Set: map[string]string{"delta.columnMapping.mode": "name"}, UpgradeProtocol: true})
	require.NoError(t, err)
	require.Contains(t, res.Protocol.ReaderFeatures, deltalog.FeatureColumnMapping)
	require.Contains(t, res.Protocol.WriterFeatures, deltalog.FeatureColumnMapping)
	require.Contains(t, res.Protocol.ReaderFeatures, deltalog.FeatureDeletionVectors)
	require.Equal(t, []int64{1, 3, 4, 5, 6}, f.ids(t, -1))
}
