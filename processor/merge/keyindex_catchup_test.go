package merge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// indexMismatch lists (up to max) the keys two indexes disagree on, comparing
// what they say (path, row, position) rather than their file ids.
func indexMismatch(got, want *keyIndex, max int) []string {
	var out []string
	var keys []string
	for k := range want.keys.all() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for k := range got.keys.all() {
		if _, ok := want.keys.get(k); !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if len(out) >= max {
			break
		}
		g, gok := got.keys.get(k)
		w, wok := want.keys.get(k)
		switch {
		case !gok:
			out = append(out, fmt.Sprintf("key %x missing, want %s row %d", k, want.files[w.file], w.row))
		case !wok:
			out = append(out, fmt.Sprintf("key %x at %s row %d should be gone", k, got.files[g.file], g.row))
		case got.files[g.file] != want.files[w.file] || g.row != w.row || g.pos != w.pos:
			out = append(out, fmt.Sprintf("key %x at %s row %d pos %s, want %s row %d pos %s",
				k, got.files[g.file], g.row, g.pos, want.files[w.file], w.row, w.pos))
		}
	}
	return out
}

// requireRebuildEqual checks the sink's index against a full rebuild from
// its snapshot and, when that is the latest version (a sink behind has not
// read the newer tombstone files yet), its tombstones against the files.
func requireRebuildEqual(t *testing.T, s *Sink, step string) {
	t.Helper()
	st := s.state
	full, err := buildKeyIndex(t.Context(), s.opts.Store, st, nil, s.log)
	require.NoError(t, err)
	require.Empty(t, indexMismatch(st.index, full, 5), "%s: incremental index differs from a rebuild at version %d", step, st.snap.Version())
	require.Equal(t, full.keys.len(), st.index.keys.len(), step)
	latest, err := s.table.Snapshot(t.Context())
	require.NoError(t, err)
	if latest.Version() != st.snap.Version() {
		return
	}
	tombs, err := loadTombstones(t.Context(), s.opts.Store, tombstoneView{s.table, latest.Version()}, s.opts.Now(), s.opts.TombstoneRetention)
	require.NoError(t, err)
	require.Equal(t, tombs.floor, st.tombs.floor, step)
	require.Equal(t, tombs.keys, st.tombs.keys, step)
}

// TestKeyIndexCatchUpRaces has two sinks write one table with random keys,
// in turns and concurrently, so they keep losing commits and catching up;
// after every batch each sink's index must equal a full rebuild, and a sink
// that caught up must have kept (not rebuilt) its index. stream reads the
// new files' keys as they are applied, as for many new rows.
func TestKeyIndexCatchUpRaces(t *testing.T) {
	for _, tc := range []struct {
		mode   Mode
		del    DeleteMode
		stream bool
	}{{ModeDV, DeleteHard, false}, {ModeCoW, DeleteHard, false}, {ModeDV, DeleteSoft, false}, {ModeDV, DeleteHard, true}} {
		name := string(tc.mode) + "-" + string(tc.del)
		if tc.stream {
			name += "-stream"
		}
		t.Run(name, func(t *testing.T) {
			store := newMemStore()
			newSink := func() *Sink {
				s := newTestSink(t, store, tc.mode, tc.del)
				if tc.stream {
					s.readAhead = 0
				}
				return s
			}
			sinks := []*Sink{newSink(), nil}
			rng := rand.New(rand.NewPCG(11, uint64(len(tc.mode)+len(tc.del))))
			p := 0
			offs := []int64{-1, -1}
			batch := func(part int, truncate bool) Batch {
				var evs []ev
				for range 25 {
					p++
					offs[part]++
					e := ev{op: opU, id: int32(rng.IntN(150)), pos: p, name: fmt.Sprintf("n%d", p), price: int64(p), offset: offs[part], part: int32(part)}
					switch x := rng.IntN(10); {
					case x < 3:
						e.op = opC
					case x < 5:
						e.op = opD
					}
					if truncate && len(evs) == 10 {
						e = ev{op: opT, pos: p, offset: offs[part], part: int32(part)}
					}
					evs = append(evs, e)
				}
				return batchOf(evs...)
			}
			_, err := sinks[0].Apply(t.Context(), batch(0, false))
			require.NoError(t, err)
			sinks[1] = newSink()
			caughtUp := 0
			// The catch-ups of each index that walked every key and that
			// proved they need not (keyIndex.walks, skips).
			passes := map[*keyIndex][2]int{}
			count := func() {
				for _, s := range sinks {
					passes[s.state.index] = [2]int{s.state.index.walks, s.state.index.skips}
				}
			}
			for step := range 30 {
				name := fmt.Sprintf("step %d", step)
				if step%4 == 3 {
					// Both at once: one of them loses the race.
					var g errgroup.Group
					b0, b1 := batch(0, false), batch(1, false)
					for i, b := range []Batch{b0, b1} {
						g.Go(func() error {
							_, err := sinks[i].Apply(t.Context(), b)
							return err
						})
					}
					require.NoError(t, g.Wait(), name)
				} else {
					i := rng.IntN(2)
					s := sinks[i]
					before := s.state.index
					res, err := s.Apply(t.Context(), batch(i, step == 21))
					require.NoError(t, err, name)
					if res.Retries+res.Rebases > 0 && res.Truncates == 0 {
						require.Same(t, before, s.state.index, "%s: the index was rebuilt, not caught up", name)
						caughtUp++
					}
				}
				count()
				for i, s := range sinks {
					s.mu.Lock()
					if s.stale || step%5 == 4 {
						require.NoError(t, s.reload(t.Context()))
						s.stale = false
					}
					requireRebuildEqual(t, s, fmt.Sprintf("%s sink %d", name, i))
					s.mu.Unlock()
				}
			}
			require.Positive(t, caughtUp, "no batch lost a race")
			var walks, skips int
			for _, n := range passes {
				walks, skips = walks+n[0], skips+n[1]
			}
			t.Logf("catch-ups: %d walked every key, %d proved it needless", walks, skips)
			// Most races follow deletes: without their tombstones' keys
			// the count never proves the pass needless.
			require.Greater(t, skips, walks, "catch-ups that skipped the pass over every key")
			for i, s := range sinks {
				s.mu.Lock()
				require.NoError(t, s.reload(t.Context()))
				requireRebuildEqual(t, s, fmt.Sprintf("end sink %d", i))
				s.mu.Unlock()
			}
			require.NotEmpty(t, readItems(t, store))
		})
	}
}

