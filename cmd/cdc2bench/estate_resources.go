package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
)

// renderEstateResources writes where the run's memory, disk and commit
// time went, so a missed goal can be told the product's or the machine's.
func renderEstateResources(w io.Writer, r *e2ebench.EstateResult) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	mib := func(b uint64) float64 { return float64(b) / (1 << 20) }
	if m := r.MemoryPeak; m != nil {
		rest := int64(m.RSSBytes) - int64(m.HeapInuseBytes) - int64(m.StackInuseBytes)
		p("\nMemory at the highest sampled resident set (%.0f s after the start, %d samples): RSS %.0f MiB = Go heap in use %.0f MiB + stacks %.0f MiB + the rest %.0f MiB (runtime overhead, freed heap not yet returned, mapped files); the runtime held %.0f MiB from the OS, next GC at %.0f MiB of heap.\n",
			m.Seconds, len(r.Memory), mib(m.RSSBytes), mib(m.HeapInuseBytes), mib(m.StackInuseBytes), float64(rest)/(1<<20),
			mib(m.GoSysBytes), mib(m.NextGCBytes))
	}
	if io := r.IO; io != nil && r.Events > 0 {
		ev := float64(r.Events)
		p("\nI/O over the measured phase: the run read %.0f MiB and wrote %.0f MiB to storage (%.0f and %.0f bytes per event) in %d read and %d write calls (%.2f per event).",
			mib(io.ReadBytes), mib(io.WriteBytes), float64(io.ReadBytes)/ev, float64(io.WriteBytes)/ev,
			io.ReadCalls, io.WriteCalls, float64(io.ReadCalls+io.WriteCalls)/ev)
		if io.DiskError != "" {
			p(" Disk: %s.\n", io.DiskError)
		} else {
			meanQueue := 0.0
			if io.DiskBusySeconds > 0 {
				meanQueue = io.DiskQueueSeconds / io.DiskBusySeconds
			}
			p(" Its disk (%s, shared with the machine) read %.0f MiB and wrote %.0f MiB in %d writes, busy %.0f s (%.0f%% of the phase) with %.1f requests in flight on average.\n",
				io.Device, mib(io.DiskReadBytes), mib(io.DiskWriteBytes), io.DiskWrites, io.DiskBusySeconds, 100*io.DiskBusyShare, meanQueue)
		}
	}
	if ph := r.Phase; ph != nil && ph.Commits > 0 {
		p("\nCommits in the measured phase: %.0f, %.3f s each on average (`cdc2delta_commit_seconds`: a batch's MERGE and Delta commit, waits for CPU and disk included).",
			ph.Commits, ph.CommitSeconds/ph.Commits)
		for _, k := range slices.Sorted(maps.Keys(ph.MaintenanceSeconds)) {
			if n := ph.Maintenance[k]; n > 0 {
				p(" Upkeep %s: %.0f runs, %.2f s each.", k, n, ph.MaintenanceSeconds[k]/n)
			}
		}
		p("\n")
	}
}
