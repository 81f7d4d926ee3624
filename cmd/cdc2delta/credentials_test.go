package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// registryPassword is the registry password the credential tests put in
// schema_registry.url; it must reach no output.
const registryPassword = "reg-pa55-in-url"

// withRegistryURL rewrites the fixture's config: schema_registry.url becomes
// url(registry) where registry is the fixture's registry URL, and the log level
// debug, so every line the run can write is checked.
func (f *runFixture) withRegistryURL(url func(registry string) string) {
	f.t.Helper()
	data, err := os.ReadFile(f.cfg)
	require.NoError(f.t, err)
	re := regexp.MustCompile(`schema_registry: \{url: "([^"]+)"\}`)
	m := re.FindSubmatch(data)
	require.NotNil(f.t, m, "no schema_registry line in %s", data)
	data = re.ReplaceAll(data, []byte(`schema_registry: {url: "`+url(string(m[1]))+`"}`))
	data = []byte(strings.Replace(string(data), "log: {level: warn}", "log: {level: debug}", 1))
	require.NoError(f.t, os.WriteFile(f.cfg, data, 0o600))
}

// TestRegistryCredentialsInURL runs `cdc2delta run` with the registry's basic-auth
// credentials in schema_registry.url: against a registry that requires them, every
// table catches up (basic auth works); against an address nothing listens on, the run
// waits for the registry. Neither run's output, debug lines included, shows the
// password, and neither does `validate` refusing credentials given twice.
func TestRegistryCredentialsInURL(t *testing.T) {
	t.Run("registry requires basic auth", func(t *testing.T) {
		f := newRunFixture(t, fixtureOptions{partitions: 2})
		f.produce(80)
		var unauthorized, authorized atomic.Int64
		f.withRegistryURL(func(registry string) string {
			target, err := url.Parse(registry)
			require.NoError(t, err)
			proxy := httputil.NewSingleHostReverseProxy(target)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if u, p, ok := r.BasicAuth(); !ok || u != "svc" || p != registryPassword {
					unauthorized.Add(1)
					http.Error(w, `{"error_code":401,"message":"Unauthorized"}`, http.StatusUnauthorized)
					return
				}
				authorized.Add(1)
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			return strings.Replace(srv.URL, "http://", "http://svc:"+registryPassword+"@", 1)
		})
		log := f.runUntilCaughtUp()
		require.NotContains(t, log, registryPassword)
		require.Positive(t, authorized.Load())
		require.Zero(t, unauthorized.Load(), "every request carried the credentials")
	})

	t.Run("registry unreachable", func(t *testing.T) {
		f := newRunFixture(t, fixtureOptions{partitions: 1})
		f.produce(20)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		closed := ln.Addr().String()
		require.NoError(t, ln.Close()) // nothing listens there now
		f.withRegistryURL(func(string) string { return "http://svc:" + registryPassword + "@" + closed })
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var log syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- runEnv(ctx, []string{"cdc2delta", "run", "--config", f.cfg}, &env{stdout: &log, stderr: &log,
				lookup: func(string) (string, bool) { return "", false }})
		}()
		require.Eventually(t, func() bool {
			return strings.Contains(log.String(), "decoding waits for the schema registry") && strings.Contains(log.String(), closed)
		}, 30*time.Second, 50*time.Millisecond, "no registry wait logged:\n%s", log.String())
		cancel()
		require.Equal(t, exitOK, <-done, log.String())
		require.Contains(t, log.String(), "http://"+closed, "the lines name the registry, without its credentials")
		require.NotContains(t, log.String(), registryPassword)
	})

	t.Run("validate refuses credentials given twice", func(t *testing.T) {
		f := newRunFixture(t, fixtureOptions{partitions: 1})
		f.withRegistryURL(func(registry string) string {
			return strings.Replace(registry, "http://", "http://svc:"+registryPassword+"@", 1) + `", username: svc, password: "other`
		})
		for _, cmd := range []string{"validate", "run"} {
			r := cli(t, cmd, "--config", f.cfg)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, "carries credentials, and schema_registry.username and password are set too")
			require.Contains(t, r.stderr, "svc:***@127.0.0.1")
			require.NotContains(t, r.stdout+r.stderr, registryPassword)
		}
	})
}