// TestKeyIndexCatchUpFallsBack checks that a metadata change (schema
// evolution by another writer) makes the sink rebuild its index.
func TestKeyIndexCatchUpFallsBack(t *testing.T) {
	store := newMemStore()
	a := newTestSink(t, store, ModeDV, DeleteHard)
	_, err := a.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, name: "a", offset: 0}, ev{op: opC, id: 2, pos: 2, name: "b", offset: 1}))
	require.NoError(t, err)
	b := newTestSink(t, store, ModeDV, DeleteHard)
	wide := &codecs.Layout{SchemaID: 3, Name: itemsLayout.Name, Columns: append(append([]codecs.Column(nil), itemsLayout.Columns...),
		codecs.Column{Name: "color", Type: kStr, Nullable: true})}
	r := ev{op: opU, id: 2, pos: 3, name: "b2", offset: 0, part: 1}.record()
	r.Change.Layout = wide
	r.Change.Row = append(r.Change.Row, "red")
	_, err = b.Apply(t.Context(), Batch{Records: []Record{r}})
	require.NoError(t, err)

	before := a.state.index
	a.mu.Lock()
	defer a.mu.Unlock()
	require.NoError(t, a.reload(t.Context()))
	require.NotSame(t, before, a.state.index, "new metadata must rebuild the index")
	requireRebuildEqual(t, a, "after evolution")
	_, ok := a.state.Schema.Field("color")
	require.True(t, ok)
}

// TestKeyIndexCatchUpRestore: another writer re-adds a file without the
// deletion vector that deleted a row (as RESTORE does), so the row lives
// again; the catch-up cannot follow that and rebuilds.
func TestKeyIndexCatchUpRestore(t *testing.T) {
	store := newMemStore()
	a := newTestSink(t, store, ModeDV, DeleteHard)
	_, err := a.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, name: "a", offset: 0}, ev{op: opC, id: 2, pos: 2, name: "b", offset: 1}))
	require.NoError(t, err)
	first := a.state.snap
	_, err = a.Apply(t.Context(), batchOf(ev{op: opD, id: 1, pos: 3, offset: 2}))
	require.NoError(t, err)
	require.Len(t, readItems(t, store), 1)

	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	cur, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	var actions []deltalog.Action
	for _, f := range cur.Files() {
		require.NotNil(t, f.DeletionVector)
		actions = append(actions, deltalog.Action{Remove: &deltalog.Remove{Path: f.Path, DataChange: true, DeletionVector: f.DeletionVector}})
	}
	for _, f := range first.Files() {
		actions = append(actions, deltalog.Action{Add: &f})
	}
	_, err = tbl.Commit(t.Context(), cur, actions, deltalog.Operation{Name: "RESTORE"})
	require.NoError(t, err)
	require.Len(t, readItems(t, store), 2)

	before := a.state.index
	a.mu.Lock()
	defer a.mu.Unlock()
	require.NoError(t, a.reload(t.Context()))
	require.NotSame(t, before, a.state.index, "undeleted rows must rebuild the index")
	requireRebuildEqual(t, a, "after restore")
	require.Equal(t, 2, a.state.index.keys.len())
}

// TestSameDV compares sameDV with what UniqueID and the cardinality say.
func TestSameDV(t *testing.T) {
	off := func(n int32) *int32 { return &n }
	dv := func(storage, path string, offset *int32, card int64) *deltalog.DeletionVector {
		return &deltalog.DeletionVector{StorageType: storage, PathOrInlineDV: path, Offset: offset, Cardinality: card}
	}
	base := dv("u", "ab^-aqEH.-t@S}K{vb[*k^", off(1), 3)
	for _, tc := range []struct {
		name string
		a, b *deltalog.DeletionVector
		want bool
	}{
		{"both none", nil, nil, true},
		{"one none", base, nil, false},
		{"none and one", nil, base, false},
		{"equal", base, dv("u", "ab^-aqEH.-t@S}K{vb[*k^", off(1), 3), true},
		{"other offset", base, dv("u", "ab^-aqEH.-t@S}K{vb[*k^", off(2), 3), false},
		{"no offset", base, dv("u", "ab^-aqEH.-t@S}K{vb[*k^", nil, 3), false},
		{"other file", base, dv("u", "bb^-aqEH.-t@S}K{vb[*k^", off(1), 3), false},
		{"other storage", base, dv("p", "ab^-aqEH.-t@S}K{vb[*k^", off(1), 3), false},
		{"other cardinality", base, dv("u", "ab^-aqEH.-t@S}K{vb[*k^", off(1), 4), false},
		{"inline, equal", dv("i", "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", nil, 2), dv("i", "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", nil, 2), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, sameDV(tc.a, tc.b))
			if tc.a != nil && tc.b != nil {
				require.Equal(t, tc.a.UniqueID() == tc.b.UniqueID() && tc.a.Cardinality == tc.b.Cardinality, sameDV(tc.a, tc.b))
			}
		})
	}
}
