package codecs

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeRegistry serves GET /schemas/ids/{id} from a map, failing the first
// failures requests with status failWith, optionally after a delay.
type fakeRegistry struct {
	schemas    map[string]string // id → schema text
	schemaType string
	failures   atomic.Int64
	failWith   int
	delay      time.Duration
	hits       atomic.Int64
	mu         sync.Mutex
	authz      []string
}

func (f *fakeRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	f.mu.Lock()
	f.authz = append(f.authz, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if f.delay > 0 {
		select { // a slow registry, which stops when the client gives up
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	if f.failures.Add(-1) >= 0 {
		w.WriteHeader(f.failWith)
		_ = json.NewEncoder(w).Encode(map[string]any{"error_code": f.failWith * 100, "message": "try later"}) // best effort body
		return
	}
	id := strings.TrimPrefix(r.URL.Path, "/schemas/ids/")
	s, ok := f.schemas[id]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{"error_code": 40403, "message": "Schema not found"}) // best effort body
		return
	}
	resp := map[string]any{"schema": s}
	if f.schemaType != "" {
		resp["schemaType"] = f.schemaType
	}
	_ = json.NewEncoder(w).Encode(resp) // best effort body
}

func (f *fakeRegistry) headers() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.authz...)
}

// lockedBuffer collects log output from concurrent goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const tinySchema = `{"type":"record","name":"Key","fields":[{"name":"id","type":"int"}]}`

func TestRegistrySchemaByID(t *testing.T) {
	tests := []struct {
		name       string
		failures   int64
		failWith   int
		schemaType string
		id         int
		maxTries   int
		wantErr    error
		wantHits   int64
		wantWarns  int
	}{
		{name: "ok", id: 1, wantHits: 1},
		{name: "503 twice then ok", failures: 2, failWith: 503, id: 1, wantHits: 3, wantWarns: 2},
		{name: "429 then ok", failures: 1, failWith: 429, id: 1, wantHits: 2, wantWarns: 1},
		{name: "unknown id not retried", id: 2, wantErr: ErrUnknownSchema, wantHits: 1},
		{name: "401 refused, not retried", failures: 1, failWith: 401, id: 1, wantErr: ErrRegistryRefused, wantHits: 1},
		{name: "403 refused, not retried", failures: 1, failWith: 403, id: 1, wantErr: ErrRegistryRefused, wantHits: 1},
		{name: "500 until max attempts", failures: 100, failWith: 500, id: 1, maxTries: 3, wantErr: ErrRegistry, wantHits: 3, wantWarns: 2},
		{name: "protobuf schema refused", schemaType: "PROTOBUF", id: 1, wantErr: ErrUnsupportedSchema, wantHits: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr := &fakeRegistry{schemas: map[string]string{"1": tinySchema}, failWith: tc.failWith, schemaType: tc.schemaType}
			fr.failures.Store(tc.failures)
			srv := httptest.NewServer(fr)
			defer srv.Close()
			var logs lockedBuffer
			r, err := NewRegistry(RegistryOptions{URLs: []string{srv.URL}, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
				MaxAttempts: tc.maxTries, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			s, err := r.SchemaByID(t.Context(), tc.id)
			require.Equal(t, tc.wantHits, fr.hits.Load())
			require.Equal(t, tc.wantWarns, strings.Count(logs.String(), "level=WARN"), logs.String())
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tinySchema, s)
		})
	}
}

func TestRegistryOutageStallsUntilContextEnds(t *testing.T) {
	fr := &fakeRegistry{schemas: map[string]string{"1": tinySchema}, failWith: 503}
	fr.failures.Store(1 << 30)
	srv := httptest.NewServer(fr)
	defer srv.Close()
	var logs lockedBuffer
	r, err := NewRegistry(RegistryOptions{URLs: []string{srv.URL}, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = r.SchemaByID(ctx, 1)
	require.ErrorIs(t, err, ErrRegistry)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.GreaterOrEqual(t, time.Since(start), 140*time.Millisecond, "kept retrying until the context ended")
	require.Greater(t, fr.hits.Load(), int64(3))
	require.Contains(t, logs.String(), "schema_id=1")
}

func TestRegistryAuth(t *testing.T) {
	tests := []struct {
		name string
		opts RegistryOptions
		want string
	}{
		{name: "basic", opts: RegistryOptions{User: "svc", Password: "s3cret"}, want: "Basic c3ZjOnMzY3JldA=="},
		{name: "bearer", opts: RegistryOptions{BearerToken: "tok"}, want: "Bearer tok"},
		{name: "none", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr := &fakeRegistry{schemas: map[string]string{"1": tinySchema}}
			srv := httptest.NewServer(fr)
			defer srv.Close()
			tc.opts.URLs = []string{srv.URL}
			r, err := NewRegistry(tc.opts)
			require.NoError(t, err)
			_, err = r.SchemaByID(t.Context(), 1)
			require.NoError(t, err)
			require.Equal(t, []string{tc.want}, fr.headers())
		})
	}
}

func TestRegistryTLS(t *testing.T) {
	fr := &fakeRegistry{schemas: map[string]string{"1": tinySchema}}
	srv := httptest.NewUnstartedServer(fr)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted handshake below fails on purpose
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())

	r, err := NewRegistry(RegistryOptions{URLs: []string{srv.URL}, TLS: &tls.Config{RootCAs: pool}})
	require.NoError(t, err)
	s, err := r.SchemaByID(t.Context(), 1)
	require.NoError(t, err)
	require.Equal(t, tinySchema, s)

	// Without the CA the handshake fails on every attempt.
	untrusted, err := NewRegistry(RegistryOptions{URLs: []string{srv.URL}, MaxAttempts: 1})
	require.NoError(t, err)
	_, err = untrusted.SchemaByID(t.Context(), 1)
	require.ErrorIs(t, err, ErrRegistry)
}

