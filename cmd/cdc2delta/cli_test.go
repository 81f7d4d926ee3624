package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUsageAndHelp(t *testing.T) {
	r := exe(t)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "Commands:")

	r = exe(t, "--help")
	require.Equal(t, exitOK, r.code)
	require.Contains(t, r.stdout, "vacuum")

	r = exe(t, "frobnicate")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, `unknown command "frobnicate"`)

	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, c.name, "--help")
			require.Equal(t, exitOK, r.code, r.stderr)
			require.Contains(t, r.stdout, "Usage: cdc2delta "+c.name)
			require.Contains(t, r.stdout, "Example:\n  cdc2delta "+c.name)
		})
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad flag", []string{"history", "--nope", dir}, "flag provided but not defined: -nope"},
		{"no table", []string{"show"}, "expected one table"},
		{"two tables", []string{"describe", dir, dir}, "expected one table"},
		{"bad format", []string{"show", "--format", "xml", dir}, `--format "xml" is not one of table, csv, jsonl`},
		{"restore needs target", []string{"restore", dir}, "give --version N or --timestamp T"},
		{"bad timestamp", []string{"show", "--timestamp", "yesterday", dir}, `--timestamp "yesterday"`},
		{"bad target size", []string{"optimize", "--target-size", "big", dir}, `--target-size "big"`},
		{"run without config", []string{"run"}, "--config FILE is required"},
		{"bad s3 url", []string{"history", "s3:///nobucket"}, "no bucket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := exe(t, tt.args...)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, tt.want)
		})
	}
}

// TestNotATable: a path that does not exist, a directory without a _delta_log and a
// file are each reported as what they are, by every table command.
func TestNotATable(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope")
	file := filepath.Join(dir, "file.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	for _, cmd := range [][]string{{"history"}, {"describe"}, {"show"}, {"checkpoint"}, {"vacuum"}, {"optimize"}, {"restore", "--version", "0"}} {
		name := cmd[0]
		r := exe(t, append(cmd, dir)...)
		require.Equal(t, exitFailure, r.code, name)
		require.Equal(t, "cdc2delta "+name+": "+dir+" is not a Delta table (no _delta_log)\n", r.stderr)
		r = exe(t, append(cmd, missing)...)
		require.Equal(t, exitFailure, r.code, name)
		require.Equal(t, "cdc2delta "+name+": no table at "+missing+" (the directory does not exist)\n", r.stderr)
		_, err := os.Stat(missing)
		require.ErrorIs(t, err, os.ErrNotExist, "%s created the directory", name)
		r = exe(t, append(cmd, file)...)
		require.Equal(t, exitFailure, r.code, name)
		require.Contains(t, r.stderr, file+" is a file, not a Delta table", name)
	}
}

func TestValidateAndRunConfig(t *testing.T) {
	r := exe(t, "validate", "--config", filepath.Join("..", "..", "config", "example.yaml"))
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "is valid")

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(`
kafka:
  brokers: [k1:9092]
  group_id: g
  topics: [t]
  sasl: {mechanism: PLAIN, username: u, password: hunter2}
schema_registry: {url: "http://sr:8081"}
tables:
  overrides:
    - {name: dbo.orders, delete_mode: purge}
batch: {max_records: 0}
`), 0o600))
	for _, cmd := range []string{"validate", "run"} {
		r := exe(t, cmd, "--config", bad)
		require.Equal(t, exitUsage, r.code, cmd)
		require.Contains(t, r.stderr, `tables.overrides[0].delete_mode: "purge" is not one of hard, soft`)
		require.Contains(t, r.stderr, "batch.max_records: must be positive, got 0")
		require.NotContains(t, r.stderr, "hunter2")
	}

	// Flags override the file: a file without brokers validates with --brokers.
	partial := filepath.Join(t.TempDir(), "partial.yaml")
	require.NoError(t, os.WriteFile(partial, []byte("kafka: {group_id: g, topics: [t]}\nschema_registry: {url: 'http://sr'}\n"), 0o600))
	r = cli(t, "validate", "--config", partial)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "kafka.brokers: must list at least one host:port")
	r = cli(t, "validate", "--config", partial, "--brokers", "k1:9092,k2:9092")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = cli(t, "validate", "--config", partial, "--brokers", "k1")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, `kafka.brokers[0]: "k1" is not host:port`)
}
