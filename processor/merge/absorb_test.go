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
// file: more than absorbMaxRows new rows, or no file below the tail size.
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
