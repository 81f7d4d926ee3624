//go:build integration

package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/fulltier"
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
