package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValidateReportsEverything: one `validate` run (and `run`, which checks the same
// before starting) reports every problem of a file: unknown fields and unreadable values
// with their lines, the values that are out of bounds with the reason, and the table
// settings run cannot apply, each on its own line under a count.
func TestValidateReportsEverything(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`kafka:
  brokerz: [k1:9092]
  group_id: g
  topics: [sqlserver.sales.dbo.orders]
schema_registry: {url: "http://sr:8081"}
tables:
  defaults: {key_columns: [id]}
batch:
  max_records: 9e18
  max_bytes: -5MiB
  max_age: 2000000h
metrics: {listen: "0.0.0.0:99999"}
`), 0o600))
	want := []string{
		"kafka.brokerz: line 2: unknown field; accepted: brokers, client_id,",
		`batch.max_bytes: line 10: "-5MiB" is negative`,
		"kafka.brokers: must list at least one host:port",
		"batch.max_records: 9000000000000000000 is above 1000000: a batch is held in memory until it commits",
		"batch.max_age: 2000000h0m0s is above 1h0m0s: a batch that does not fill commits when it is this old, and Delta readers see none of its changes until then",
		`metrics.listen: "0.0.0.0:99999": port 99999 is not a number from 1 to 65535`,
		"tables.defaults.key_columns: used only by tables whose null_key is columns",
	}
	for _, cmd := range []string{"validate", "run"} {
		r := exe(t, cmd, "--config", cfg)
		require.Equal(t, exitUsage, r.code, "%s: %s", cmd, r.stderr)
		require.Contains(t, r.stderr, "cdc2delta "+cmd+": "+cfg+": 7 problems:\n")
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		require.Len(t, lines, 1+len(want), r.stderr)
		for i, w := range want {
			require.True(t, strings.HasPrefix(lines[i+1], "  "+w), "%s: line %d is %q, want %q", cmd, i+1, lines[i+1], w)
		}
	}

	// Invalid YAML stops the reading: it is reported alone, at the line of the cause.
	require.NoError(t, os.WriteFile(cfg, []byte("kafka:\n  brokers: [k1:9092, k2:9092\n  group_id: g\n"), 0o600))
	r := exe(t, "validate", "--config", cfg)
	require.Equal(t, exitUsage, r.code)
	require.Equal(t, "cdc2delta validate: "+cfg+": line 2: the [ opened on this line is never closed "+
		"(did not find expected ',' or ']'); this is invalid YAML, so nothing else can be checked until it is fixed\n", r.stderr)

	// The override flags take part: --brokers fixes what the file lacks.
	require.NoError(t, os.WriteFile(cfg, []byte("kafka: {group_id: g, topics: [t]}\nschema_registry: {url: 'http://sr'}\n"), 0o600))
	r = exe(t, "validate", "--config", cfg, "--brokers", "k1:9092", "--metrics-listen", ":99999")
	require.Equal(t, exitUsage, r.code)
	require.Equal(t, "cdc2delta validate: "+cfg+`: metrics.listen: ":99999": port 99999 is not a number from 1 to 65535 (empty disables the listener)`+"\n", r.stderr)
}

// TestRunMetricsPortInUse: `run` whose metrics port is taken (another instance, the
// compose stack's container) says so and how to choose another.
func TestRunMetricsPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `
kafka: {brokers: [%q], group_id: g, topics: [shop.sales.dbo.orders]}
schema_registry: {url: "http://127.0.0.1:1"}
tables: {path: %q}
metrics: {listen: %q}
`, closedPort(t), filepath.Join(dir, "{table}"), ln.Addr().String()), 0o600))
	r := exe(t, "run", "--config", cfg)
	require.Equal(t, exitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "cdc2delta run: metrics listener: "+ln.Addr().String()+" is in use (another cdc2delta, "+
		"or the compose stack's container on 9464?): set metrics.listen or --metrics-listen to a free port, or to \"\" for none\n")
}
