package glue

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// Glue's error answers map onto the catalog's sentinels.
func TestGlueErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		want   error
	}{
		{400, "UnrecognizedClientException", catalog.ErrDenied},
		{403, "AccessDeniedException", catalog.ErrDenied},
		{400, "EntityNotFoundException", catalog.ErrNotFound},
		{400, "AlreadyExistsException", catalog.ErrExists},
		{500, "InternalServiceException", catalog.ErrUnavailable},
		{400, "ThrottlingException", catalog.ErrUnavailable},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.Header().Set("X-Amzn-ErrorType", tc.code)
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(`{"__type":"` + tc.code + `","message":"test"}`))
		}))
		c, err := New(t.Context(), Options{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"})
		require.NoError(t, err)
		_, err = c.Lookup(t.Context(), catalog.Name{Schema: "db", Table: "t"})
		require.ErrorIs(t, err, tc.want, "%s: %v", tc.code, err)
		require.ErrorContains(t, err, "glue: looking up db.t in Glue at "+srv.URL)
		srv.Close()
	}
	c, err := New(t.Context(), Options{Endpoint: "http://127.0.0.1:1", Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"})
	require.NoError(t, err)
	_, err = c.Lookup(t.Context(), catalog.Name{Schema: "db", Table: "t"})
	require.ErrorIs(t, err, catalog.ErrUnavailable, "connection refused")
	_, err = c.Lookup(t.Context(), catalog.Name{Catalog: "c", Schema: "db", Table: "t"})
	require.ErrorContains(t, err, "must have two parts")
}

// A connection reset under an answer is retried (the SDK's transient
// errors), and a permanent answer is not.
func TestGlueRetriesTransient(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int // connections reset before the answer
		code     string
		want     error
		calls    int
	}{
		{"reset once", 1, "EntityNotFoundException", catalog.ErrNotFound, 2},
		{"reset every time", 10, "EntityNotFoundException", catalog.ErrUnavailable, maxAttempts},
		{"permanent", 0, "AccessDeniedException", catalog.ErrDenied, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if int(calls.Add(1)) <= tc.failures {
					conn, _, err := http.NewResponseController(w).Hijack()
					require.NoError(t, err)
					_ = conn.(*net.TCPConn).SetLinger(0) // RST, as a server dropping the connection
					_ = conn.Close()
					return
				}
				w.Header().Set("Content-Type", "application/x-amz-json-1.1")
				w.WriteHeader(400)
				_, _ = w.Write([]byte(`{"__type":"` + tc.code + `","message":"test"}`))
			}))
			defer srv.Close()
			c, err := New(t.Context(), Options{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"})
			require.NoError(t, err)
			_, err = c.Lookup(t.Context(), catalog.Name{Schema: "db", Table: "t"})
			require.ErrorIs(t, err, tc.want, "%v", err)
			require.EqualValues(t, tc.calls, calls.Load())
		})
	}
}
