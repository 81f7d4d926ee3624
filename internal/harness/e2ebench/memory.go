package e2ebench

import (
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/procstatus"
)

// memMonitor samples the heap in use while a phase runs.
type memMonitor struct {
	stopc chan struct{}
	peak  chan uint64
}

// startMemMonitor samples runtime.MemStats every 100ms (each read stops
// the world briefly, so not more often).
func startMemMonitor() *memMonitor {
	m := &memMonitor{stopc: make(chan struct{}), peak: make(chan uint64, 1)}
	go func() {
		var peak uint64
		var ms runtime.MemStats
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-m.stopc:
				m.peak <- peak
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// stop ends sampling and returns the peak heap in use.
func (m *memMonitor) stop() uint64 {
	close(m.stopc)
	return <-m.peak
}

// resetPeakRSS resets the kernel's peak resident set of this process
// (Linux 4.0+); elsewhere the peak covers the whole process lifetime.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // best effort
}

// peakRSS returns the process's peak resident set (VmHWM), 0 if unknown.
func peakRSS() uint64 { return statusHWM("/proc/self/status") }

// statusHWM reads VmHWM from a /proc status file, 0 if unknown.
func statusHWM(path string) uint64 { return procstatus.Field(path, "VmHWM:") }

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
