package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/procstatus"
)

// usage is what a system's process tree consumed.
type usage struct {
	// PeakRSS is the largest sum of resident memory over the tree seen by
	// one sample, in bytes.
	PeakRSS int64
	// CPUSeconds is user+system time of the tree, reaped children included.
	CPUSeconds  float64
	WallSeconds float64
	Samples     int
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// procStat is the part of /proc/<pid>/stat cdc2bench reads.
type procStat struct {
	pid, ppid int
	// ticks is utime+stime+cutime+cstime: the process and its reaped children.
	ticks    int64
	rssPages int64
}

// parseProcStat parses one /proc/<pid>/stat line. The command name may
// hold spaces and parentheses, so fields are counted from the last ')'.
func parseProcStat(line []byte) (procStat, error) {
	open := bytes.IndexByte(line, '(')
	end := bytes.LastIndexByte(line, ')')
	if open < 1 || end < open {
		return procStat{}, fmt.Errorf("malformed stat line %q", line)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line[:open])))
	if err != nil {
		return procStat{}, fmt.Errorf("malformed stat line %q", line)
	}
	f := bytes.Fields(line[end+1:])
	// f[0] is field 3 (state): ppid is field 4, utime..cstime 14..17, rss 24.
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("short stat line %q", line)
	}
	num := func(i int) int64 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(string(f[i]), 10, 64)
		return v
	}
	s := procStat{pid: pid, ppid: int(num(1)), ticks: num(11) + num(12) + num(13) + num(14), rssPages: num(21)}
	if err != nil {
		return procStat{}, fmt.Errorf("malformed stat line %q: %w", line, err)
	}
	return s, nil
}

// readProcs reads the stat of every process; processes that exit meanwhile
// are skipped.
func readProcs() map[int]procStat {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make(map[int]procStat, len(ents))
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if s, err := parseProcStat(data); err == nil {
			out[s.pid] = s
		}
	}
	return out
}

// treeUsage sums the stats of root and its descendants.
func treeUsage(procs map[int]procStat, root int) (rssPages, ticks int64) {
	rssPages, ticks, _ = treeMembers(procs, root)
	return rssPages, ticks
}

// treeMembers is treeUsage that also lists the tree's pids.
func treeMembers(procs map[int]procStat, root int) (rssPages, ticks int64, pids []int) {
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	stack := []int{root}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if p, ok := procs[pid]; ok {
			rssPages += p.rssPages
			ticks += p.ticks
			pids = append(pids, pid)
		}
		stack = append(stack, children[pid]...)
	}
	return rssPages, ticks, pids
}

// highWaterRSS reads a process's peak resident set (VmHWM) in bytes: it
// catches peaks shorter than the sampling interval.
func highWaterRSS(pid int) int64 { return int64(procstatus.Field(procstatus.Of(pid), "VmHWM:")) }

// runSampled runs cmd in its own process group, sampling the tree's memory
// and CPU every interval, and kills the group when ctx ends.
func runSampled(ctx context.Context, cmd *exec.Cmd, interval time.Duration) (usage, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return usage{}, err
	}
	pid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var u usage
	var maxTicks int64
	page := int64(os.Getpagesize())
	sample := func() {
		rss, ticks, pids := treeMembers(readProcs(), pid)
		u.PeakRSS = max(u.PeakRSS, rss*page)
		// One process's own peak is a lower bound of the tree's peak.
		for _, p := range pids {
			u.PeakRSS = max(u.PeakRSS, highWaterRSS(p))
		}
		maxTicks = max(maxTicks, ticks)
		u.Samples++
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	sample()
	var err error
loop:
	for {
		select {
		case err = <-done:
			break loop
		case <-tick.C:
			sample()
		case <-ctx.Done():
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			err = <-done
			if err == nil {
				err = ctx.Err()
			}
			break loop
		}
	}
	// Descendants outliving the runner (a JVM the runner did not wait for)
	// would skew the next system's figures.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	u.WallSeconds = time.Since(start).Seconds()
	u.CPUSeconds = float64(maxTicks) / clockTicks
	// The exit status's Maxrss is not used: Go starts children with
	// vfork, and exec records the parent's high-water mark in the child's.
	if st := cmd.ProcessState; st != nil {
		u.CPUSeconds = max(u.CPUSeconds, (st.UserTime() + st.SystemTime()).Seconds())
	}
	return u, err
}
