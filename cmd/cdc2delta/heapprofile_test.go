package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestHeapProfileAtPeaks: a profile is written when memory passes the last
// profile's figure (not more often than gap), and at exit only when memory
// ended above it.
func TestHeapProfileAtPeaks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		memory []uint64 // one figure per check; the last repeats
		gap    time.Duration
		writes int
	}{
		{"flat: the first check's and none at exit", []uint64{5}, 0, 1},
		{"each new peak", []uint64{1, 2, 3}, 0, 3},
		{"falling: no more", []uint64{3, 2, 1}, 0, 1},
		{"peaks within the gap: first, then at exit", []uint64{1, 2, 3}, time.Hour, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var i, writes atomic.Int64
			h := &heapProfiler{path: filepath.Join(t.TempDir(), "p.heap.pprof"), check: time.Millisecond, gap: tc.gap,
				errw: &bytes.Buffer{}, memory: func() uint64 {
					n := min(int(i.Add(1))-1, len(tc.memory)-1)
					return tc.memory[n]
				}}
			h.save = func() bool { writes.Add(1); return h.write() }
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.watch(ctx)
			}()
			for i.Load() < int64(len(tc.memory)+5) {
				time.Sleep(time.Millisecond)
			}
			cancel()
			<-done
			if got := writes.Load(); got != int64(tc.writes) {
				t.Fatalf("%d profiles written, want %d", got, tc.writes)
			}
			if fi, err := os.Stat(h.path); err != nil || fi.Size() == 0 {
				t.Fatalf("profile: %v", err)
			}
		})
	}
}
