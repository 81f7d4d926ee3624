package merge

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestDropAndAddStopsTheTable: a schema change that drops qty and adds quantity (same
// type) stops the table, naming both columns and both ways on, instead of filling qty
// with NULL; each way on then applies the change.
func TestDropAndAddStopsTheTable(t *testing.T) {
	key := &codecs.Layout{SchemaID: 31, Name: "k", Columns: []codecs.Column{{Name: "id", Type: kInt}}}
	l1 := &codecs.Layout{SchemaID: 32, Name: "v", Columns: []codecs.Column{{Name: "id", Type: kInt}, {Name: "qty", Type: kInt, Nullable: true}}}
	l2 := &codecs.Layout{SchemaID: 33, Name: "v", Columns: []codecs.Column{{Name: "id", Type: kInt}, {Name: "quantity", Type: kInt, Nullable: true}}}
	rec := func(l *codecs.Layout, p int, row ...any) Record {
		return Record{Offset: int64(p), Change: codecs.Change{Op: codecs.OpCreate, Table: codecs.TableID{Schema: "dbo", Table: "t"}, Pos: pos(p),
			Layout: l, KeyLayout: key, KeyIndex: []int{0}, Key: []any{row[0]}, Row: row}}
	}
	for _, tc := range []struct {
		name string
		fix  func(t *testing.T, tbl *deltalog.Table, snap *deltalog.Snapshot)
		want []map[string]any
	}{
		{"renamed at the source", func(t *testing.T, tbl *deltalog.Table, snap *deltalog.Snapshot) {
			_, err := tableops.Alter(t.Context(), tbl, snap, tableops.AlterOptions{
				Set: map[string]string{deltalog.PropColumnMappingMode: "name"}, UpgradeProtocol: true})
			require.NoError(t, err)
			snap, err = tbl.Snapshot(t.Context())
			require.NoError(t, err)
			_, err = tableops.RenameColumn(t.Context(), tbl, snap, "qty", "quantity", nil)
			require.NoError(t, err)
		}, []map[string]any{{"id": int32(1), "quantity": int32(5)}, {"id": int32(2), "quantity": int32(7)}}},
		{"accepted as a drop and an add", func(t *testing.T, tbl *deltalog.Table, snap *deltalog.Snapshot) {
			_, err := tableops.Alter(t.Context(), tbl, snap, tableops.AlterOptions{
				Set: map[string]string{cdctable.PropAcceptDropAdd: cdctable.AcceptDropAdd("qty", "quantity")}})
			require.NoError(t, err)
		}, []map[string]any{{"id": int32(1), "qty": int32(5), "quantity": nil}, {"id": int32(2), "qty": nil, "quantity": int32(7)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newMemStore()
			s, err := Open(t.Context(), Options{Store: store, TableName: "t"})
			require.NoError(t, err)
			_, err = s.Apply(t.Context(), Batch{Records: []Record{rec(l1, 1, int32(1), int32(5))}})
			require.NoError(t, err)
			_, err = s.Apply(t.Context(), Batch{Records: []Record{rec(l2, 2, int32(2), int32(7))}})
			require.ErrorIs(t, err, ErrSchema)
			var re *RenameError
			require.ErrorAs(t, err, &re)
			require.Equal(t, RenameError{Dropped: "qty", Added: "quantity", Type: "integer"}, *re)
			require.ErrorContains(t, err, "cdc2delta alter TABLE --rename-column 'qty=quantity'")
			require.ErrorContains(t, err, "cdc2delta alter TABLE --set 'cdc2delta.acceptDropAdd=qty->quantity'")
			_, rows := readRows(t, store)
			require.Equal(t, []map[string]any{{"id": int32(1), "qty": int32(5)}}, rows, "nothing of the batch was written")

			tbl, err := deltalog.Open(t.Context(), store)
			require.NoError(t, err)
			snap, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			tc.fix(t, tbl, snap)
			s, err = Open(t.Context(), Options{Store: store, TableName: "t"})
			require.NoError(t, err)
			_, err = s.Apply(t.Context(), Batch{Records: []Record{rec(l2, 2, int32(2), int32(7))}})
			require.NoError(t, err)
			_, rows = readRows(t, store)
			require.ElementsMatch(t, tc.want, rows)
		})
	}
}
