package merge

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

func histChange(op codecs.Op, n int, layout *codecs.Layout, row ...any) Record {
	var l codecs.LSN
	l[9] = byte(n)
	c := codecs.Change{Op: op, Pos: codecs.Position{Commit: l, Change: l, Serial: 1}, CommitMillis: 1_700_000_000_000 + int64(n),
		Layout: layout, KeyLayout: histKeyLayout, Key: []any{row[0]}, Row: row}
	return Record{TopicPartition: cdctable.TopicPartition{Topic: "t"}, Offset: int64(n), Change: c}
}

func histBatch(recs ...Record) Batch {
	b := Batch{Records: recs, LastOffsets: map[cdctable.TopicPartition]int64{}}
	for _, r := range recs {
		b.LastOffsets[r.TopicPartition] = max(b.LastOffsets[r.TopicPartition], r.Offset)
	}
	return b
}

// TestHistorySchemaEvolution: a new source column is appended before the
// metadata columns (NULL in older versions); a column whose type changes
// stops the history table with a SchemaError and commits nothing; a path
// holding a current-state table is refused.
func TestHistorySchemaEvolution(t *testing.T) {
	store := memstore.New(memstore.Options{})
	h, err := OpenHistory(t.Context(), HistoryOptions{Store: store, TableName: "items_history"})
	require.NoError(t, err)
	v, err := h.Apply(t.Context(), histBatch(histChange(codecs.OpCreate, 1, histLayout, int32(1), "a", "x")))
	require.NoError(t, err)
	require.Equal(t, int64(0), v)

	wider := &codecs.Layout{Name: "t.Value", Columns: append(append([]codecs.Column{}, histLayout.Columns...),
		codecs.Column{Name: "qty", Type: codecs.Type{Kind: codecs.KindLong}, Nullable: true})}
	v, err = h.Apply(t.Context(), histBatch(histChange(codecs.OpUpdate, 2, wider, int32(1), "b", "x", int64(5))))
	require.NoError(t, err)
	got, err := cdcmodel.ReadVersion(t.Context(), store, v, []string{"id", cdcmodel.ColStartPosition})
	require.NoError(t, err)
	require.Equal(t, []string{"id", "name", "notes", "qty", cdctable.HistStartAt, cdctable.HistEndAt, cdctable.HistStartPosition,
		cdctable.HistEndPosition, cdctable.ColPosition, cdctable.ColCommitTime}, got.Columns)
	qty := map[any]any{}
	for _, r := range got.Rows {
		qty[r["name"]] = r["qty"]
	}
	require.Equal(t, map[any]any{"a": nil, "b": int64(5)}, qty)

	retyped := &codecs.Layout{Name: "t.Value", Columns: []codecs.Column{histLayout.Columns[0],
		{Name: "name", Type: codecs.Type{Kind: codecs.KindInteger}, Nullable: true}, histLayout.Columns[2]}}
	_, err = h.Apply(t.Context(), histBatch(histChange(codecs.OpUpdate, 3, retyped, int32(1), int32(7), "x")))
	var se *SchemaError
	require.True(t, errors.As(err, &se), "%v", err)
	require.Contains(t, se.Reason, "column name changed type")
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Equal(t, v, snap.Version(), "nothing committed")

	cur := memstore.New(memstore.Options{})
	s, err := Open(t.Context(), Options{Store: cur, TableName: "items"})
	require.NoError(t, err)
	_, err = s.Apply(t.Context(), histBatch(histChange(codecs.OpCreate, 1, histLayout, int32(1), "a", "x")))
	require.NoError(t, err)
	_, err = OpenHistory(t.Context(), HistoryOptions{Store: cur, TableName: "items"})
	require.True(t, errors.As(err, &se), "%v", err)
	require.Contains(t, se.Reason, "not a history table")
	require.ErrorIs(t, err, ErrNotHistoryTable)

	// history: only: a path keeps its shape, both ways.
	_, err = OpenHistory(t.Context(), HistoryOptions{Store: cur, TableName: "items", Only: true})
	require.ErrorIs(t, err, ErrNotHistoryTable)
	require.ErrorContains(t, err, "route the table to a new path (tables.path)")
	s, err = Open(t.Context(), Options{Store: store, TableName: "items"})
	if err == nil {
		_, err = s.Apply(t.Context(), histBatch(histChange(codecs.OpUpdate, 4, histLayout, int32(1), "a", "y")))
	}
	require.ErrorIs(t, err, cdctable.ErrHistoryTable)
	snap, err = tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Equal(t, v, snap.Version(), "the current-state sink wrote nothing to the history table")
}

// TestHistoryTracking: with track_history on name, a change of notes only
// updates the open version in place; a change of name opens a new one.
func TestHistoryTracking(t *testing.T) {
	store := memstore.New(memstore.Options{})
	h, err := OpenHistory(t.Context(), HistoryOptions{Store: store, TableName: "h", TrackHistory: []string{"name"}})
	require.NoError(t, err)
	v, err := h.Apply(t.Context(), histBatch(
		histChange(codecs.OpCreate, 1, histLayout, int32(1), "a", "x"),
		histChange(codecs.OpUpdate, 2, histLayout, int32(1), "a", "y"),
		histChange(codecs.OpUpdate, 3, histLayout, int32(1), "b", "y"),
		histChange(codecs.OpUpdate, 4, histLayout, int32(1), "b", "z")))
	require.NoError(t, err)
	got, err := cdcmodel.ReadVersion(t.Context(), store, v, []string{"id", cdcmodel.ColStartPosition})
	require.NoError(t, err)
	var lines []string
	for _, r := range got.Rows {
		lines = append(lines, r["name"].(string)+r["notes"].(string)+map[bool]string{true: " open", false: " closed"}[r[cdctable.HistEndAt] == nil])
	}
	require.ElementsMatch(t, []string{"ay closed", "bz open"}, lines)
}
