package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/trace"
	"syscall"
	"time"
)

// flightWindow is how much of the recent past a flight trace holds (at
// most flightBytes of it).
const (
	flightWindow = 10 * time.Second
	flightBytes  = 256 << 20
)

// startFlightTrace keeps, when prefix is set, an execution trace of the
// last flightWindow in memory and writes it to PREFIX.PID.N.trace on each
// SIGUSR1 (`go tool trace`; `-pprof=sched` shows where goroutines waited
// to run). It returns the function that stops it and joins its goroutine.
func startFlightTrace(prefix string, errw io.Writer) (stop func()) {
	if prefix == "" {
		return func() {}
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: flightWindow, MaxBytes: flightBytes})
	if err := fr.Start(); err != nil {
		fmt.Fprintf(errw, "CDC2DELTA_TRACE: %v\n", err)
		return func() {}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case <-sig:
				if err := writeFlightTrace(fr, fmt.Sprintf("%s.%d.%d.trace", prefix, os.Getpid(), n)); err != nil {
					fmt.Fprintf(errw, "CDC2DELTA_TRACE: %v\n", err)
				}
			}
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
		<-stopped
		fr.Stop()
	}
}

func writeFlightTrace(fr *trace.FlightRecorder, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := fr.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
