package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
	"github.com/cdc2delta/cdc2delta/processor"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a running command.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunEndToEnd runs `cdc2delta run` from a config file against an in-process Kafka
// (kfake) and schema registry fed by the Debezium event generator, then checks the
// tables: every row the source holds, and each partition's txn at its last offset.
func TestRunEndToEnd(t *testing.T) {
	ctx := t.Context()
	reg, err := registry.New()
	require.NoError(t, err)
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(srv.Close)
	src, err := sr.NewClient(sr.URLs(srv.URL))
	require.NoError(t, err)
	gen := dbzgen.New(src, dbzgen.DefaultOptions())
	var tables []*dbzgen.Table
	var topics []string
	for _, def := range []dbzgen.TableDef{dbzgen.Customers(), dbzgen.Orders()} {
		tb, err := gen.Table(def)
		require.NoError(t, err)
		tables, topics = append(tables, tb), append(topics, tb.Topic())
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topics...))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	prod, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	require.NoError(t, err)
	t.Cleanup(prod.Close)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 7, Keys: 30, Snapshot: true}, tables...)
	require.NoError(t, err)
	var recs []*kgo.Record
	for range 300 {
		ev := w.Next()
		key, value, err := gen.Encode(ctx, ev)
		require.NoError(t, err)
		recs = append(recs, &kgo.Record{Topic: ev.Table.Topic(), Key: key, Value: value})
	}
	require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr())
	ends, err := kadm.NewClient(prod).ListEndOffsets(ctx, topics...)
	require.NoError(t, err)

	root := t.TempDir()
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: ["${TEST_BROKER}"]
  group_id: e2e
  topic_regex: '^%s\..*'
