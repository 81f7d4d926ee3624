package e2ebench

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/procstatus"
)

// MemSample is the run's memory at one moment: the resident set and the
// Go runtime's part of it (/metrics), so that the rest (memory-mapped
// files, allocator slack, C) shows as the difference.
type MemSample struct {
	Seconds  float64 `json:"seconds"` // since the run started
	RSSBytes uint64  `json:"rss_bytes"`
	// HeapInuseBytes is the heap's spans in use; GoSysBytes all the
	// runtime holds from the OS (heap, stacks, its own structures);
	// NextGCBytes the heap size that triggers the next collection.
	HeapInuseBytes  uint64 `json:"heap_inuse_bytes"`
	StackInuseBytes uint64 `json:"stack_inuse_bytes"`
	GoSysBytes      uint64 `json:"go_sys_bytes"`
	NextGCBytes     uint64 `json:"next_gc_bytes"`
}

// EstateIO is the measured phase's I/O, from the events' start to the
// end of the drain.
type EstateIO struct {
	// The run's own: bytes that reached the storage layer (page cache
	// hits are not reads) and read and write system calls.
	ReadBytes  uint64 `json:"read_bytes"`
	WriteBytes uint64 `json:"write_bytes"`
	ReadCalls  uint64 `json:"read_syscalls"`
	WriteCalls uint64 `json:"write_syscalls"`
	// The disk holding the tables, shared with every process on it:
	// bytes and write requests, and the time it had requests in flight.
	Device          string  `json:"device,omitempty"`
	DiskReadBytes   uint64  `json:"disk_read_bytes"`
	DiskWriteBytes  uint64  `json:"disk_write_bytes"`
	DiskWrites      uint64  `json:"disk_writes"`
	DiskBusySeconds float64 `json:"disk_busy_seconds"`
	DiskBusyShare   float64 `json:"disk_busy_share"`
	// DiskQueueSeconds is the requests' summed time in the queue: over
	// DiskBusySeconds, the mean number in flight.
	DiskQueueSeconds float64 `json:"disk_queue_seconds"`
	DiskError        string  `json:"disk_error,omitempty"`
}

// ioMark is the counters at one end of the phase.
type ioMark struct {
	at   time.Time
	proc procIO
	disk diskStat
	derr error
}

func markIO(pid int, dir string) (ioMark, error) {
	m := ioMark{at: time.Now()}
	var err error
	if m.proc, err = readProcIO(pid); err != nil {
		return m, err
	}
	m.disk, m.derr = diskOf(dir)
	return m, nil
}

// ioBetween is the I/O from a to b.
func ioBetween(a, b ioMark) *EstateIO {
	io := &EstateIO{ReadBytes: b.proc.ReadBytes - a.proc.ReadBytes, WriteBytes: b.proc.WriteBytes - a.proc.WriteBytes,
		ReadCalls: b.proc.ReadCalls - a.proc.ReadCalls, WriteCalls: b.proc.WriteCalls - a.proc.WriteCalls}
	if err := cmpErr(a.derr, b.derr); err != nil {
		io.DiskError = err.Error()
		return io
	}
	io.Device = b.disk.Device
	io.DiskReadBytes = b.disk.ReadBytes - a.disk.ReadBytes
	io.DiskWriteBytes = b.disk.WriteBytes - a.disk.WriteBytes
	io.DiskWrites = b.disk.Writes - a.disk.Writes
	io.DiskBusySeconds = float64(b.disk.BusyMillis-a.disk.BusyMillis) / 1000
	io.DiskQueueSeconds = float64(b.disk.WeightedWait-a.disk.WeightedWait) / 1000
	if d := b.at.Sub(a.at).Seconds(); d > 0 {
		io.DiskBusyShare = io.DiskBusySeconds / d
	}
	return io
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// watchMemory samples the run's memory every every until ctx ends and
// returns the samples.
func watchMemory(ctx context.Context, pid int, listen string, start time.Time, every time.Duration) []MemSample {
	var out []MemSample
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s := MemSample{Seconds: time.Since(start).Seconds(), RSSBytes: procRSS(pid)}
		if s.RSSBytes > 0 {
			goMemory(ctx, listen, &s)
			out = append(out, s)
		}
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
		}
	}
}

// peakSample is the sample of the highest resident set.
func peakSample(samples []MemSample) *MemSample {
	var p *MemSample
	for i := range samples {
		if p == nil || samples[i].RSSBytes > p.RSSBytes {
			p = &samples[i]
		}
	}
	return p
}

// goMemory fills s's runtime figures from /metrics (the Go collector's
// go_memstats_*); they stay 0 when it does not answer.
func goMemory(ctx context.Context, listen string, s *MemSample) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+listen+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	fields := map[string]*uint64{"go_memstats_heap_inuse_bytes": &s.HeapInuseBytes, "go_memstats_stack_inuse_bytes": &s.StackInuseBytes,
		"go_memstats_sys_bytes": &s.GoSysBytes, "go_memstats_next_gc_bytes": &s.NextGCBytes}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if p := fields[name]; ok && p != nil {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				*p = uint64(f)
			}
		}
	}
}

// procRSS is a process's resident set (VmRSS), 0 if unknown.
func procRSS(pid int) uint64 { return procstatus.Field(procstatus.Of(pid), "VmRSS:") }

// memoryEvery is how often the run's memory is sampled.
const memoryEvery = 5 * time.Second

// EstatePhase is what the run's histograms gained over the measured phase.
type EstatePhase struct {
	Commits       float64 `json:"commits"`
	CommitSeconds float64 `json:"commit_seconds"`
	// MaintenanceSeconds and Maintenance are the upkeep runs that did
	// work, by kind (compact, checkpoint, vacuum).
	MaintenanceSeconds map[string]float64 `json:"maintenance_seconds,omitempty"`
	Maintenance        map[string]float64 `json:"maintenance,omitempty"`
}

// phaseOf is the difference of two scrapes; nil when either is missing.
func phaseOf(before, after map[string]float64) *EstatePhase {
	if before == nil || after == nil {
		return nil
	}
	d := func(k string) float64 { return after[k] - before[k] }
	p := &EstatePhase{Commits: d("cdc2delta_commit_seconds_count"), CommitSeconds: d("cdc2delta_commit_seconds_sum"),
		MaintenanceSeconds: map[string]float64{}, Maintenance: map[string]float64{}}
	for k := range after {
		if kind, ok := strings.CutPrefix(k, "cdc2delta_maintenance_seconds_sum{kind="); ok {
			kind = strings.TrimSuffix(kind, "}")
			p.MaintenanceSeconds[kind] = d(k)
			p.Maintenance[kind] = d("cdc2delta_maintenance_seconds_count{kind=" + kind + "}")
		}
	}
	return p
}
