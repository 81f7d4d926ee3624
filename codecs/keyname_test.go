package codecs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// TestKeyColumnKeepsSourceName: Debezium builds the key schema without
// column mappers, so a propagated source name reaches the row's field but
// not the key's (codecs/testdata/debezium/java shows it). The key layout
// must still name the column as the row does, or the engine cannot find
// the key column "Order ID" in a key that calls it "Order_ID".
func TestKeyColumnKeepsSourceName(t *testing.T) {
	h := newGenHarness(t, dbzgen.Options{PropagateSourceTypes: true}, codecs.Options{})
	table, err := h.gen.Table(dbzgen.TableDef{Database: "sales", Schema: "dbo", Name: "lines",
		Columns: []dbzgen.Column{{Name: "Order ID", Type: "int"}, {Name: "Line No", Type: "smallint"}, {Name: "qty", Type: "int", Nullable: true}},
		Key:     []string{"Order ID", "Line No"}})
	require.NoError(t, err)
	require.NotContains(t, table.KeySchema(), "__debezium.source.column.name")
	ch := h.decode(t, dbzgen.Event{Table: table, Op: dbzgen.OpCreate,
		After: dbzgen.Row{"Order ID": 7, "Line No": 2, "qty": 5}})
	require.Equal(t, []string{"Order ID", "Line No"}, ch.KeyLayout.Names())
	require.Equal(t, []string{"Order_ID", "Line_No"}, []string{ch.KeyLayout.Columns[0].AvroName, ch.KeyLayout.Columns[1].AvroName})
	require.Equal(t, []int{0, 1}, ch.KeyIndex)
	require.Equal(t, []any{int32(7), int16(2)}, ch.Key)
}
