package merge

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// sliceRows serves rows to LoadOptions.Next.
func sliceRows(rows [][]any) func(context.Context, int) ([][]any, error) {
	return func(_ context.Context, n int) ([][]any, error) {
		k := min(n, len(rows))
		out := rows[:k]
		rows = rows[k:]
		return out, nil
	}
}

func snapshotItems(ids ...int32) [][]any {
	var rows [][]any
	for _, id := range ids {
		rows = append(rows, []any{id, fmt.Sprintf("snap-%d", id), decimal128.FromInt64(int64(id) * 100), nil})
	}
	return rows
}

// TestLoadThenFeed loads a snapshot at position 50 into a table the
// pipeline created, then applies changes from before and after it: the
// older ones change nothing, the newer ones apply.
func TestLoadThenFeed(t *testing.T) {
	store := newMemStore()
	s := newTestSink(t, store, ModeDV, DeleteHard)
	// Changes newer than the snapshot, applied before the load: key 100
	// lives at 60, key 101 was deleted at 61.
	_, err := s.Apply(t.Context(), batchOf(
		ev{op: codecs.OpCreate, id: 100, pos: 60, name: "new-100", offset: 1},
		ev{op: codecs.OpCreate, id: 101, pos: 55, name: "new-101", offset: 2},
		ev{op: codecs.OpDelete, id: 101, pos: 61, offset: 3}))
	require.NoError(t, err)
	require.NoError(t, s.Close())

	cols := []string{"id", "name", "Unit Price", "notes"}
	res, err := Load(t.Context(), store, LoadOptions{Position: pos(50), Columns: cols, ChunkRows: 4,
		Next: sliceRows(snapshotItems(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100, 101))})
	require.NoError(t, err)
	require.Equal(t, int64(10), res.Rows)
	require.Equal(t, int64(2), res.Newer, "keys 100 and 101 have newer changes")
	require.Equal(t, int64(1), res.Version)
	got := readItems(t, store)
	require.Len(t, got, 11)
	require.Equal(t, "snap-1", got[1].name)
	require.Equal(t, pos(50).Hex(), got[1].pos)
	require.Equal(t, "new-100", got[100].name)

	s = newTestSink(t, store, ModeDV, DeleteHard)
	defer s.Close()
	_, err = s.Apply(t.Context(), batchOf(
		// Older than the load: each would change the table without it.
		ev{op: codecs.OpUpdate, id: 1, pos: 40, name: "old-1", offset: 4},
		ev{op: codecs.OpDelete, id: 2, pos: 30, offset: 5},
		ev{op: codecs.OpCreate, id: 20, pos: 45, name: "old-20", offset: 6},
		ev{op: codecs.OpCreate, id: 101, pos: 50, name: "old-101", offset: 7},
		// Newer: they apply.
		ev{op: codecs.OpUpdate, id: 3, pos: 70, name: "new-3", offset: 8},
		ev{op: codecs.OpDelete, id: 4, pos: 71, offset: 9},
		ev{op: codecs.OpCreate, id: 21, pos: 72, name: "new-21", offset: 10}))
	require.NoError(t, err)
	got = readItems(t, store)
	names := map[int32]string{}
	for id, it := range got {
		names[id] = it.name
	}
	require.Equal(t, map[int32]string{1: "snap-1", 2: "snap-2", 3: "new-3", 5: "snap-5", 6: "snap-6", 7: "snap-7", 8: "snap-8",
		9: "snap-9", 10: "snap-10", 21: "new-21", 100: "new-100"}, names)
	rep, err := VerifyTable(t.Context(), store, VerifyOptions{})
	require.NoError(t, err)
	require.True(t, rep.OK(), "%v", rep.Problems)
}

// TestLoadControl is TestLoadThenFeed's older changes without the load:
// they do change the table, so the load is what holds them back.
func TestLoadControl(t *testing.T) {
	store := newMemStore()
	s := newTestSink(t, store, ModeDV, DeleteHard)
	defer s.Close()
	_, err := s.Apply(t.Context(), batchOf(ev{op: codecs.OpCreate, id: 1, pos: 10, name: "c-1", offset: 1}))
	require.NoError(t, err)
	_, err = s.Apply(t.Context(), batchOf(
		ev{op: codecs.OpUpdate, id: 1, pos: 40, name: "old-1", offset: 4},
		ev{op: codecs.OpCreate, id: 20, pos: 45, name: "old-20", offset: 6}))
	require.NoError(t, err)
	require.Equal(t, map[int32]string{1: "old-1", 20: "old-20"}, itemNames(t, store))
}

func TestLoadRefuses(t *testing.T) {
	store := newMemStore()
	s := newTestSink(t, store, ModeDV, DeleteHard)
	_, err := s.Apply(t.Context(), batchOf(ev{op: codecs.OpCreate, id: 100, pos: 60, name: "new-100", offset: 1}))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	all := []string{"id", "name", "Unit Price", "notes"}
	tests := []struct {
		name string
		pos  int
		cols []string
		want error
		msg  string
	}{
		{"a live row at or below the position", 60, all, ErrLoadOlder, "1 live rows"},
		{"no key column", 50, []string{"name"}, ErrLoadColumns, `column "id" (not nullable) is missing`},
		{"a column the table lacks", 50, []string{"id", "colour"}, ErrLoadColumns, `column "colour" is not in the table`},
		{"a metadata column", 50, []string{"id", "_cdc_op"}, ErrLoadColumns, `column "_cdc_op" is set by the load`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(t.Context(), store, LoadOptions{Position: pos(tc.pos), Columns: tc.cols, Next: sliceRows(nil)})
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.msg)
		})
	}
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Equal(t, int64(0), snap.Version(), "nothing committed")
}
