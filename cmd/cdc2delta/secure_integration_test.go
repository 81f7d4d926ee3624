//go:build integration

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestRunAuthenticated runs the pipeline against the real broker's SASL listener with
// each mechanism, and over TLS (SASL_SSL, the broker's self-signed certificate trusted
// through kafka.tls.ca_file): the tables catch up and `offsets` reads the group.
func TestRunAuthenticated(t *testing.T) {
	sec := fulltier.KafkaSecure(t)
	plain := fulltier.KafkaBrokers(t)
	for _, tc := range []struct{ name, listener, mechanism, tls string }{
		{"plain", sec.SASL, "PLAIN", ""},
		{"scram-sha-256", sec.SASL, "SCRAM-SHA-256", ""},
		{"scram-sha-512", sec.SASL, "SCRAM-SHA-512", ""},
		{"tls-scram-sha-512", sec.SASLSSL, "SCRAM-SHA-512", fmt.Sprintf(", tls: {ca_file: %q}", sec.CAFile)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("auth%s%d", strings.ReplaceAll(tc.name, "-", ""), time.Now().UnixNano())
			f := newRunFixture(t, fixtureOptions{
				partitions: 2, brokers: plain, prefix: id,
				kafka: fmt.Sprintf(`{brokers: [%q], group_id: %q, topics: ["%%s"], sasl: {mechanism: %s, username: %q, password: %q}%s}`,
					tc.listener, id, tc.mechanism, sec.User, sec.Password, tc.tls),
			})
			f.produce(100)
			f.runUntilCaughtUp()
			require.Len(t, f.rows(), len(f.work.Rows(f.orders))+1, "header and the source's rows")
		})
	}
}

// TestRunAuthenticationFails checks that a wrong password or an untrusted broker
// certificate stops `run` at once with exit 1 and a message naming the cause, and
// that the password is never printed.
func TestRunAuthenticationFails(t *testing.T) {
	sec := fulltier.KafkaSecure(t)
	for _, tc := range []struct{ name, listener, password, tls, want string }{
		{"wrong-password", sec.SASL, "wrong-secret", "", "SASL_AUTHENTICATION_FAILED"},
		{"untrusted-certificate", sec.SASLSSL, sec.Password, ", tls: {enabled: true}", "certificate"},
		// The plaintext listener knows no SASL: that is the settings' fault,
		// not a broker that does not answer.
		{"sasl-on-plaintext-listener", fulltier.KafkaBrokers(t)[0], sec.Password, "", "kafka.sasl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("authbad%d", time.Now().UnixNano())
			f := newRunFixture(t, fixtureOptions{
				partitions: 1, brokers: fulltier.KafkaBrokers(t), prefix: id,
				kafka: fmt.Sprintf(`{brokers: [%q], group_id: %q, topics: ["%%s"], sasl: {mechanism: SCRAM-SHA-512, username: %q, password: %q}%s}`,
					tc.listener, id, sec.User, tc.password, tc.tls),
			})
			f.produce(10)
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, "run", "--config", f.cfg)
			out, err := cmd.CombinedOutput()
			require.NoError(t, ctx.Err(), "run did not stop by itself:\n%s", out)
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "%s", out)
			require.Equal(t, exitFailure, ee.ExitCode(), "%s", out)
			require.Contains(t, string(out), "kafka refused access")
			require.Contains(t, string(out), tc.want)
			require.NotContains(t, string(out), tc.password)
		})
	}
}

// TestRunReportsRefusedCredentialsWhileRunning: brokers that answer nothing
// at start and then refuse the credentials (a wrong password, found once the
// network is back) are reported as refusing access, naming kafka.sasl, in
// the log and in /readyz (503), not as brokers that do not answer.
func TestRunReportsRefusedCredentialsWhileRunning(t *testing.T) {
	sec := fulltier.KafkaSecure(t)
	proxy := newGateProxy(t, sec.SASL)
	id := fmt.Sprintf("authlate%d", time.Now().UnixNano())
	dir := t.TempDir()
	metrics := closedPort(t)
	cfg := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  topics: [%s.sales.dbo.orders]
  sasl: {mechanism: SCRAM-SHA-512, username: %q, password: wrong-secret}
schema_registry: {url: "http://127.0.0.1:1"}
tables: {path: %q}
metrics: {listen: %q}
`, proxy.addr, id, id, sec.User, filepath.Join(dir, "{table}"), metrics), 0o600))
	run := startRun(t, binary, cfg, filepath.Join(dir, "run.log"))
	require.Eventually(t, func() bool { return run.logCount("no broker in kafka.brokers answers") > 0 },
		20*time.Second, 100*time.Millisecond, "log:\n%s", run.logTail())

	proxy.open.Store(true)
	var code int
	var body string
	if !assert.Eventually(t, func() bool {
		code, body = httpGet(t, "http://"+metrics+"/readyz")
		return strings.Contains(body, "kafka refused access")
	}, 20*time.Second, 100*time.Millisecond) {
		t.Fatalf("/readyz %d: %s\nlog:\n%s", code, body, run.logTail())
	}
	// It stays so: the broker's answers to the SASL exchange itself do not
	// count as a working connection.
	for range 30 {
		code, body = httpGet(t, "http://"+metrics+"/readyz")
		require.Equal(t, http.StatusServiceUnavailable, code, body)
		require.Contains(t, body, "kafka refused access")
		require.Contains(t, body, "kafka.sasl")
		require.NotContains(t, body, "no broker in kafka.brokers answers")
		time.Sleep(200 * time.Millisecond)
	}
	require.Eventually(t, func() bool { return run.logCount(`msg="kafka refused access; check kafka.sasl`) > 0 },
		10*time.Second, 100*time.Millisecond, "log:\n%s", run.logTail())
	require.NotContains(t, run.logTail(), "wrong-secret")
	require.Equal(t, exitOK, run.terminate(), "log:\n%s", run.logTail())
}

// gateProxy forwards connections to a broker listener while open, and
// closes them at once while not, as a network that is not there yet.
type gateProxy struct {
	addr string
	open atomic.Bool
}

func newGateProxy(t *testing.T, target string) *gateProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	g := &gateProxy{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !g.open.Load() {
				c.Close()
				continue
			}
			b, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(b, c); b.Close() }()
			go func() { _, _ = io.Copy(c, b); c.Close() }()
		}
	}()
	return g
}
