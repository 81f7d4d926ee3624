package storetest

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// SilentListener listens on loopback, accepts connections and never answers
// on them, as an endpoint whose process is frozen (SIGSTOP) does: the kernel
// completes the handshake and buffers the request, and nothing ever comes
// back. It returns the listener's host:port.
func SilentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// OpNames names a store's operations as its errors do.
type OpNames struct{ Get, Put, Delete, List string }

// Op is one store operation, run once.
type Op struct {
	Name string
	Run  func() error
}

// Ops are s's operations, each run once in the background context: Get
// (reading the body to its end), Put of putSize bytes, PutIfAbsent, Delete,
// and List up to its first item.
func Ops(s deltalog.Store, names OpNames, putSize int) []Op {
	ctx := context.Background()
	return []Op{
		{names.Get, func() error {
			rc, err := s.Get(ctx, "_delta_log/0.json")
			if err == nil {
				_, err = io.ReadAll(rc)
				rc.Close()
			}
			return err
		}},
		{names.Put, func() error { return s.Put(ctx, "a.parquet", make([]byte, putSize)) }},
		{names.Put, func() error { return s.PutIfAbsent(ctx, "_delta_log/0.json", []byte("{}")) }},
		{names.Delete, func() error { return s.Delete(ctx, "a.parquet") }},
		{names.List, func() error {
			for _, err := range s.List(ctx, "_delta_log/", "") {
				return err
			}
			return nil
		}},
	}
}

// RequireTimesOut runs each op as a subtest against an endpoint that never
// answers: each must fail within 5 timeouts (SDK retries included) with an
// error matching deltalog.ErrUnavailable, so that the processor retries it.
// check then checks the store's own timeout error.
func RequireTimesOut(t *testing.T, timeout time.Duration, ops []Op, check func(t *testing.T, op string, err error)) {
	for _, tc := range ops {
		t.Run(tc.Name, func(t *testing.T) {
			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- tc.Run() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * timeout):
				t.Fatalf("%s on a hung endpoint still waits after %s", tc.Name, 10*timeout)
			}
			require.ErrorIs(t, err, deltalog.ErrUnavailable)
			check(t, tc.Name, err)
			require.Less(t, time.Since(start), 5*timeout)
		})
	}
}

// WriteSlowly answers a read with 2 bytes every timeout/2: 8 bytes in all,
// longer than timeout but never idle that long. A stalled answer promises 10
// and then sends nothing more until release is closed.
func WriteSlowly(w http.ResponseWriter, timeout time.Duration, stall bool, release <-chan struct{}) {
	w.Header().Set("Content-Length", map[bool]string{false: "8", true: "10"}[stall])
	w.WriteHeader(http.StatusOK)
	for range 4 {
		_, _ = w.Write([]byte("ab"))
		w.(http.Flusher).Flush()
		time.Sleep(timeout / 2)
	}
	if stall {
		<-release
	}
}

// ReadStalled reads rc, whose answer stalls, to its end and returns the read's
// error, which must come within 5 timeouts.
func ReadStalled(t *testing.T, rc io.Reader, timeout time.Duration) error {
	t.Helper()
	start := time.Now()
	read := make(chan error, 1)
	go func() { _, err := io.ReadAll(rc); read <- err }()
	var err error
	select {
	case err = <-read:
	case <-time.After(10 * timeout):
		t.Fatalf("reading a stalled body still waits after %s", 10*timeout)
	}
	require.Less(t, time.Since(start), 5*timeout)
	return err
}
