//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestRunStopsOnSuspectedRename runs the pipeline on a real broker while the source
// renames qty to quantity: the table stops at the change with both columns named,
// nothing of it applied; after the printed rename under column mapping, a restart
// applies it and the rows keep their qty values under quantity.
func TestRunStopsOnSuspectedRename(t *testing.T) {
	ctx := t.Context()
	brokers := fulltier.KafkaBrokers(t)
	prefix := "rename" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	gen, regURL := newTestGenerator(t, prefix)
	def := func(col string) *dbzgen.Table {
		tb, err := gen.Table(dbzgen.TableDef{Database: "sales", Schema: "dbo", Name: "items", Key: []string{"id"},
			Columns: []dbzgen.Column{{Name: "id", Type: "int"}, {Name: col, Type: "int", Nullable: true}}})
		require.NoError(t, err)
		return tb
	}
	v1, v2 := def("qty"), def("quantity")
	prod, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	t.Cleanup(prod.Close)
	_, err = kadm.NewClient(prod).CreateTopic(ctx, 1, 1, nil, v1.Topic())
	require.NoError(t, err)
	var recs []*kgo.Record
	for i, ev := range []dbzgen.Event{
		{Table: v1, Op: dbzgen.OpCreate, After: dbzgen.Row{"id": 1, "qty": 5}},
		{Table: v1, Op: dbzgen.OpCreate, After: dbzgen.Row{"id": 2, "qty": 6}},
		{Table: v2, Op: dbzgen.OpCreate, After: dbzgen.Row{"id": 3, "quantity": 7}},
		{Table: v2, Op: dbzgen.OpUpdate, Before: dbzgen.Row{"id": 1, "quantity": 5}, After: dbzgen.Row{"id": 1, "quantity": 8}},
	} {
		lsn := dbzgen.MakeLSN(0x100, uint32(i+1), 1)
		ev.Source = dbzgen.Source{Time: time.Now(), CommitLSN: lsn, ChangeLSN: lsn, SerialNo: 1}
		key, value, err := gen.Encode(ctx, ev)
		require.NoError(t, err)
		recs = append(recs, &kgo.Record{Topic: v1.Topic(), Key: key, Value: value})
	}
	// The change sits in its own batch: the first two records are applied first.
	require.NoError(t, prod.ProduceSync(ctx, recs[:2]...).FirstErr())

	root := t.TempDir()
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka: {brokers: [%q], group_id: %q, topics: [%q]}
schema_registry: {url: %q}
tables: {path: %q}
batch: {max_age: 50ms, min_records: 1}
metrics: {listen: ""}
log: {level: warn}
`, brokers[0], prefix, v1.Topic(), regURL, filepath.ToSlash(root)+"/{table}"), 0o600))
	dir := filepath.Join(root, "items")
	rows := func() map[any]map[string]any {
		r := cli(t, "show", "--format", "jsonl", "--limit", "0", dir)
		if r.code != exitOK {
			return nil
		}
		out := map[any]map[string]any{}
		for _, row := range jsonLines(t, r.stdout) {
			out[row["id"]] = row
		}
		return out
	}
	runUntil := func(until func(log string) bool) string {
		t.Helper()
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		var log syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- runEnv(runCtx, []string{"cdc2delta", "run", "--config", cfgPath}, &env{stdout: &log, stderr: &log,
				lookup: func(string) (string, bool) { return "", false }})
		}()
		if !assert.Eventually(t, func() bool { return until(log.String()) }, 60*time.Second, 100*time.Millisecond) {
			cancel()
			<-done
			t.Fatalf("run did not get there; log:\n%s", log.String())
		}
		cancel()
		require.Equal(t, exitOK, <-done, log.String())
		return log.String()
	}

	runUntil(func(string) bool { return len(rows()) == 2 })
	require.NoError(t, prod.ProduceSync(ctx, recs[2:]...).FirstErr())
	log := runUntil(func(log string) bool { return strings.Contains(log, "table stopped") })
	require.Contains(t, log, `column \"qty\" was dropped and column \"quantity\" added in one schema change`)
	require.Contains(t, log, "--rename-column 'qty=quantity'")
	require.Contains(t, log, "cdc2delta.acceptDropAdd=qty->quantity")
	got := rows()
	require.Len(t, got, 2, "nothing of the change was applied")
	require.Equal(t, 5.0, got[1.0]["qty"])

	for _, args := range [][]string{
		{"alter", dir, "--set", "delta.columnMapping.mode=name", "--upgrade-protocol"},
		{"alter", dir, "--rename-column", "qty=quantity"},
	} {
		r := cli(t, args...)
		require.Equal(t, exitOK, r.code, r.stderr)
	}
	runUntil(func(string) bool { r := rows(); return len(r) == 3 && r[1.0]["quantity"] == 8.0 })
	got = rows()
	require.Equal(t, map[string]any{"id": 2.0, "quantity": 6.0}, pick(got[2.0], "id", "quantity"), "row 2 keeps its value under the new name")
	require.Equal(t, map[string]any{"id": 3.0, "quantity": 7.0}, pick(got[3.0], "id", "quantity"))
	require.NotContains(t, got[2.0], "qty")
}

func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}
