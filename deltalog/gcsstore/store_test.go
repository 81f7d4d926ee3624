package gcsstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
)

// fakeGCS serves handler as a GCS endpoint and returns a store on bucket "lake",
// prefix "t" through it, with retries every 10ms at most.
func fakeGCS(t *testing.T, opts Options, handler http.HandlerFunc) *Store {
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return storeAt(t, srv.URL, opts)
}

func storeAt(t *testing.T, endpoint string, opts Options) *Store {
	opts.Bucket, opts.Prefix, opts.Endpoint = "lake", "t", endpoint
	s, err := New(t.Context(), opts)
	require.NoError(t, err)
	return s
}

// gcsError answers as GCS does with an error.
func gcsError(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":"%s"}}`, code, http.StatusText(code))
}

// isUpload tells an upload request from a read.
func isUpload(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/upload/") }

// bg is the context of the operations under test.
var bg = context.Background()

// ops are the store's operations, each run once.
func ops(s *Store) []storetest.Op {
	return storetest.Ops(s, storetest.OpNames{Get: "get", Put: "put", Delete: "delete", List: "list"}, 1<<20)
}

// TestHungEndpointTimesOut: every operation on an endpoint that accepts and never
// answers fails within the request timeout (SDK retries included) with a *TimeoutError
// naming GCS, the endpoint and the operation, which matches deltalog.ErrUnavailable so
// that the processor retries it.
func TestHungEndpointTimesOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	endpoint := "http://" + storetest.SilentListener(t)
	s := storeAt(t, endpoint, Options{RequestTimeout: timeout})
	storetest.RequireTimesOut(t, timeout, ops(s), func(t *testing.T, op string, err error) {
		var te *TimeoutError
		require.ErrorAs(t, err, &te)
		require.Equal(t, op, te.Op)
		require.Equal(t, endpoint, te.Endpoint)
		require.Contains(t, err.Error(), "GCS at "+endpoint+": "+op+" gs://lake/t/")
	})
}

// TestBodyStallTimesOut: a read whose answer stops halfway fails in the read with a
// *TimeoutError, while a slow body that keeps coming does not: the deadline is on
// progress, not on the size of the object.
func TestBodyStallTimesOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	release := make(chan struct{})
	s := fakeGCS(t, Options{RequestTimeout: timeout}, func(w http.ResponseWriter, r *http.Request) {
		storetest.WriteSlowly(w, timeout, strings.Contains(r.URL.Path, "stall.parquet"), release)
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for the handler
	rc, err := s.Get(bg, "slow.parquet")
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Equal(t, "abababab", string(got))

	rc, err = s.Get(bg, "stall.parquet")
	require.NoError(t, err)
	defer rc.Close()
	err = storetest.ReadStalled(t, rc, timeout)
	var te *TimeoutError
	require.ErrorAs(t, err, &te, "got %v", err)
	require.ErrorIs(t, err, deltalog.ErrUnavailable)
	require.Equal(t, "get", te.Op)
}

// TestErrorMapping: what GCS answers decides what callers see. 412 on a conditional
// write is ErrExist (the committer rebases), 5xx and 429 are retried within the budget
// and then ErrUnavailable, 403 is permanent and not retried, and a closed port is
// ErrUnavailable.
func TestErrorMapping(t *testing.T) {
	t.Run("412 is ErrExist", func(t *testing.T) {
		s := fakeGCS(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
			if isUpload(r) {
				gcsError(w, http.StatusPreconditionFailed)
				return
			}
			_, _ = io.WriteString(w, "the other writer's commit")
		})
		err := s.PutIfAbsent(bg, "_delta_log/00000000000000000001.json", []byte("ours"))
		require.ErrorIs(t, err, deltalog.ErrExist)
	})
	t.Run("412 holding our bytes is success", func(t *testing.T) {
		// A retried upload whose first attempt landed finds its own object.
		s := fakeGCS(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
			if isUpload(r) {
				gcsError(w, http.StatusPreconditionFailed)
				return
			}
			_, _ = io.WriteString(w, "ours")
		})
		require.NoError(t, s.PutIfAbsent(bg, "_delta_log/00000000000000000001.json", []byte("ours")))
	})
	for _, code := range []int{http.StatusForbidden, http.StatusBadRequest} {
		t.Run(fmt.Sprint(code, " is permanent"), func(t *testing.T) {
			var calls atomic.Int32
			s := fakeGCS(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				gcsError(w, code)
			})
			for _, tc := range ops(s) {
				calls.Store(0)
				err := tc.Run()
				require.Error(t, err, tc.Name)
				require.False(t, errors.Is(err, deltalog.ErrUnavailable), "%s: %v", tc.Name, err)
				require.Contains(t, err.Error(), fmt.Sprint(code), tc.Name)
				require.EqualValues(t, 1, calls.Load(), "%s: not retried", tc.Name)
			}
		})
	}
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(code, " is retried, then ErrUnavailable"), func(t *testing.T) {
			var calls atomic.Int32
			s := fakeGCS(t, Options{MaxRetries: 2}, func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				gcsError(w, code)
			})
			for _, tc := range ops(s) {
				calls.Store(0)
				err := tc.Run()
				require.ErrorIs(t, err, deltalog.ErrUnavailable, tc.Name)
				require.EqualValues(t, 3, calls.Load(), "%s: 1 attempt + 2 retries", tc.Name)
			}
		})
	}
	t.Run("refused is ErrUnavailable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		endpoint := "http://" + ln.Addr().String()
		ln.Close()
		s := storeAt(t, endpoint, Options{MaxRetries: 1})
		for _, tc := range ops(s) {
			err := tc.Run()
			require.ErrorIs(t, err, deltalog.ErrUnavailable, tc.Name)
			require.ErrorContains(t, err, "connection refused", tc.Name)
		}
	})
}

// TestListPausesBetweenItems: a consumer slower than the request timeout between two
// items does not make the listing time out; only GCS's silence counts.
func TestListPausesBetweenItems(t *testing.T) {
	const timeout = 200 * time.Millisecond
	s := fakeGCS(t, Options{RequestTimeout: timeout}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"items":[{"name":"t/_delta_log/0.json","size":"2"},{"name":"t/_delta_log/1.json","size":"2"}]}`)
	})
	var got []string
	for info, err := range s.List(bg, "_delta_log/", "") {
		require.NoError(t, err)
		got = append(got, info.Path)
		time.Sleep(2 * timeout)
	}
	require.Equal(t, []string{"_delta_log/0.json", "_delta_log/1.json"}, got)
}
