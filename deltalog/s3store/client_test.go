package s3store

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
)

// TestClientStoresShareConnections: the stores of two tables made from one
// Client reuse one connection, and stay apart by prefix; two stores from
// New each dial their own.
func TestClientStoresShareConnections(t *testing.T) {
	ctx := t.Context()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket(testBucket))
	srv := httptest.NewUnstartedServer(gofakes3.New(backend).Server())
	var dials atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	opts := Options{Endpoint: srv.URL, UsePathStyle: true, Credentials: credentials.NewStaticCredentialsProvider("key", "secret", "")}

	c, err := NewClient(ctx, opts)
	require.NoError(t, err)
	a, err := c.Store(testBucket, "/t/a/")
	require.NoError(t, err)
	b, err := c.Store(testBucket, "t/b")
	require.NoError(t, err)
	require.Equal(t, "s3://lake/t/a", a.Root())
	for i := range 3 {
		require.NoError(t, a.Put(ctx, "_delta_log/0.json", []byte{'a', byte(i)}))
		require.NoError(t, b.Put(ctx, "_delta_log/0.json", []byte{'b', byte(i)}))
	}
	got, err := storetest.Read(ctx, a, "_delta_log/0.json")
	require.NoError(t, err)
	require.Equal(t, []byte{'a', 2}, got)
	require.EqualValues(t, 1, dials.Load(), "one client, one connection")

	dials.Store(0)
	for _, prefix := range []string{"t/c", "t/d"} {
		o := opts
		o.Bucket, o.Prefix = testBucket, prefix
		s, err := New(ctx, o)
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, "_delta_log/0.json", []byte("x")))
	}
	require.EqualValues(t, 2, dials.Load(), "a client per store dials per store")

	_, err = c.Store("", "t")
	require.Error(t, err)
}
