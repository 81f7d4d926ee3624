package deltalog_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestNeedsColumnMapping(t *testing.T) {
	for name, want := range map[string]bool{
		"plain": false, "Unit Price": true, "Qty (kg)": true, "a,b": true, "a;b": true, "a{b}": true,
		"a=b": true, "a\tb": true, "a\nb": true, "under_score": false, "dash-ok": false, "ünï": false,
	} {
		require.Equal(t, want, deltalog.NeedsColumnMapping(name), name)
	}
}

func cmSchema() *deltalog.StructType {
	return &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "Unit Price", Type: deltalog.TypeDouble, Nullable: true, Metadata: map[string]any{"comment": "per unit"}},
		{Name: "addr", Type: &deltalog.StructType{Fields: []deltalog.StructField{
			{Name: "City", Type: deltalog.TypeString, Nullable: true},
		}}, Nullable: true},
		{Name: "items", Type: &deltalog.ArrayType{ElementType: &deltalog.StructType{Fields: []deltalog.StructField{
			{Name: "Qty (kg)", Type: deltalog.TypeDouble, Nullable: true},
		}}, ContainsNull: true}, Nullable: true},
	}}
}

func TestAssignColumnMapping(t *testing.T) {
	in := cmSchema()
	st, maxID := deltalog.AssignColumnMapping(in, 0)
	require.Equal(t, int64(5), maxID)
	require.Nil(t, in.Fields[1].Type.(*deltalog.StructType).Fields[0].Metadata, "input is not modified")

	seenIDs, seenNames := map[int64]bool{}, map[string]bool{}
	var check func(st *deltalog.StructType)
	check = func(st *deltalog.StructType) {
		for _, f := range st.Fields {
			id, ok := deltalog.ColumnID(f)
			require.True(t, ok, f.Name)
			require.False(t, seenIDs[id])
			seenIDs[id] = true
			pn := deltalog.PhysicalName(f)
			require.True(t, strings.HasPrefix(pn, "col-"), pn)
			require.False(t, seenNames[pn])
			seenNames[pn] = true
			switch t := f.Type.(type) {
			case *deltalog.StructType:
				check(t)
			case *deltalog.ArrayType:
				check(t.ElementType.(*deltalog.StructType))
			}
		}
	}
	check(st)
	require.Len(t, seenIDs, 5)
	require.Equal(t, "per unit", st.Fields[0].Metadata["comment"], "other metadata kept")

	// Ids survive a JSON round trip and adding a column assigns the next id only to it.
	ss, err := st.SchemaString()
	require.NoError(t, err)
	back, err := deltalog.ParseSchema(ss)
	require.NoError(t, err)
	back.Fields = append(back.Fields, deltalog.StructField{Name: "new col", Type: deltalog.TypeLong, Nullable: true})
	grown, maxID2 := deltalog.AssignColumnMapping(back, maxID)
	require.Equal(t, int64(6), maxID2)
	id, _ := deltalog.ColumnID(grown.Fields[3])
	require.Equal(t, int64(6), id)
	require.Equal(t, deltalog.PhysicalName(st.Fields[0]), deltalog.PhysicalName(grown.Fields[0]))

	// Logical ↔ physical paths, nested through a struct and an array of structs.
	phys, err := deltalog.ToPhysical(grown, []string{"addr", "city"})
	require.NoError(t, err)
	require.Equal(t, deltalog.PhysicalName(grown.Fields[1]), phys[0])
	logical, err := deltalog.ToLogical(grown, phys)
	require.NoError(t, err)
	require.Equal(t, []string{"addr", "City"}, logical)
	phys, err = deltalog.ToPhysical(grown, []string{"items", "element", "Qty (kg)"})
	require.NoError(t, err)
	require.Len(t, phys, 3)
	_, err = deltalog.ToPhysical(grown, []string{"missing"})
	require.Error(t, err)

	ps := deltalog.PhysicalSchema(grown)
	require.Equal(t, deltalog.PhysicalName(grown.Fields[0]), ps.Fields[0].Name)
}

func TestCreateColumnMappedTable(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t)
	st, maxID := deltalog.AssignColumnMapping(cmSchema(), 0)
	config := map[string]string{"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "5"}
	require.Equal(t, int64(5), maxID)
	_, err := tbl.Commit(ctx, nil, createActions(t, st, config), deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, snap.Protocol())
	require.Equal(t, "Unit Price", snap.Schema().Fields[0].Name)

	// Without ids the commit is refused.
	tbl2, _, _ := newMemTable(t)
	_, err = tbl2.Commit(ctx, nil, createActions(t, cmSchema(), config), deltalog.Operation{Name: deltalog.OpCreateTable})
	require.ErrorIs(t, err, deltalog.ErrInvalidCommit)
}