schema_registry: {url: "%s"}
tables: {path: "%s/{database}/{schema}/{table}"}
batch: {max_age: 50ms}
metrics: {listen: ""}
log: {level: warn}
`, topics[0][:len(topics[0])-len(".dbo.Customers")], srv.URL, filepath.ToSlash(root)), 0o600))

	router, err := processor.NewRouter(filepath.ToSlash(root) + "/{database}/{schema}/{table}")
	require.NoError(t, err)
	tableDir := func(tb *dbzgen.Table) string {
		p, err := router.Route(tb.Topic())
		require.NoError(t, err)
		return p
	}

	tablesByTopic := map[string]*dbzgen.Table{}
	for _, tb := range tables {
		tablesByTopic[tb.Topic()] = tb
	}

	runCtx, cancel := context.WithCancel(ctx)
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		e := &env{stdout: &stderr, stderr: &stderr, lookup: func(k string) (string, bool) {
			if k == "TEST_BROKER" {
				return cluster.ListenAddrs()[0], true
			}
			return "", false
		}}
		done <- runEnv(runCtx, []string{"cdc2delta", "run", "--config", cfgPath}, e)
	}()

	lastState := "no table yet"
	caughtUp := func() bool {
		select {
		case code := <-done:
			t.Fatalf("run ended early with %d: %s", code, stderr.String())
		default:
		}
		for _, tb := range tables {
			st, err := localstore.New(localstore.Options{Dir: tableDir(tb)})
			require.NoError(t, err)
			tbl, err := deltalog.Open(ctx, st)
			require.NoError(t, err)
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				return false
			}
			for _, o := range ends[tb.Topic()] {
				v, ok := snap.TxnVersion(processor.TopicPartition{Topic: o.Topic, Partition: o.Partition}.AppID())
				if o.Offset > 0 && (!ok || v < o.Offset-1) {
					lastState = fmt.Sprintf("%s-%d: txn %d (%v), end %d, version %d", o.Topic, o.Partition, v, ok, o.Offset, snap.Version())
					return false
				}
			}
		}
		return true
	}
	if !assert.Eventually(t, caughtUp, 60*time.Second, 100*time.Millisecond) {
		t.Fatalf("not caught up: %s; log:\n%s", lastState, stderr.String())
	}
	cancel()
	select {
	case code := <-done:
		require.Equal(t, exitOK, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not stop on cancel; log:\n%s", stderr.String())
	}

	// offsets: every partition caught up in Delta and in the group.
	var out bytes.Buffer
	code := runEnv(ctx, []string{"cdc2delta", "offsets", "--config", cfgPath, "--json"}, &env{stdout: &out, stderr: &stderr,
		lookup: func(k string) (string, bool) { return cluster.ListenAddrs()[0], k == "TEST_BROKER" }})
	require.Equal(t, exitOK, code, stderr.String())
	var rows []offsetRow
	require.NoError(t, json.Unmarshal(out.Bytes(), &rows))
	require.Len(t, rows, 4, "2 topics x 2 partitions")
	for _, r := range rows {
		require.NotNil(t, r.DeltaTxn, "%+v", r)
		require.Equal(t, r.HighWatermark, *r.DeltaTxn+1, "%+v", r)
		require.NotNil(t, r.GroupOffset, "%+v", r)
		require.Equal(t, r.HighWatermark, *r.GroupOffset, "group offset equals txn+1: %+v", r)
		require.Zero(t, r.Lag)
		require.Equal(t, tableDir(tablesByTopic[r.Topic]), r.Table)
	}

	// replay: rewind the (now empty) group to the start; the next run honours it as a
	// replay and, thanks to the txn and position guards, leaves the tables unchanged.
	before := map[string]string{}
	for _, tb := range tables {
		before[tb.Topic()] = cli(t, "show", "--format", "csv", "--limit", "0", tableDir(tb)).stdout
	}
	out.Reset()
	code = runEnv(ctx, []string{"cdc2delta", "replay", "--config", cfgPath, "--to-earliest"}, &env{stdout: &out, stderr: &stderr,
		lookup: func(k string) (string, bool) { return cluster.ListenAddrs()[0], k == "TEST_BROKER" }})
	require.Equal(t, exitOK, code, stderr.String())
	require.Contains(t, out.String(), topics[0]+"[0] -> 0")
	var replayLog syncBuffer
	runCtx2, cancel2 := context.WithCancel(ctx)
	go func() {
		done <- runEnv(runCtx2, []string{"cdc2delta", "run", "--config", cfgPath, "--log-level", "info"}, &env{stdout: &replayLog, stderr: &replayLog,
			lookup: func(k string) (string, bool) { return cluster.ListenAddrs()[0], k == "TEST_BROKER" }})
	}()
	if !assert.Eventually(t, func() bool {
		return strings.Count(replayLog.String(), "operator offset reset (replay)") == 4
	}, 30*time.Second, 100*time.Millisecond) {
		t.Fatalf("no replay; log:\n%s", replayLog.String())
	}
	time.Sleep(2 * time.Second) // let it re-read everything
	cancel2()
	require.Equal(t, exitOK, <-done, replayLog.String())
	for _, tb := range tables {
		require.Equal(t, before[tb.Topic()], cli(t, "show", "--format", "csv", "--limit", "0", tableDir(tb)).stdout)
	}

	for _, tb := range tables {
		loc := tableDir(tb)
		r := cli(t, "show", "--format", "jsonl", "--limit", "0", loc)
		require.Equal(t, exitOK, r.code, r.stderr)
		want := len(w.Rows(tb))
		require.NotZero(t, want)
		require.Len(t, jsonLines(t, r.stdout), want, "table %s holds the source's current rows", loc)
	}
}

// TestProcessorOptions checks the mapping of the example config onto the processor.
func TestProcessorOptions(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "example.yaml"))
	require.NoError(t, err)
	c, err := config.Parse(data, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	opts, err := processorOptions(c, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"localhost:9092"}, opts.Brokers)
	require.Equal(t, "cdc2delta", opts.Group)
	require.False(t, opts.TopicRegex)
	require.Len(t, opts.Topics, 2)
	require.Equal(t, 10_000, opts.Batch.Records)
	require.EqualValues(t, 16<<20, opts.Batch.Bytes)
	require.Equal(t, time.Second, opts.Batch.Age)
	require.EqualValues(t, 256<<20, opts.MaxBufferedBytes)
	require.EqualValues(t, "fail", opts.BadInput)
	require.EqualValues(t, "dead-letter", opts.TablePolicies["./tables/sales/dbo/customers"])
	require.Equal(t, "cdc2delta.dlq", opts.DeadLetterTopic)
	require.EqualValues(t, "hard", opts.Sink.DeleteMode)
	require.Equal(t, 168*time.Hour, opts.Sink.TombstoneRetention)
	require.Equal(t, []string{"order_id", "line_no"}, keyColumns(c.Tables)["dbo.order_lines"])

	c.Tables.Overrides = append(c.Tables.Overrides, config.TableOverride{Name: "dbo.x", DeleteMode: new("soft")})
	_, err = processorOptions(c, nil)
	require.ErrorContains(t, err, "tables.overrides[2].delete_mode")
}
