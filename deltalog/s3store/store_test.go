package s3store

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
)

const testBucket = "lake"

// fakeS3 starts an in-process gofakes3 server (which checks If-None-Match atomically
// under its backend lock) behind wrap, and returns a store on it.
func fakeS3(t *testing.T, prefix string, wrap func(http.Handler) http.Handler) *Store {
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket(testBucket))
	var h http.Handler = gofakes3.New(backend).Server()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s, err := New(t.Context(), Options{
		Bucket:       testBucket,
		Prefix:       prefix,
		Region:       "eu-west-1",
		Endpoint:     srv.URL,
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("key", "secret", ""),
		MaxRetries:   3,
	})
	require.NoError(t, err)
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) deltalog.Store { return fakeS3(t, "", nil) })
}

func TestConformanceWithPrefix(t *testing.T) {
	storetest.Run(t, func(t *testing.T) deltalog.Store { return fakeS3(t, "/warehouse/db/orders/", nil) })
}

func TestPrefixIsolation(t *testing.T) {
	ctx := t.Context()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket(testBucket))
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	open := func(prefix string) *Store {
		s, err := New(ctx, Options{Bucket: testBucket, Prefix: prefix, Endpoint: srv.URL, UsePathStyle: true,
			Credentials: credentials.NewStaticCredentialsProvider("key", "secret", "")})
		require.NoError(t, err)
		return s
	}
	a, ab := open("t/a"), open("t/ab")
	require.NoError(t, a.Put(ctx, "_delta_log/0.json", []byte("a")))
	require.NoError(t, ab.Put(ctx, "_delta_log/0.json", []byte("ab")))
	paths, err := storetest.Paths(ctx, a, "", "")
	require.NoError(t, err)
	require.Equal(t, []string{"_delta_log/0.json"}, paths, "table t/a must not see t/ab")
	got, err := storetest.Read(ctx, ab, "_delta_log/0.json")
	require.NoError(t, err)
	require.Equal(t, "ab", string(got))
	require.Equal(t, "s3://lake/t/ab", ab.Root())
}

// conflictFirst answers the first n conditional PUTs with 409 ConditionalRequestConflict,
// as S3 does while another conditional write to the key is in flight.
func conflictFirst(n int32, seen *atomic.Int32) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*" && seen.Add(1) <= n {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>ConditionalRequestConflict</Code>` +
					`<Message>A conflicting conditional operation is currently in progress against this resource.</Message></Error>`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func TestPutIfAbsentRetriesConflict(t *testing.T) {
	ctx := t.Context()
	var seen atomic.Int32
	s := fakeS3(t, "", conflictFirst(2, &seen))
	require.NoError(t, s.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("v0")))
	require.EqualValues(t, 3, seen.Load(), "two 409s, then the write")
	got, err := storetest.Read(ctx, s, "_delta_log/00000000000000000000.json")
	require.NoError(t, err)
	require.Equal(t, "v0", string(got))
}

func TestPutIfAbsentConflictBounded(t *testing.T) {
	var seen atomic.Int32
	s := fakeS3(t, "", conflictFirst(1000, &seen))
	err := s.PutIfAbsent(t.Context(), "_delta_log/00000000000000000000.json", []byte("v0"))
	require.Error(t, err)
	require.NotErrorIs(t, err, deltalog.ErrExist, "a conflict is not a lost race")
	require.ErrorContains(t, err, "ConditionalRequestConflict")
	require.EqualValues(t, 4, seen.Load(), "MaxRetries=3 allows four attempts")
}

// lostAck lets the first conditional PUT through to the server but answers the client
// with a 503, as when the response is lost after S3 stored the object. The SDK retries;
// the retry gets 412 for an object that is in fact ours.
func lostAck(next http.Handler) http.Handler {
	var first atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*" && first.CompareAndSwap(false, true) {
			next.ServeHTTP(httptest.NewRecorder(), r)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`<Error><Code>ServiceUnavailable</Code><Message>lost</Message></Error>`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func TestPutIfAbsentAmbiguousRetry(t *testing.T) {
	ctx := t.Context()
	s := fakeS3(t, "", lostAck)
	require.NoError(t, s.PutIfAbsent(ctx, "_delta_log/00000000000000000007.json", []byte("ours")),
		"our own object found by the retry is a success")
	require.ErrorIs(t, s.PutIfAbsent(ctx, "_delta_log/00000000000000000007.json", []byte("theirs")), deltalog.ErrExist)
	require.ErrorIs(t, s.PutIfAbsent(ctx, "_delta_log/00000000000000000007.json", []byte("our")), deltalog.ErrExist,
		"a prefix of the content is not the content")
}

// TestGofakes3HonoursIfNoneMatch guards the assumption the other tests rest on: the raw
// server answers a second conditional PUT with 412.
func TestGofakes3HonoursIfNoneMatch(t *testing.T) {
	var statuses []int
	record := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if r.Method == http.MethodPut {
				statuses = append(statuses, rec.Code)
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		})
	}
	s := fakeS3(t, "", record)
	require.NoError(t, s.PutIfAbsent(t.Context(), "k", []byte("1")))
	require.ErrorIs(t, s.PutIfAbsent(t.Context(), "k", []byte("2")), deltalog.ErrExist)
	require.Equal(t, []int{http.StatusOK, http.StatusPreconditionFailed}, statuses)
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		in         string
		bucket     string
		prefix     string
		wantErrMsg string
	}{
		{in: "s3://lake/warehouse/orders", bucket: "lake", prefix: "warehouse/orders"},
		{in: "s3a://lake/warehouse/orders/", bucket: "lake", prefix: "warehouse/orders"},
		{in: "s3://lake", bucket: "lake"},
		{in: "s3://lake/", bucket: "lake"},
		{in: "gs://lake/x", wantErrMsg: "scheme"},
		{in: "s3:///x", wantErrMsg: "no bucket"},
		{in: "s3://lake/x?versionId=1", wantErrMsg: "query"},
		{in: "/local/path", wantErrMsg: "scheme"},
		{in: "s3://AKIA:hidden@lake/x", wantErrMsg: `"s3://AKIA:***@lake/x": a table URL carries no credentials`},
		{in: "s3://AKIA:hidden@lake:port/x", wantErrMsg: `parsing "s3://AKIA:***@lake:port/x"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			o, err := ParseURL(tc.in)
			if tc.wantErrMsg != "" {
				require.ErrorContains(t, err, tc.wantErrMsg)
				require.NotContains(t, err.Error(), "hidden")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.bucket, o.Bucket)
			require.Equal(t, tc.prefix, o.Prefix)
		})
	}
}

func TestNewValidates(t *testing.T) {
	_, err := New(t.Context(), Options{})
	require.ErrorContains(t, err, "Bucket")
	_, err = New(t.Context(), Options{Bucket: "b", Endpoint: "http://AKIA:hidden@minio:9000"})
	require.ErrorContains(t, err, `"http://AKIA:***@minio:9000" carries credentials`)
	require.NotContains(t, err.Error(), "hidden")
	s, err := New(t.Context(), Options{Bucket: "b", Prefix: "/a/b/", Endpoint: "http://127.0.0.1:1", MaxRetries: -1})
	require.NoError(t, err)
	require.Equal(t, "a/b/", s.root)
	require.Zero(t, s.maxRetries)
	require.True(t, strings.HasPrefix(s.Root(), "s3://b/a/b"))
}
