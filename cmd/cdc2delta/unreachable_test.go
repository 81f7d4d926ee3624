package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunSaysKafkaIsUnreachable: `run` against brokers that do not answer says so
// within about 10 s, naming kafka.brokers, keeps running (and retrying), and /readyz
// answers 503 with the cause while /healthz stays 200.
func TestRunSaysKafkaIsUnreachable(t *testing.T) {
	dead := closedPort(t)
	metrics := closedPort(t) // free now; run listens on it
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `
kafka: {brokers: [%q], group_id: g, topics: [shop.sales.dbo.orders]}
schema_registry: {url: "http://127.0.0.1:1"}
tables: {path: %q}
metrics: {listen: %q}
`, dead, filepath.Join(dir, "{table}"), metrics), 0o600))

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var log syncBuffer
	done := make(chan int, 1)
	start := time.Now()
	go func() {
		done <- runEnv(ctx, []string{"cdc2delta", "run", "--config", cfg}, &env{stdout: &log, stderr: &log, lookup: func(string) (string, bool) { return "", false }})
	}()
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "no broker in kafka.brokers answers") },
		15*time.Second, 50*time.Millisecond, "log:\n%s", log.String())
	require.Less(t, time.Since(start), 12*time.Second)
	require.Contains(t, log.String(), dead, "the line names the brokers")

	code, body := httpGet(t, "http://"+metrics+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "kafka unreachable")
	require.Contains(t, body, "kafka.brokers")
	code, _ = httpGet(t, "http://"+metrics+"/healthz")
	require.Equal(t, http.StatusOK, code, "waiting for Kafka is not a reason to restart the process")
	select {
	case c := <-done:
		t.Fatalf("run gave up (exit %d); it must keep retrying:\n%s", c, log.String())
	default:
	}
	cancel()
	select {
	case c := <-done:
		require.Equal(t, exitOK, c, log.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("run did not stop:\n%s", log.String())
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	var code int
	var body string
	require.Eventually(t, func() bool {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		code, body = resp.StatusCode, string(b)
		return true
	}, 5*time.Second, 50*time.Millisecond)
	return code, body
}
