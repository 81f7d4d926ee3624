package merge

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestChangeLogColumnNeedsMapping: a change log created without column mapping stops at a
// new column that needs it, with a remedy that enables it; once run, the column is
// appended.
func TestChangeLogColumnNeedsMapping(t *testing.T) {
	ctx := t.Context()
	store := newMemStore()
	key := &codecs.Layout{SchemaID: 41, Name: "k", Columns: []codecs.Column{{Name: "id", Type: kInt}}}
	l1 := &codecs.Layout{SchemaID: 42, Name: "v", Columns: []codecs.Column{{Name: "id", Type: kInt}}}
	l2 := &codecs.Layout{SchemaID: 43, Name: "v", Columns: []codecs.Column{{Name: "id", Type: kInt}, {Name: "Qty (kg)", Type: kInt, Nullable: true}}}
	batch := func(l *codecs.Layout, offset int, row ...any) Batch {
		r := Record{Offset: int64(offset), TopicPartition: cdctable.TopicPartition{Topic: "sales.dbo.t"},
			Change: codecs.Change{Op: codecs.OpCreate, Table: codecs.TableID{Schema: "dbo", Table: "t"}, Pos: pos(offset + 1),
				Layout: l, KeyLayout: key, KeyIndex: []int{0}, Key: []any{row[0]}, Row: row}}
		return Batch{Records: []Record{r}, LastOffsets: map[cdctable.TopicPartition]int64{r.TopicPartition: int64(offset)}}
	}
	open := func() *ChangeLog {
		l, err := OpenChangeLog(ctx, ChangeLogOptions{Store: store, TableName: "t_changes"})
		require.NoError(t, err)
		return l
	}
	_, err := open().Append(ctx, batch(l1, 0, int32(1)))
	require.NoError(t, err)
	_, err = open().Append(ctx, batch(l2, 1, int32(2), int32(5)))
	require.ErrorIs(t, err, ErrSchema)
	require.ErrorContains(t, err, "cdc2delta alter TABLE_changes --set delta.columnMapping.mode=name --upgrade-protocol")

	tbl, err := deltalog.Open(ctx, store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	_, err = tableops.Alter(ctx, tbl, snap, tableops.AlterOptions{Set: map[string]string{deltalog.PropColumnMappingMode: "name"}, UpgradeProtocol: true})
	require.NoError(t, err)
	_, err = open().Append(ctx, batch(l2, 1, int32(2), int32(5)))
	require.NoError(t, err)
	snap, rows := readRows(t, store)
	_, ok := snap.Schema().Field("Qty (kg)")
	require.True(t, ok)
	require.Len(t, rows, 2)
}
