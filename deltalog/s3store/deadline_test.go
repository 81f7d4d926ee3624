package s3store

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
)

// TestHungEndpointTimesOut: every operation on an endpoint that accepts and
// never answers fails within the request timeout (SDK retries included) with
// a *TimeoutError naming S3, the endpoint and the operation, which matches
// deltalog.ErrUnavailable so that the processor retries it.
func TestHungEndpointTimesOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	endpoint := "http://" + storetest.SilentListener(t)
	s, err := New(t.Context(), Options{
		Bucket: testBucket, Prefix: "t", Region: "eu-west-1", Endpoint: endpoint, UsePathStyle: true,
		Credentials:    credentials.NewStaticCredentialsProvider("key", "secret", ""),
		RequestTimeout: timeout,
	})
	require.NoError(t, err)
	ops := storetest.Ops(s, storetest.OpNames{Get: "GetObject", Put: "PutObject", Delete: "DeleteObject", List: "ListObjectsV2"}, 4<<20)
	storetest.RequireTimesOut(t, timeout, ops, func(t *testing.T, op string, err error) {
		var te *TimeoutError
		require.ErrorAs(t, err, &te)
		require.Equal(t, op, te.Op)
		require.Equal(t, endpoint, te.Endpoint)
		require.Contains(t, err.Error(), "S3 at "+endpoint)
	})
}

// TestBodyStallTimesOut: a GET whose answer stops halfway fails in the read
// with a *TimeoutError, while a slow body that keeps coming does not: the
// deadline is on progress, not on the size of the object.
func TestBodyStallTimesOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	release := make(chan struct{})
	s := fakeS3(t, "t", func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, ".parquet") {
				h.ServeHTTP(w, r)
				return
			}
			storetest.WriteSlowly(w, timeout, strings.HasSuffix(r.URL.Path, "stall.parquet"), release)
		})
	})
	t.Cleanup(func() { close(release) })
	s.timeout = timeout

	rc, err := s.Get(t.Context(), "slow.parquet")
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Equal(t, "abababab", string(got))

	rc, err = s.Get(t.Context(), "stall.parquet")
	require.NoError(t, err)
	defer rc.Close()
	err = storetest.ReadStalled(t, rc, timeout)
	var te *TimeoutError
	require.ErrorAs(t, err, &te, "got %v", err)
	require.True(t, errors.Is(err, deltalog.ErrUnavailable))
	require.Equal(t, "GetObject", te.Op)
}
