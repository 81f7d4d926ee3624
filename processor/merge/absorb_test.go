package merge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestAbsorbKeepsATrickledTableInOneFile trickles small batches (inserts,
// updates, deletes, an unavailable LOB) into a table: with a tail file the
// table stays one file without a deletion vector, and without one (the
// control) it gains a file per commit; both hold the same rows, read
// independently of the sink's index.
func TestAbsorbKeepsATrickledTableInOneFile(t *testing.T) {
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		for _, tail := range []int64{DefaultTailFileSize, -1} {
			t.Run(fmt.Sprintf("%s/tail=%d", mode, tail), func(t *testing.T) {
				store := newMemStore()
				s, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: mode, TailFileSize: tail})
				require.NoError(t, err)
				rng := rand.New(rand.NewPCG(7, 7))
				want := map[int32]item{}
				var snapshot []ev
				for id := range int32(50) {
					snapshot = append(snapshot, ev{op: codecs.OpRead, id: id, pos: int(id) + 1, name: "s"})
				}
				off, p := int64(0), 100
				next := func(e ev) ev {
					e.offset, e.pos = off, p
					off++
					p++
					return e
				}
				for i := range snapshot {
					snapshot[i] = next(snapshot[i])
				}
				_, err = s.Apply(t.Context(), batchOf(snapshot...))
				require.NoError(t, err)
				firstBytes := s.Stats().Bytes
				for _, e := range snapshot {
					want[e.id] = item{name: "s"}
				}
				for c := range 30 {
					var b []ev
					for range 1 + rng.IntN(3) {
						id := int32(rng.IntN(70))
						switch _, live := want[id]; {
						case !live:
							b = append(b, next(ev{op: codecs.OpCreate, id: id, name: fmt.Sprint("c", c), notes: "lob"}))
							want[id] = item{name: fmt.Sprint("c", c), notes: "lob"}
						case rng.IntN(4) == 0:
							b = append(b, next(ev{op: codecs.OpDelete, id: id}))
							delete(want, id)
						default:
							b = append(b, next(ev{op: codecs.OpUpdate, id: id, name: fmt.Sprint("u", c), unavailable: true}))
							w := want[id]
							w.name = fmt.Sprint("u", c)
							want[id] = w
						}
					}
					_, err := s.Apply(t.Context(), batchOf(b...))
					require.NoError(t, err)
				}
				got := readItems(t, store)
				require.Len(t, got, len(want))
				for id, w := range want {
					require.Equal(t, w.name, got[id].name, "key %d", id)
					require.Equal(t, w.notes, got[id].notes, "key %d: the stored LOB is kept", id)
				}
				st := s.Stats()
				if tail > 0 {
					require.Equal(t, 1, st.Files, "the tail took every commit's rows")
					require.Zero(t, st.DeletionVectors)
					// One row group, not one per commit: the file stays the size
					// of its rows (a row group costs its metadata every time).
					t.Logf("%d bytes after the snapshot, %d after 30 commits", firstBytes, st.Bytes)
					require.Less(t, st.Bytes, 2*firstBytes, "the tail does not bloat")
				} else {
					require.Greater(t, st.Files, 20, "without a tail every commit adds a file")
				}
			})
		}
	}
}

