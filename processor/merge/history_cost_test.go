package merge

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
)

// readCounter counts the reads of data files and deletion vectors.
type readCounter struct {
	deltalog.Store
	mu    sync.Mutex
	reads []string
}

func (c *readCounter) Get(ctx context.Context, p string) (io.ReadCloser, error) {
	if !strings.HasPrefix(p, "_delta_log/") {
		c.mu.Lock()
		c.reads = append(c.reads, p)
		c.mu.Unlock()
	}
	return c.Store.Get(ctx, p)
}

func (c *readCounter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reads
	c.reads = nil
	return r
}

// TestHistoryBatchCostsWhatItChanges: a batch of in-order changes closes
// its keys' versions from the index, reading no data file or deletion
// vector; a late event reads the files of its key alone; after a restart
// the first batch reads each file once and the next none. The history
// stays whole: one open version per live key, every version kept.
func TestHistoryBatchCostsWhatItChanges(t *testing.T) {
	ctx := t.Context()
	store := &readCounter{Store: memstore.New(memstore.Options{})}
	opts := HistoryOptions{Store: store, TableName: "items_history"}
	h, err := OpenHistory(ctx, opts)
	require.NoError(t, err)
	g := newHistBenchGen(1000)
	apply := func(evs []ev) {
		t.Helper()
		_, err := h.Apply(ctx, g.batch(evs))
		require.NoError(t, err)
	}
	apply(g.inserts(500))
	apply(g.inserts(500))
	apply(g.upserts(100)) // reads the first file, which the index did not write
	store.take()
	versions := 1000 + 100

	for range 3 {
		evs := g.upserts(200)
		apply(evs)
		versions += len(evs)
		require.Empty(t, store.take(), "an in-order batch reads nothing")
	}

	// Key 7 updated in order, then a late update of it before that: only
	// the files holding key 7's rows are read.
	files := map[string]bool{}
	for _, p := range h.index.keyPaths(string(mustKey(t, int32(7)))) {
		files[p] = true
	}
	upd := g.emit(codecs.OpUpdate, 7)
	apply([]ev{upd})
	require.Empty(t, store.take())
	for _, p := range h.index.keyPaths(string(mustKey(t, int32(7)))) {
		files[p] = true
	}
	late := g.emit(codecs.OpUpdate, 7)
	late.pos, late.part = upd.pos-1, 2 // just before upd: splits the version upd closed
	apply([]ev{late})
	versions += 2
	read := store.take()
	require.NotEmpty(t, read)
	for _, p := range read {
		require.True(t, files[p], "read %s, which holds no row of key 7", p)
	}

	// A restart: the first batch reads every file once, the next none.
	h, err = OpenHistory(ctx, opts)
	require.NoError(t, err)
	evs := g.upserts(100)
	apply(evs)
	versions += len(evs)
	var first []string
	for _, p := range store.take() {
		if strings.HasSuffix(p, ".parquet") {
			first = append(first, p)
		}
	}
	require.Len(t, first, len(h.Snapshot().Files())-1, "each file once (but the one the batch wrote)")
	require.Len(t, uniq(first), len(first), "each file once")
	evs = g.upserts(100)
	apply(evs)
	versions += len(evs)
	require.Empty(t, store.take())

	// A compaction (another writer) replaces every file by one: the next
	// batch reads it once, the one after none.
	compactHistory(t, h, store.Store)
	store.take()
	evs = g.upserts(100)
	apply(evs)
	versions += len(evs)
	require.Len(t, store.take(), 1, "the compacted file, once")
	evs = g.upserts(100)
	apply(evs)
	versions += len(evs)
	require.Empty(t, store.take())

	got, err := cdcmodel.ReadVersion(ctx, store.Store, h.Snapshot().Version(), []string{"id", cdcmodel.ColStartPosition})
	require.NoError(t, err)
	require.Len(t, got.Rows, versions, "every version kept")
	open := map[any]int{}
	for _, r := range got.Rows {
		if r[cdcmodel.ColEndPosition] == nil {
			open[r["id"]]++
		}
	}
	live := 0
	for _, l := range g.live {
		if l {
			live++
		}
	}
	require.Len(t, open, live)
	for id, n := range open {
		require.Equal(t, 1, n, "key %v", id)
	}
}

func mustKey(t *testing.T, id int32) []byte {
	t.Helper()
	ts := &hSchema{keyIdx: []int{0}}
	k, err := ts.rowKey([]any{id})
	require.NoError(t, err)
	return []byte(k)
}

func uniq(s []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}

// compactHistory rewrites every live row of h's table into one file, as
// maintenance compacts (dataChange=false, deletion vectors purged).
func compactHistory(t *testing.T, h *History, store deltalog.Store) {
	t.Helper()
	ctx := t.Context()
	snap := h.Snapshot()
	meta := snap.Metadata()
	var rows [][]any
	var acts []deltalog.Action
	for _, a := range snap.Files() {
		r, err := datafile.Read(ctx, store, &a, snap.Schema(), datafile.ReadOptions{Properties: meta.Configuration})
		require.NoError(t, err)
		rows = append(rows, r...)
		acts = append(acts, deltalog.Action{Remove: a.Remove(false)})
	}
	w, err := datafile.NewWriter(datafile.Options{Schema: snap.Schema(), Properties: meta.Configuration})
	require.NoError(t, err)
	adds, err := w.Write(ctx, store, rows)
	require.NoError(t, err)
	require.Len(t, adds, 1)
	adds[0].DataChange = false
	acts = append(acts, deltalog.Action{Add: &adds[0]})
	tbl, err := deltalog.Open(ctx, store)
	require.NoError(t, err)
	_, err = tbl.Commit(ctx, snap, acts, deltalog.Operation{Name: deltalog.OpOptimize})
	require.NoError(t, err)
}
