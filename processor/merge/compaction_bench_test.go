package merge

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// BenchmarkCatchUpCompaction measures how a sink gets back in step after
// another writer (automatic maintenance) compacted its table of
// CDC2DELTA_BENCH_ROWS rows, loaded in files of CDC2DELTA_BENCH_LOAD_ROWS,
// into one file: the catch-up indexes every row of the new file. It reports
// the catch-up's time and how far the live heap (as of each collection)
// rose above its level before (the index itself) while it ran, sampled.
// followed=true tags the compacted file with where its rows came from, as
// the maintainer does: the catch-up then follows the rows instead.
//
//	CDC2DELTA_BENCH_LOAD_ROWS=250000 go test ./processor/merge -run '^$' -bench BenchmarkCatchUpCompaction -benchtime 1x
func BenchmarkCatchUpCompaction(b *testing.B) {
	for _, bc := range []struct {
		index  string
		follow bool
	}{{"memory", false}, {"memory", true}, {"disk", false}, {"disk", true}} {
		index := bc.index
		b.Run(fmt.Sprintf("index=%s/followed=%t", index, bc.follow), func(b *testing.B) {
			rows := benchTableRows()
			store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
			require.NoError(b, err)
			opts := Options{Store: store, TableName: "items", Mode: ModeDV}
			if index == "disk" {
				opts.IndexDir = b.TempDir()
			}
			s, err := Open(b.Context(), opts)
			require.NoError(b, err)
			defer s.Close()
			tbl := &benchTable{rng: rand.New(rand.NewPCG(7, 8))}
			tbl.load(b, s, rows)
			dt, err := deltalog.Open(b.Context(), store)
			require.NoError(b, err)
			var (
				elapsed time.Duration
				peak    uint64
				version int64
			)
			for b.Loop() {
				b.StopTimer()
				_, err := s.Apply(b.Context(), tbl.changes(10_000))
				require.NoError(b, err)
				snap, err := dt.Snapshot(b.Context())
				require.NoError(b, err)
				opts := tableops.OptimizeOptions{TargetSize: 1 << 40}
				if bc.follow {
					opts.MovedTags = movedTags
				}
				res, err := tableops.Optimize(b.Context(), dt, snap, opts)
				require.NoError(b, err)
				require.Equal(b, 1, res.NumAddedFiles)
				version = res.Version
				runtime.GC()
				base := liveHeap()
				b.StartTimer()
				start := time.Now()
				high := sampleHeap(func() { require.NoError(b, s.catchUp(b.Context())) })
				elapsed += time.Since(start)
				peak = max(peak, high-min(high, base))
			}
			require.Equal(b, version, s.Version())
			b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/catchup")
			b.ReportMetric(float64(peak)/(1<<20), "live-heap-rise-MiB")
			b.ReportMetric(float64(rows)/(elapsed.Seconds()/float64(b.N)), "rows/s")
		})
	}
}

// sampleHeap runs fn and returns the highest live heap (as the last
// collection found it) seen every 10 ms while it ran, and at its end.
func sampleHeap(fn func()) uint64 {
	var high atomic.Uint64
	sample := func() {
		if v := liveHeap(); v > high.Load() {
			high.Store(v)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	})
	fn()
	close(done)
	wg.Wait()
	runtime.GC()
	sample()
	return high.Load()
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}
