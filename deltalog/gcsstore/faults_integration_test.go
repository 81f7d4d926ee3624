//go:build integration

package gcsstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestFakeGCSFaults: the store's answer to each way a real emulator fails. Frozen
// (SIGSTOP on a private fake-gcs-server): a *TimeoutError within the request timeout.
// Refused (the port closed): ErrUnavailable within the retry budget. 403: fake-gcs-server
// checks no credentials, so a reverse proxy in front of it refuses writes as GCS does
// without permission; the error is permanent, and reads through it still work.
func TestFakeGCSFaults(t *testing.T) {
	const timeout = time.Second
	gcs := fulltier.StartFakeGCS(t)
	gcs.CreateBucket("faults")
	open := func(endpoint string) *gcsstore.Store {
		s, err := gcsstore.New(t.Context(), gcsstore.Options{Bucket: "faults", Prefix: "t", Endpoint: endpoint,
			RequestTimeout: timeout, MaxRetries: 2})
		require.NoError(t, err)
		return s
	}
	s := open(gcs.Endpoint)
	ctx := t.Context()
	require.NoError(t, s.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("{}")))

	t.Run("403", func(t *testing.T) {
		target, err := url.Parse(gcs.Endpoint)
		require.NoError(t, err)
		proxy := httputil.NewSingleHostReverseProxy(target)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`{"error":{"code":403,"message":"caller does not have storage.objects.create access"}}`))
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		defer srv.Close()
		denied := open(srv.URL)
		err = denied.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("{}"))
		require.Error(t, err)
		require.False(t, errors.Is(err, deltalog.ErrUnavailable), "403 is permanent: %v", err)
		require.False(t, errors.Is(err, deltalog.ErrExist), "403 is not a lost race: %v", err)
		require.ErrorContains(t, err, "403")
		got, err := readAll(denied, "_delta_log/00000000000000000000.json")
		require.NoError(t, err)
		require.Equal(t, "{}", got)
	})

	t.Run("frozen", func(t *testing.T) {
		gcs.Freeze()
		defer gcs.Thaw()
		start := time.Now()
		err := s.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("{}"))
		var te *gcsstore.TimeoutError
		require.ErrorAs(t, err, &te, "%v", err)
		require.ErrorIs(t, err, deltalog.ErrUnavailable)
		require.Equal(t, gcs.Endpoint, te.Endpoint)
		require.Less(t, time.Since(start), 3*timeout)
		_, err = readAll(s, "_delta_log/00000000000000000000.json")
		require.ErrorAs(t, err, &te, "%v", err)
	})

	t.Run("refused", func(t *testing.T) {
		gone := fulltier.StartFakeGCS(t)
		endpoint := gone.Endpoint
		gone.Stop()
		s := open(endpoint)
		start := time.Now()
		err := s.Put(ctx, "a.parquet", []byte("PAR1"))
		require.ErrorIs(t, err, deltalog.ErrUnavailable)
		require.ErrorContains(t, err, "connection refused")
		_, err = readAll(s, "_delta_log/00000000000000000000.json")
		require.ErrorIs(t, err, deltalog.ErrUnavailable)
		require.Less(t, time.Since(start), 10*time.Second)
	})
}

func readAll(s *gcsstore.Store, p string) (string, error) {
	rc, err := s.Get(context.Background(), p)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}