func TestDecoderOverRegistryCollapsesLookups(t *testing.T) {
	cols := ordersCols()
	env := envelopeSchema(layoutV3, cols)
	ks := keySchema(cols[:1])
	fr := &fakeRegistry{schemas: map[string]string{"7": ks, "8": env}, delay: 30 * time.Millisecond, failWith: 503}
	fr.failures.Store(1) // the first request fails: the retry must also be shared
	srv := httptest.NewServer(fr)
	defer srv.Close()
	r, err := NewRegistry(RegistryOptions{URLs: []string{srv.URL}, MinBackoff: time.Millisecond})
	require.NoError(t, err)
	d, err := NewDecoder(r, Options{})
	require.NoError(t, err)
	key := encode(t, 7, ks, map[string]any{"order_id": int32(1001)})
	value := encode(t, 8, env, envelope(layoutV3, "c", nil, ordersRow("NEW", []byte{1}, 1), srcBlock{}, ""))

	var wg sync.WaitGroup
	ops := make(chan Op, 20)
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			ch, err := d.Decode(t.Context(), key, value)
			ops <- ch.Op
			errs <- err
		})
	}
	wg.Wait()
	close(ops)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for op := range ops {
		require.Equal(t, OpCreate, op)
	}
	require.Equal(t, int64(3), fr.hits.Load(), "one failed + one successful value lookup, one key lookup")
}

// TestRegistryURLCredentials gives the registry's credentials in its URL
// (http://user:password@host): basic auth works, and the password appears in
// no log line and no error, whether the registry answers, refuses or cannot
// be reached.
func TestRegistryURLCredentials(t *testing.T) {
	const password = "pa55-w0rd-in-url"
	authed := func(w http.ResponseWriter, r *http.Request) bool {
		if u, p, ok := r.BasicAuth(); !ok || u != "svc" || p != password {
			w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error_code":401,"message":"Unauthorized"}`) // best effort body
			return false
		}
		return true
	}
	fr := &fakeRegistry{schemas: map[string]string{"1": tinySchema}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if authed(w, r) {
			fr.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	withCreds := func(base, pw string) string {
		return strings.Replace(base, "http://", "http://svc:"+pw+"@", 1)
	}

	tests := []struct {
		name    string
		url     string
		wantErr error // nil: the schema is fetched
	}{
		{"basic auth from the URL", withCreds(srv.URL, password), nil},
		{"wrong password refused", withCreds(srv.URL, password+"-not"), ErrRegistryRefused},
		{"unreachable", withCreds("http://"+closed, password), ErrRegistry},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs lockedBuffer
			r, err := NewRegistry(RegistryOptions{URLs: []string{tc.url}, MaxAttempts: 3, MinBackoff: time.Millisecond,
				MaxBackoff: 2 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			require.NoError(t, err)
			dec, err := NewDecoder(r, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			require.NoError(t, err)
			_, err = dec.Decode(t.Context(), nil, append(AppendHeader(nil, 1), 2))
			s, serr := r.SchemaByID(t.Context(), 1)
			if tc.wantErr == nil {
				require.NoError(t, serr)
				require.Equal(t, tinySchema, s)
			} else {
				require.ErrorIs(t, serr, tc.wantErr)
				require.ErrorIs(t, err, tc.wantErr)
			}
			all := logs.String() + "\n" + fmt.Sprint(err) + "\n" + fmt.Sprint(serr)
			require.NotContains(t, all, password)
			if tc.name == "unreachable" {
				require.Contains(t, logs.String(), "level=WARN")
				require.Contains(t, all, closed, "the errors still name the registry")
			}
		})
	}
}

// TestRegistryURLCredentialsRefused checks the combinations NewRegistry
// refuses, and that its errors mask the password.
func TestRegistryURLCredentialsRefused(t *testing.T) {
	tests := []struct {
		name string
		opts RegistryOptions
		want string
	}{
		{"and a user", RegistryOptions{URLs: []string{"http://svc:hidden@r:8081"}, User: "svc", Password: "x"}, "a user and password are given too"},
		{"and a bearer token", RegistryOptions{URLs: []string{"http://svc:hidden@r:8081"}, BearerToken: "t"}, "a bearer token is given too"},
		{"different per URL", RegistryOptions{URLs: []string{"http://svc:hidden@r1", "http://svc:other@r2"}}, "carry different credentials"},
		{"unparsable", RegistryOptions{URLs: []string{"http://svc:hidden@r:port"}}, "not a URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewRegistry(tc.opts)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "svc:***@r")
			require.NotContains(t, err.Error(), "hidden")
		})
	}
	// The same credentials on every URL are fine.
	_, err := NewRegistry(RegistryOptions{URLs: []string{"http://svc:hidden@r1", "http://svc:hidden@r2"}})
	require.NoError(t, err)
}
