// Command cdc2delta keeps Delta Lake tables in step with SQL Server through Debezium
// change events on Kafka, and maintains those tables (history, describe, show,
// checkpoint, restore, vacuum, optimize).
//
// Exit codes, which scripts can rely on:
//
//	0  success
//	1  runtime failure (storage, Kafka, a table that cannot be read or committed)
//	2  usage or configuration error (unknown command or flag, bad argument, invalid config)
//
// CDC2DELTA_CPUPROFILE=PREFIX writes a CPU profile of the whole process, for
// benchmarks that run the binary, in segments of a minute:
// PREFIX.PID.000.pprof, .001 and so on, the last at exit (`go tool pprof`
// merges the files it is given). A process killed with SIGKILL loses only
// its last minute.
// CDC2DELTA_HEAPPROFILE=PREFIX writes a heap profile to PREFIX.PID.heap.pprof
// whenever the resident set passes the last profile's (checked every 3 s, at
// most every 30 s) and at exit: a long run leaves the profile of its peak.
// CDC2DELTA_TRACE=PREFIX keeps an execution trace of the last 10 s in memory
// and writes it to PREFIX.PID.N.trace on each SIGUSR1.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile(os.Getenv("CDC2DELTA_CPUPROFILE"))
	stopHeap := startHeapProfile(os.Getenv("CDC2DELTA_HEAPPROFILE"), os.Stderr)
	stopTrace := startFlightTrace(os.Getenv("CDC2DELTA_TRACE"), os.Stderr)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stopTrace()
	stopHeap()
	stopProfile()
	stop()
	os.Exit(code)
}

// startProfile starts a CPU profile when prefix is set; a profile that
// cannot start is reported and skipped, never fatal.
func startProfile(prefix string) (stop func()) {
	if prefix == "" {
		return func() {}
	}
	seg := 0
	var f *os.File
	next := func() bool {
		var err error
		f, err = os.Create(fmt.Sprintf("%s.%d.%03d.pprof", prefix, os.Getpid(), seg))
		if err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "CDC2DELTA_CPUPROFILE: %v\n", err)
			return false
		}
		seg++
		return true
	}
	if !next() {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(profileSegment)
		defer tick.Stop()
		for {
			select {
			case <-done:
				pprof.StopCPUProfile()
				f.Close()
				return
			case <-tick.C:
				pprof.StopCPUProfile()
				f.Close()
				if !next() {
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// profileSegment is how much of a run one CPU profile file holds.
const profileSegment = time.Minute
