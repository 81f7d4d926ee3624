package merge

import (
	"fmt"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"
)

// TestKeyIndexReusesFileIDs: a trickle rewrites its tail every commit, so
// the index sees a new file and a moved one each time. The ids of moved
// files are taken by new ones, so the id table stays as long as the live
// files (it grew by one per commit, forever), and every key still finds its
// row, in files folded together too.
func TestKeyIndexReusesFileIDs(t *testing.T) {
	x := newKeyIndex(nil)
	const keys = 10
	for k := range keys {
		x.put(fmt.Sprint("k", k), "f0", k, pos(k))
		x.put(fmt.Sprint("j", k), "g0", k, pos(k))
	}
	tail, other, rows := "f0", "g0", int64(keys)
	for c := 1; c <= 100; c++ {
		// Row 0 of the tail is gone (its key updated into the new row);
		// in the first commit the other file follows the tail's kept rows.
		to := fmt.Sprint("f", c)
		moved := x.keyAt(t, tail, 0)
		moves := []fileMove{{from: tail, to: to, gone: roaring64.BitmapOf(0), rows: rows}}
		kept := rows - 1
		if other != "" {
			moves = append(moves, fileMove{from: other, to: to, gone: roaring64.New(), rows: keys, offset: kept})
			kept += keys
		}
		x.apply([]indexOp{{key: moved, path: to, row: int(kept), pos: pos(1000 + c)}})
		x.move(moves)
		tail, other, rows = to, "", kept+1
		require.LessOrEqual(t, len(x.files), 3, "commit %d: ids are reused", c)
		require.Equal(t, to, x.files[x.mustGet(t, moved).file])
		require.EqualValues(t, kept, x.mustGet(t, moved).row)
	}
	for k := range keys {
		loc, ok := x.keys.get(fmt.Sprint("j", k))
		require.True(t, ok)
		require.Equal(t, tail, x.files[loc.file], "key j%d", k)
	}
	require.Equal(t, 2*keys, x.keys.len())
}

// keyAt is the key indexed at row of path.
func (x *keyIndex) keyAt(t *testing.T, path string, row int) string {
	t.Helper()
	for k := range 10 {
		for _, p := range []string{"k", "j"} {
			key := fmt.Sprint(p, k)
			if loc, ok := x.keys.get(key); ok && x.files[loc.file] == path && int(loc.row) == row {
				return key
			}
		}
	}
	t.Fatalf("no key at %s row %d", path, row)
	return ""
}

func (x *keyIndex) mustGet(t *testing.T, key string) rowLoc {
	t.Helper()
	loc, ok := x.keys.get(key)
	require.True(t, ok, key)
	return loc
}
