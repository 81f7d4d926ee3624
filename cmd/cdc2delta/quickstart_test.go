package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
)

// TestQuickstart runs the quickstart on free ports and checks that its tables hold the
// sample database's current rows, then that a second run on the same folder (persisted
// broker and registry) generates nothing and leaves the tables as they are.
func TestQuickstart(t *testing.T) {
	dir := t.TempDir()
	const events = 800
	args := []string{"quickstart", "--dir", dir, "--events", "800", "--kafka-port", "0", "--registry-port", "0"}
	r := cli(t, args...)
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "generated 800 Debezium change events")
	require.Contains(t, r.stdout, "cdc2delta show --limit 10 ")
	require.Contains(t, r.stdout, "delta_scan(")

	// The same workload, replayed in memory, says what the tables must hold.
	counts := map[string]int{}
	for _, src := range sampleRows(t, events) {
		d := src.def
		loc := filepath.Join(dir, "tables", d.Database, d.Schema, d.Name)
		r := cli(t, "show", "--format", "jsonl", "--limit", "0", loc)
		require.Equal(t, exitOK, r.code, r.stderr)
		counts[loc] = len(jsonLines(t, r.stdout))
		require.Equal(t, len(src.rows), counts[loc], "rows of %s", loc)
	}

	r = cli(t, args...)
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "not generating more")
	require.Contains(t, r.stdout, "applied 800 / 800 events")
	for loc, n := range counts {
		r := cli(t, "show", "--format", "jsonl", "--limit", "0", loc)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), n)
	}
}

// sourceTable is a sample table's definition and its rows as the workload left them.
type sourceTable struct {
	def  dbzgen.TableDef
	rows []dbzgen.Row
}

// sampleRows replays the quickstart's workload (same seed and options) in memory
// and returns each table's rows by "schema.table".
func sampleRows(t *testing.T, events int) map[string]sourceTable {
	t.Helper()
	reg, err := registry.New()
	require.NoError(t, err)
	require.NoError(t, reg.Start(t.Context(), "127.0.0.1:0"))
	t.Cleanup(func() { _ = reg.Close() }) // closing a test registry cannot fail usefully
	src, err := sr.NewClient(sr.URLs(reg.URL()))
	require.NoError(t, err)
	gen := dbzgen.New(src, dbzgen.DefaultOptions())
	var tables []*dbzgen.Table
	for _, def := range dbzgen.SampleDatabase() {
		tb, err := gen.Table(def)
		require.NoError(t, err)
		tables = append(tables, tb)
	}
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 1, Keys: 500, Snapshot: true}, tables...)
	require.NoError(t, err)
	for range events {
		w.Next()
	}
	out := map[string]sourceTable{}
	for _, tb := range tables {
		d := tb.Def()
		out[d.Schema+"."+d.Name] = sourceTable{def: d, rows: w.Rows(tb)}
	}
	return out
}