// TestAbsorbLeavesLargeBatchesAndFiles checks when a batch writes its own
// file: more than absorbMaxRows new rows, or no file below the tail size
// and tailMaxRows.
func TestAbsorbLeavesLargeBatchesAndFiles(t *testing.T) {
	bulk := func(from, n int) Batch {
		var evs []ev
		for i := range n {
			evs = append(evs, ev{op: codecs.OpCreate, id: int32(from + i), pos: from + i + 1, name: "x", offset: int64(from + i)})
		}
		return batchOf(evs...)
	}
	files := func(t *testing.T, store deltalog.Store) int {
		tbl, err := deltalog.Open(t.Context(), store)
		require.NoError(t, err)
		snap, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		return snap.NumFiles()
	}
	t.Run("a large batch", func(t *testing.T) {
		store := newMemStore()
		s, err := Open(t.Context(), Options{Store: store, TableName: "items"})
		require.NoError(t, err)
		_, err = s.Apply(t.Context(), bulk(0, 10))
		require.NoError(t, err)
		_, err = s.Apply(t.Context(), bulk(10, absorbMaxRows+1))
		require.NoError(t, err)
		require.Equal(t, 2, files(t, store))
		_, err = s.Apply(t.Context(), bulk(10+absorbMaxRows+1, 5))
		require.NoError(t, err)
		require.Equal(t, 2, files(t, store), "a small batch goes to the smaller file")
	})
	t.Run("a file below the tail size of too many rows", func(t *testing.T) {
		store := newMemStore()
		const tailSize = 64 << 20
		s, err := Open(t.Context(), Options{Store: store, TableName: "items", TailFileSize: tailSize})
		require.NoError(t, err)
		_, err = s.Apply(t.Context(), bulk(0, tailMaxRows))
		require.NoError(t, err)
		require.Less(t, s.Snapshot().Files()[0].Size, int64(tailSize))
		_, err = s.Apply(t.Context(), bulk(tailMaxRows, 5))
		require.NoError(t, err)
		require.Equal(t, 2, files(t, store), "a small batch is not folded into a file of tailMaxRows rows")
		_, err = s.Apply(t.Context(), bulk(tailMaxRows+5, 5))
		require.NoError(t, err)
		require.Equal(t, 2, files(t, store), "the next one goes to the small file")
	})
	t.Run("no file below the tail size", func(t *testing.T) {
		store := newMemStore()
		s, err := Open(t.Context(), Options{Store: store, TableName: "items", TailFileSize: 1})
		require.NoError(t, err)
		for i := range 3 {
			_, err = s.Apply(t.Context(), bulk(i*10, 10))
			require.NoError(t, err)
		}
		require.Equal(t, 3, files(t, store))
	})
}

// TestAbsorbFoldsTouchedSmallFiles: a table of two small files (a snapshot
// in two large batches) takes a trickle of updates to keys of both. The
// file the tail does not take is folded into the tail's rewrite, so the
// table ends as one file with no deletion vector, where it would otherwise
// keep both costs: a vector each commit and a tail that grows by every
// row updated away from the other file. With a tail size that the two
// files together reach (the control), the other file takes a vector.
func TestAbsorbFoldsTouchedSmallFiles(t *testing.T) {
	const n = absorbMaxRows + 1
	snapshot := func(s *Sink, from int) {
		var evs []ev
		for i := range n {
			evs = append(evs, ev{op: codecs.OpRead, id: int32(from + i), pos: from + i + 1, name: "s", offset: int64(from + i)})
		}
		_, err := s.Apply(t.Context(), batchOf(evs...))
		require.NoError(t, err)
	}
	run := func(t *testing.T, tail func(sizes []int64) int64) (TableStats, map[int32]item, deltalog.Store) {
		store := newMemStore()
		s, err := Open(t.Context(), Options{Store: store, TableName: "items"})
		require.NoError(t, err)
		snapshot(s, 0)
		snapshot(s, n)
		tbl, err := deltalog.Open(t.Context(), store)
		require.NoError(t, err)
		snap, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		var sizes []int64
		for _, f := range snap.Files() {
			sizes = append(sizes, f.Size)
		}
		require.Len(t, sizes, 2)
		s, err = Open(t.Context(), Options{Store: store, TableName: "items", TailFileSize: tail(sizes)})
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(9, 9))
		off, pos := int64(2*n), 2*n+1
		names := map[int32]string{}
		for c := range 20 {
			var b []ev
			for range 3 {
				id := int32(rng.IntN(2 * n))
				b = append(b, ev{op: codecs.OpUpdate, id: id, pos: pos, name: fmt.Sprint("u", c), offset: off})
				names[id] = fmt.Sprint("u", c)
				off++
				pos++
			}
			_, err := s.Apply(t.Context(), batchOf(b...))
			require.NoError(t, err)
		}
		got := readItems(t, store)
		require.Len(t, got, 2*n)
		for id, it := range got {
			want := "s"
			if name, ok := names[id]; ok {
				want = name
			}
			require.Equal(t, want, it.name, "key %d", id)
		}
		return s.Stats(), got, store
	}
	t.Run("folded", func(t *testing.T) {
		st, _, _ := run(t, func([]int64) int64 { return DefaultTailFileSize })
		require.Equal(t, 1, st.Files, "the other small file was folded into the tail")
		require.Zero(t, st.DeletionVectors)
	})
	t.Run("control: both files together reach the tail size", func(t *testing.T) {
		st, _, _ := run(t, func(sizes []int64) int64 { return max(sizes[0], sizes[1]) + 1 })
		require.Equal(t, 2, st.Files)
		require.Equal(t, 1, st.DeletionVectors, "the file left alone takes a vector")
	})
}
