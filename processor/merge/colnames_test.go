package merge

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

func TestPortableName(t *testing.T) {
	for in, want := range map[string]string{
		"Unit Price": "Unit_Price", "Qty (kg)": "Qty__kg_", "a,b;c{d}e=f": "a_b_c_d_e_f", "tab\there\nnl": "tab_here_nl",
		"plain": "plain", "Größe": "Größe", "_x": "_x", "1col": "1col",
	} {
		require.Equal(t, want, PortableName(in), in)
		require.False(t, deltalog.NeedsColumnMapping(PortableName(in)), in)
	}
}

// TestTableNamesCollisions: a name Delta takes is never renamed, whatever the
// column order; a portable name that another column holds gets a suffix.
func TestTableNamesCollisions(t *testing.T) {
	cols := func(names ...string) []codecs.Column {
		var out []codecs.Column
		for _, n := range names {
			out = append(out, codecs.Column{Name: n})
		}
		return out
	}
	require.Equal(t, []string{"Unit_Price_2", "Unit_Price", "id"}, tableNames(cols("Unit Price", "Unit_Price", "id"), true))
	require.Equal(t, []string{"Unit_Price", "Unit_Price_2"}, tableNames(cols("Unit_Price", "Unit Price"), true))
	require.Equal(t, []string{"a_b", "A_B_2", "a_b_3"}, tableNames(cols("a b", "A B", "a;b"), true), "Delta compares names ignoring case")
	require.Equal(t, []string{"_cdc_op_2"}, tableNames(cols("_cdc op"), true), "metadata columns are taken")
	require.Equal(t, []string{"Unit Price", "Unit_Price"}, tableNames(cols("Unit Price", "Unit_Price"), false))
}

var (
	kDec = codecs.DecimalType(10, 2)
	// shopLayout has a key and a partition column whose names need column mapping.
	shopLayout = &codecs.Layout{SchemaID: 11, Name: "sales.dbo.shop.Value", Columns: []codecs.Column{
		{Name: "Order ID", Type: kInt, SourceType: "INT"},
		{Name: "Region Code", Type: kStr, Nullable: true, SourceType: "NVARCHAR(10)"},
		{Name: "Unit Price", Type: kDec, Nullable: true, SourceType: "MONEY"},
		{Name: "Unit_Price", Type: kStr, Nullable: true},
	}}
	shopKey = &codecs.Layout{SchemaID: 12, Name: "sales.dbo.shop.Key", Columns: []codecs.Column{{Name: "Order ID", Type: kInt}}}
)

func shopRecord(l *codecs.Layout, op codecs.Op, id int32, p int, region string, row ...any) Record {
	c := codecs.Change{Op: op, Table: codecs.TableID{Database: "sales", Schema: "dbo", Table: "shop"}, Pos: pos(p),
		CommitMillis: 1_700_000_000_000, Layout: l, KeyLayout: shopKey, KeyIndex: []int{0}, Key: []any{id}}
	c.Row = append([]any{id, region}, row...)
	for len(c.Row) < len(l.Columns) {
		c.Row = append(c.Row, nil)
	}
	return Record{TopicPartition: cdctable.TopicPartition{Topic: "sales.dbo.shop"}, Offset: int64(p), Change: c}
}

// readRows reads the live rows of the table keyed by column name.
func readRows(t *testing.T, store deltalog.Store) (*deltalog.Snapshot, []map[string]any) {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	var out []map[string]any
	for _, add := range snap.Files() {
		rows, err := datafile.Read(t.Context(), store, &add, snap.Schema(), datafile.ReadOptions{
			Properties: snap.Metadata().Configuration, PartitionColumns: snap.Metadata().PartitionColumns})
		require.NoError(t, err)
		for _, r := range rows {
			m := map[string]any{}
			for i, f := range snap.Schema().Fields {
				if !cdctable.IsMetaColumn(f.Name) {
					m[f.Name] = r[i]
				}
			}
			out = append(out, m)
		}
	}
	return snap, out
}

