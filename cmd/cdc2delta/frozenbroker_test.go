package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
)

// TestOperatorCommandsBoundKafka: each operator command that talks to Kafka
// succeeds against a working broker, and against one that accepts
// connections and never answers fails within its --timeout, naming
// kafka.brokers and what to check, with exit code 1.
func TestOperatorCommandsBoundKafka(t *testing.T) {
	f := newRunFixture(t, fixtureOptions{partitions: 1})
	res := f.prod.ProduceSync(t.Context(), &kgo.Record{Topic: f.orders.Topic(), Value: []byte("not avro")})
	require.NoError(t, res.FirstErr())
	f.produce(10)
	frozen := storetest.SilentListener(t) // a broker that accepts and never answers
	cfg, err := os.ReadFile(f.cfg)
	require.NoError(t, err)
	frozenCfg := filepath.Join(t.TempDir(), "frozen.yaml")
	brokers := configBroker(t, string(cfg))
	require.NoError(t, os.WriteFile(frozenCfg, []byte(strings.Replace(string(cfg), brokers, frozen, 1)), 0o600))

	const timeout = time.Second
	commands := []struct {
		name string
		args []string
		// ok is the exit code against the working broker: skip of the
		// first record of a table with no Delta log is refused (exit 2)
		// only after every Kafka step answered.
		ok   int
		want string
	}{
		{"offsets", []string{"offsets"}, exitOK, f.orders.Topic()},
		{"offsets regex", []string{"offsets"}, exitOK, f.orders.Topic()},
		{"replay", []string{"replay", "--to-earliest"}, exitOK, "replays from these offsets"},
		{"skip", []string{"skip", "--topic", f.orders.Topic(), "--partition", "0", "--offset", "0"}, exitUsage, "has no Delta log yet"},
	}
	for _, tc := range commands {
		t.Run(tc.name, func(t *testing.T) {
			good, bad := f.cfg, frozenCfg
			if strings.HasSuffix(tc.name, "regex") {
				good, bad = withTopicRegex(t, f.cfg), withTopicRegex(t, frozenCfg)
			}
			args := append(tc.args, "--timeout", timeout.String())
			r := cli(t, append(args, "--config", good)...)
			require.Equal(t, tc.ok, r.code, "against the working broker: %s%s", r.stdout, r.stderr)
			require.Contains(t, r.stdout+r.stderr, tc.want)

			start := time.Now()
			done := make(chan result, 1)
			go func() { done <- cli(t, append(args, "--config", bad)...) }()
			select {
			case r = <-done:
			case <-time.After(10 * timeout):
				t.Fatalf("%s against a broker that never answers did not return within %s", tc.name, 10*timeout)
			}
			took := time.Since(start)
			require.Equal(t, exitFailure, r.code, r.stderr)
			require.Less(t, took, 5*timeout, "each step waits at most --timeout")
			require.Contains(t, r.stderr, "no answer from kafka.brokers within 1s")
			require.Contains(t, r.stderr, "check that kafka.brokers ("+frozen+") are Kafka brokers")
		})
	}
}

// configBroker returns the first broker address of a fixture's config.
func configBroker(t *testing.T, cfg string) string {
	t.Helper()
	_, rest, ok := strings.Cut(cfg, `brokers: ["`)
	require.True(t, ok, cfg)
	addr, _, ok := strings.Cut(rest, `"`)
	require.True(t, ok, cfg)
	return addr
}

// withTopicRegex writes a copy of the config at path that names its topics
// by kafka.topic_regex, which commands resolve on the cluster.
func withTopicRegex(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(b)
	i := strings.Index(s, `topics: ["`)
	require.GreaterOrEqual(t, i, 0, s)
	j := strings.Index(s[i:], `"]`)
	out := s[:i] + fmt.Sprintf("topic_regex: %q", `.*\.orders`) + s[i+j+2:]
	p := filepath.Join(t.TempDir(), "regex.yaml")
	require.NoError(t, os.WriteFile(p, []byte(out), 0o600))
	return p
}
