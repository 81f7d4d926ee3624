package processor

import (
	"context"
	"io"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// requestCounts counts a store's calls as S3 requests: each Get a GET,
// each Put or PutIfAbsent a PUT, each Delete a DELETE, and a List one
// LIST per 1,000 objects (S3's page), at least one.
type requestCounts struct {
	mu                    sync.Mutex
	get, put, list, erase int
}

func (c *requestCounts) add(get, put, list, erase int) {
	c.mu.Lock()
	c.get, c.put, c.list, c.erase = c.get+get, c.put+put, c.list+list, c.erase+erase
	c.mu.Unlock()
}

func (c *requestCounts) take() (get, put, list, erase int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	get, put, list, erase = c.get, c.put, c.list, c.erase
	c.get, c.put, c.list, c.erase = 0, 0, 0, 0
	return
}

type countingStore struct {
	deltalog.Store
	n *requestCounts
}

func (s countingStore) Get(ctx context.Context, p string) (io.ReadCloser, error) {
	s.n.add(1, 0, 0, 0)
	return s.Store.Get(ctx, p)
}

func (s countingStore) Put(ctx context.Context, p string, data []byte) error {
	s.n.add(0, 1, 0, 0)
	return s.Store.Put(ctx, p, data)
}

func (s countingStore) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	s.n.add(0, 1, 0, 0)
	return s.Store.PutIfAbsent(ctx, p, data)
}

func (s countingStore) Delete(ctx context.Context, p string) error {
	s.n.add(0, 0, 0, 1)
	return s.Store.Delete(ctx, p)
}

func (s countingStore) List(ctx context.Context, prefix, startAfter string) iter.Seq2[deltalog.ObjectInfo, error] {
	return func(yield func(deltalog.ObjectInfo, error) bool) {
		n := 0
		defer func() { s.n.add(0, 0, 1+n/1000, 0) }()
		for o, err := range s.Store.List(ctx, prefix, startAfter) {
			n++
			if !yield(o, err) {
				return
			}
		}
	}
}

// TestStoreRequestsPerCommit measures the object-store requests of a
// trickling table, per commit, with and without maintenance (ADR 0032), for
// the capacity model (docs/CAPACITY.md): each of 60 commits holds one
// change of a 2,000-row table. Maintenance must not cost more PUTs than it
// saves, and a commit stays within a handful of requests.
func TestStoreRequestsPerCommit(t *testing.T) {
	type side struct {
		name string
		m    Maintenance
	}
	perCommit := map[string][4]float64{}
	for _, sd := range []side{
		{"maintenance off", Maintenance{Disabled: true}},
		// The tail file on, as users run it: a commit of one change extends a file.
		{"maintenance on", Maintenance{Every: time.Millisecond, CheckpointInterval: time.Millisecond, TailFileSize: merge.DefaultTailFileSize}},
	} {
		t.Run(sd.name, func(t *testing.T) {
			pl := newPipelineOf(t, dbzgen.WorkloadOptions{Seed: 61, Keys: 2000, Snapshot: true}, nil, "req", dbzgen.Orders())
			tb := pl.tables[0]
			n := &requestCounts{}
			pl.mem = map[string]memTable{}
			mem := pl.memStore(tablePath(tb))
			opts := pl.options("req")
			opts.OpenStore = func(_ context.Context, path string) (deltalog.Store, error) {
				return countingStore{pl.memStore(path), n}, nil
			}
			opts.Maintenance = sd.m
			// The snapshot in one commit (one file), however slow the machine,
			// then one commit per change.
			opts.Batch = BatchLimits{Records: 2000, Age: 5 * time.Millisecond, MinRecords: 2000, MaxDelay: time.Minute}
			pl.produce(2000)
			first := pl.start(opts)
			pl.waitCaughtUp()
			first.close(t)
			opts.Batch = BatchLimits{Records: 2000, Age: 5 * time.Millisecond, MinRecords: 1}
			pl.start(opts)
			caughtUp := pl.waitCaughtUp
			caughtUp()
			before := versionOf(t, mem)
			// Kept: upkeep runs only when due and leaves no trace when nothing is, so there
			// is no event to wait for; this lets the snapshot's own upkeep out of the count.
			time.Sleep(50 * time.Millisecond) // the snapshot's own upkeep
			n.take()
			for range 60 {
				pl.produce(1)
				caughtUp()
			}
			time.Sleep(100 * time.Millisecond) // the last upkeep (kept, as above)
			commits := versionOf(t, mem) - before
			get, put, list, erase := n.take()
			c := float64(commits)
			perCommit[sd.name] = [4]float64{float64(put) / c, float64(get) / c, float64(list) / c, float64(erase) / c}
			t.Logf("%s: %d versions; per version: PUT %.2f, GET %.2f, LIST %.2f, DELETE %.2f", sd.name, commits,
				float64(put)/c, float64(get)/c, float64(list)/c, float64(erase)/c)
			require.GreaterOrEqual(t, commits, int64(60))
			require.Less(t, float64(put+get+list+erase)/c, 12.0, "requests per version")
			// The commit's own snapshot needs no read back (ADR 0035): the GET is
			// the file the commit rewrites or extends, and LISTs are the
			// checkpoints' log cleanup, once a day.
			require.Less(t, float64(get)/c, 1.5, "GETs per version")
			require.Less(t, float64(list)/c, 0.1, "LISTs per version")
		})
	}
	off, on := perCommit["maintenance off"], perCommit["maintenance on"]
	require.Less(t, on[0], off[0], "maintenance saves PUTs: no deletion vector file per commit")
}

// versionOf is the table's latest version.
func versionOf(t *testing.T, store deltalog.Store) int64 {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	return snap.Version()
}
