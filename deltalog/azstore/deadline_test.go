package azstore

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// silentListener accepts connections and never answers on them, as an
// endpoint whose process is frozen (SIGSTOP) does: the kernel completes the
// handshake and buffers the request, and nothing ever comes back.
func silentListener(t *testing.T) string {
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
	return "http://" + ln.Addr().String() + "/devstoreaccount1"
}

// TestHungEndpointTimesOut: every operation on an endpoint that accepts and
// never answers fails within the request timeout (SDK retries included)
// with a *TimeoutError naming Azure, the endpoint and the operation, which
// matches deltalog.ErrUnavailable so that the processor retries it.
func TestHungEndpointTimesOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	endpoint := silentListener(t)
	s, err := New(t.Context(), Options{
		Container: "lake", Prefix: "t", Endpoint: endpoint, RequestTimeout: timeout,
		Credentials: Credentials{AccountKey: "a2V5"},
	})
	require.NoError(t, err)
	ops := []struct {
		op  string
		run func() error
	}{
		{"GetBlob", func() error { _, err := s.Get(t.Context(), "_delta_log/0.json"); return err }},
		{"PutBlob", func() error { return s.Put(t.Context(), "a.parquet", make([]byte, 4<<20)) }},
		{"PutBlob", func() error { return s.PutIfAbsent(t.Context(), "_delta_log/0.json", []byte("{}")) }},
		{"DeleteBlob", func() error { return s.Delete(t.Context(), "a.parquet") }},
		{"ListBlobs", func() error {
			for _, err := range s.List(t.Context(), "_delta_log/", "") {
				return err
			}
			return nil
		}},
	}
	for _, tc := range ops {
		t.Run(tc.op, func(t *testing.T) {
			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- tc.run() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * timeout):
				t.Fatalf("%s on a hung endpoint still waits after %s", tc.op, 10*timeout)
			}
			require.ErrorIs(t, err, deltalog.ErrUnavailable)
			var te *TimeoutError
			require.ErrorAs(t, err, &te)
			require.Equal(t, tc.op, te.Op)
			require.Equal(t, endpoint, te.Endpoint)
			require.Contains(t, err.Error(), "Azure Blob at "+endpoint)
			require.Less(t, time.Since(start), 5*timeout)
		})
	}
}
