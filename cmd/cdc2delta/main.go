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
// CDC2DELTA_CPUPROFILE=PREFIX writes a CPU profile of the whole process to
// PREFIX.PID.pprof when it exits, for benchmarks that run the binary.
// CDC2DELTA_HEAPPROFILE=PREFIX writes a heap profile to PREFIX.PID.heap.pprof
// whenever the resident set passes the last profile's (checked every 3 s, at
// most every 30 s) and at exit: a long run leaves the profile of its peak.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile(os.Getenv("CDC2DELTA_CPUPROFILE"))
	stopHeap := startHeapProfile(os.Getenv("CDC2DELTA_HEAPPROFILE"), os.Stderr)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
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
	f, err := os.Create(fmt.Sprintf("%s.%d.pprof", prefix, os.Getpid()))
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "CDC2DELTA_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