// TestPortableTable creates a table with column_names: portable and no
// deletion vectors: the legacy protocol, no column mapping, renamed columns
// commented with their source names, the key and partition columns under
// their new names; updates and deletes by key work across a reopen, and
// schema evolution names new columns without renaming old ones.
func TestPortableTable(t *testing.T) {
	store := newMemStore()
	opts := Options{Store: store, TableName: "shop", ColumnNames: ColumnNamesPortable, DeletionVectors: new(false),
		PartitionBy: []string{"Region Code"}, DeleteMode: DeleteSoft}
	s, err := Open(t.Context(), opts)
	require.NoError(t, err)
	_, err = s.Apply(t.Context(), Batch{Records: []Record{
		shopRecord(shopLayout, codecs.OpCreate, 1, 1, "eu", decimal128.FromInt64(150), "a"),
		shopRecord(shopLayout, codecs.OpCreate, 2, 2, "us", decimal128.FromInt64(250), "b"),
		shopRecord(shopLayout, codecs.OpCreate, 3, 3, "eu", decimal128.FromInt64(350), "c"),
	}})
	require.NoError(t, err)

	snap, rows := readRows(t, store)
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, snap.Protocol())
	meta := snap.Metadata()
	require.Equal(t, "none", deltalog.ColumnMappingMode(&meta))
	require.Equal(t, "portable", meta.Configuration[cdctable.PropColumnNames])
	require.Equal(t, `["Order_ID"]`, meta.Configuration[cdctable.PropKeyColumns])
	require.Equal(t, []string{"Region_Code"}, meta.PartitionColumns)
	var names []string
	comments := map[string]string{}
	for _, f := range snap.Schema().Fields {
		names = append(names, f.Name)
		comments[f.Name], _ = f.Metadata["comment"].(string)
	}
	require.Equal(t, []string{"Order_ID", "Region_Code", "Unit_Price_2", "Unit_Price", cdctable.ColPosition, cdctable.ColOp, cdctable.ColCommitTime, cdctable.ColDeleted}, names)
	require.Equal(t, "SQL Server column [Unit Price]: SQL Server MONEY", comments["Unit_Price_2"])
	require.Equal(t, "SQL Server column [Order ID]: SQL Server INT", comments["Order_ID"])
	require.Equal(t, "source column Unit_Price (string)", comments["Unit_Price"])
	require.Len(t, rows, 3)

	// Reopen (index rebuilt from the renamed key column), update, delete.
	s, err = Open(t.Context(), opts)
	require.NoError(t, err)
	res, err := s.Apply(t.Context(), Batch{Records: []Record{
		shopRecord(shopLayout, codecs.OpUpdate, 1, 4, "us", decimal128.FromInt64(151), "a2"),
		shopRecord(shopLayout, codecs.OpDelete, 2, 5, ""),
	}})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.Updated)
	require.Equal(t, int64(1), res.Deleted)

	// Evolution: a new column whose name needs mapping, one whose name a
	// renamed column holds, and one Delta takes.
	wide := &codecs.Layout{SchemaID: 13, Name: shopLayout.Name, Columns: append(append([]codecs.Column(nil), shopLayout.Columns...),
		codecs.Column{Name: "Qty (kg)", Type: kInt, Nullable: true},
		codecs.Column{Name: "Unit_Price_2", Type: kStr, Nullable: true},
		codecs.Column{Name: "color", Type: kStr, Nullable: true})}
	_, err = s.Apply(t.Context(), Batch{Records: []Record{
		shopRecord(wide, codecs.OpCreate, 4, 6, "eu", decimal128.FromInt64(450), "d", int32(7), "x", "red"),
	}})
	require.NoError(t, err)
	snap, rows = readRows(t, store)
	names = names[:0]
	for _, f := range snap.Schema().Fields {
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"Order_ID", "Region_Code", "Unit_Price_2", "Unit_Price", cdctable.ColPosition, cdctable.ColOp, cdctable.ColCommitTime, cdctable.ColDeleted,
		"Qty__kg_", "Unit_Price_2_2", "color"}, names)
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, snap.Protocol())
	byID := map[int32]map[string]any{}
	for _, r := range rows {
		byID[r["Order_ID"].(int32)] = r
	}
	require.Equal(t, "us", byID[1]["Region_Code"])
	require.Equal(t, decimal128.FromInt64(151), byID[1]["Unit_Price_2"])
	require.Equal(t, "a2", byID[1]["Unit_Price"])
	require.Equal(t, int32(7), byID[4]["Qty__kg_"])
	require.Equal(t, "x", byID[4]["Unit_Price_2_2"])
	require.Equal(t, "red", byID[4]["color"])
	require.Nil(t, byID[1]["color"])
	require.Len(t, byID, 4, "soft delete keeps the row")

	// partition_by may name the column by its portable name too.
	other := newMemStore()
	s, err = Open(t.Context(), Options{Store: other, TableName: "shop", ColumnNames: ColumnNamesPortable, PartitionBy: []string{"region_code"}})
	require.NoError(t, err)
	_, err = s.Apply(t.Context(), Batch{Records: []Record{shopRecord(shopLayout, codecs.OpCreate, 1, 1, "eu", decimal128.FromInt64(1), "a")}})
	require.NoError(t, err)
	snap, _ = readRows(t, other)
	require.Equal(t, []string{"Region_Code"}, snap.Metadata().PartitionColumns)
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"},
		WriterFeatures: []string{"deletionVectors", "invariants"}}, snap.Protocol(), "deletion vectors are the default")
}

