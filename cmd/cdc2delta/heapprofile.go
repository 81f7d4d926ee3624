package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/procstatus"
)

// heapProfiler writes a heap profile when the process's memory reaches a new
// peak, so a long run leaves a profile of its worst moment rather than of its
// end. Peaks are checked every check; a profile is written at most every gap
// (writing one stops the world briefly), and once more at exit.
type heapProfiler struct {
	path  string
	check time.Duration
	gap   time.Duration
	errw  io.Writer
	// memory returns the figure whose peaks trigger a profile; save
	// writes one (write, but for tests).
	memory func() uint64
	save   func() bool
}

// startHeapProfile starts the profiler when prefix is set and returns the
// function that writes the exit profile and joins its goroutine.
func startHeapProfile(prefix string, errw io.Writer) (stop func()) {
	if prefix == "" {
		return func() {}
	}
	h := &heapProfiler{path: fmt.Sprintf("%s.%d.heap.pprof", prefix, os.Getpid()),
		check: 3 * time.Second, gap: 30 * time.Second, errw: errw, memory: processMemory}
	h.save = h.write
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		h.watch(ctx)
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

// watch writes a profile whenever memory exceeds the last profile's figure
// until ctx ends, then a last one when the process ends above it (or wrote
// none): the file holds the profile nearest the highest memory seen.
func (h *heapProfiler) watch(ctx context.Context) {
	var written uint64
	var last time.Time
	t := time.NewTicker(h.check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if m := h.memory(); m > written || last.IsZero() {
				h.save()
			}
			return
		case <-t.C:
		}
		// Compared with the last profile's figure, not the last peak seen, so
		// a peak reached within gap of a profile still gets one after.
		m := h.memory()
		if m <= written || time.Since(last) < h.gap {
			continue
		}
		if h.save() {
			written, last = m, time.Now()
		}
	}
}

// write replaces the profile through a temporary file, so a kill mid-write
// leaves the previous profile whole.
func (h *heapProfiler) write() bool {
	tmp := h.path + ".tmp"
	f, err := os.Create(tmp)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, h.path)
	}
	if err != nil {
		fmt.Fprintf(h.errw, "CDC2DELTA_HEAPPROFILE: write %s: %v\n", h.path, err)
		return false
	}
	return true
}

// processMemory is the resident set from /proc/self/status (VmRSS), or the
// Go heap in use where /proc is missing.
func processMemory() uint64 {
	if v := procstatus.Field("/proc/self/status", "VmRSS:"); v > 0 {
		return v
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