// TestColumnNamesOfExistingTables: a mapped table keeps its source names when
// the sink says portable (and warns); a table without column mapping takes a
// new name needing it only when portable, with a remedy that says so.
func TestColumnNamesOfExistingTables(t *testing.T) {
	store := newMemStore()
	_, err := newTestSink(t, store, ModeAuto, DeleteHard).Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, name: "a", offset: 0}))
	require.NoError(t, err)
	var logs bytes.Buffer
	s, err := Open(t.Context(), Options{Store: store, TableName: "items", ColumnNames: ColumnNamesPortable, DeletionVectors: new(false),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	require.Contains(t, logs.String(), "keeps its source names")
	require.Contains(t, logs.String(), "has deletion vectors")
	_, err = s.Apply(t.Context(), batchOf(ev{op: opU, id: 1, pos: 2, name: "b", offset: 1}))
	require.NoError(t, err)
	snap, rows := readRows(t, store)
	_, ok := snap.Schema().Field("Unit Price")
	require.True(t, ok)
	require.Len(t, rows, 1)

	// A table without column mapping (no name needed it).
	for _, tc := range []struct {
		names   ColumnNames
		wantErr string
	}{{ColumnNamesMapped, "or set column_names: portable for the table (new columns then get names Delta takes, such as Qty__kg_)"}, {ColumnNamesPortable, ""}} {
		store := newMemStore()
		key := &codecs.Layout{SchemaID: 23, Name: "k", Columns: []codecs.Column{{Name: "id", Type: kInt}}}
		l1 := &codecs.Layout{SchemaID: 24, Name: "v", Columns: []codecs.Column{{Name: "id", Type: kInt}}}
		l2 := &codecs.Layout{SchemaID: 25, Name: "v", Columns: []codecs.Column{{Name: "id", Type: kInt}, {Name: "Qty (kg)", Type: kInt, Nullable: true}}}
		rec := func(l *codecs.Layout, p int, row ...any) Record {
			return Record{Offset: int64(p), Change: codecs.Change{Op: codecs.OpCreate, Table: codecs.TableID{Schema: "dbo", Table: "t"}, Pos: pos(p),
				Layout: l, KeyLayout: key, KeyIndex: []int{0}, Key: []any{row[0]}, Row: row}}
		}
		s, err := Open(t.Context(), Options{Store: store, TableName: "t"})
		require.NoError(t, err)
		_, err = s.Apply(t.Context(), Batch{Records: []Record{rec(l1, 1, int32(1))}})
		require.NoError(t, err)
		s, err = Open(t.Context(), Options{Store: store, TableName: "t", ColumnNames: tc.names})
		require.NoError(t, err)
		_, err = s.Apply(t.Context(), Batch{Records: []Record{rec(l2, 2, int32(2), int32(5))}})
		if tc.wantErr != "" {
			require.ErrorIs(t, err, ErrSchema)
			require.ErrorContains(t, err, tc.wantErr)
			// The remedy's command enables column mapping; the change then applies.
			require.ErrorContains(t, err, "cdc2delta alter TABLE --set delta.columnMapping.mode=name --upgrade-protocol")
			tbl, err := deltalog.Open(t.Context(), store)
			require.NoError(t, err)
			snap, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			_, err = tableops.Alter(t.Context(), tbl, snap, tableops.AlterOptions{
				Set: map[string]string{deltalog.PropColumnMappingMode: "name"}, UpgradeProtocol: true})
			require.NoError(t, err)
			s, err = Open(t.Context(), Options{Store: store, TableName: "t", ColumnNames: tc.names})
			require.NoError(t, err)
			_, err = s.Apply(t.Context(), Batch{Records: []Record{rec(l2, 2, int32(2), int32(5))}})
			require.NoError(t, err)
			snap, rows := readRows(t, store)
			_, ok := snap.Schema().Field("Qty (kg)")
			require.True(t, ok)
			require.Len(t, rows, 2)
			continue
		}
		require.NoError(t, err)
		snap, rows := readRows(t, store)
		_, ok := snap.Schema().Field("Qty__kg_")
		require.True(t, ok)
		require.Equal(t, "portable", snap.Metadata().Configuration[cdctable.PropColumnNames], "the table stays portable")
		require.Len(t, rows, 2)
		js, _ := json.Marshal(snap.Metadata().Configuration)
		require.NotContains(t, string(js), deltalog.PropColumnMappingMode)
	}
}
