package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
	"github.com/cdc2delta/cdc2delta/processor/operator"
	"github.com/cdc2delta/cdc2delta/processor/route"
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
	gen, regURL := newTestGenerator(t, "")
	var tables []*dbzgen.Table
	var topics []string
	for _, def := range []dbzgen.TableDef{dbzgen.Customers(), dbzgen.Orders()} {
		tb, err := gen.Table(def)
		require.NoError(t, err)
		tables, topics = append(tables, tb), append(topics, tb.Topic())
	}
	prod, brokers := newFakeKafka(t, 2, topics...)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 7, Keys: 30, Snapshot: true}, tables...)
	require.NoError(t, err)
	// produce sends the workload's next n events and returns the end offsets.
	produce := func(n int) kadm.ListedOffsets {
		var recs []*kgo.Record
		for range n {
			ev := w.Next()
			key, value, err := gen.Encode(ctx, ev)
			require.NoError(t, err)
			recs = append(recs, &kgo.Record{Topic: ev.Table.Topic(), Key: key, Value: value})
		}
		require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr())
		ends, err := kadm.NewClient(prod).ListEndOffsets(ctx, topics...)
		require.NoError(t, err)
		return ends
	}
	ends := produce(150)

	root := t.TempDir()
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: ["${TEST_BROKER}"]
  group_id: e2e
  topic_regex: '^%s\..*'
schema_registry: {url: "%s"}
tables:
  path: "%s/{database}/{schema}/{table}"
  overrides:
    - {name: DBO.Customers, delete_mode: soft}
    - {topic: "%s", merge_mode: cow, tombstone_retention: 24h}
batch: {max_age: 50ms, min_records: 1}
maintenance: {tail_file_size: 0} # every update leaves a vector (auto) or a rewrite (cow) to see
metrics: {listen: ""}
log: {level: warn}
`, topics[0][:len(topics[0])-len(".dbo.Customers")], regURL, filepath.ToSlash(root), topics[1]), 0o600))

	router, err := route.NewRouter(filepath.ToSlash(root) + "/{database}/{schema}/{table}")
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
				return brokers[0], true
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
				v, ok := snap.TxnVersion(cdctable.TopicPartition{Topic: o.Topic, Partition: o.Partition}.AppID())
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
	ends = produce(150) // a second commit, updating and deleting committed rows
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
		lookup: func(k string) (string, bool) { return brokers[0], k == "TEST_BROKER" }})
	require.Equal(t, exitOK, code, stderr.String())
	var rows []operator.PartitionLag
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
		lookup: func(k string) (string, bool) { return brokers[0], k == "TEST_BROKER" }})
	require.Equal(t, exitOK, code, stderr.String())
	require.Contains(t, out.String(), topics[0]+"[0] -> 0")
	var replayLog syncBuffer
	runCtx2, cancel2 := context.WithCancel(ctx)
	go func() {
		done <- runEnv(runCtx2, []string{"cdc2delta", "run", "--config", cfgPath, "--log-level", "info"}, &env{stdout: &replayLog, stderr: &replayLog,
			lookup: func(k string) (string, bool) { return brokers[0], k == "TEST_BROKER" }})
	}()
	if !assert.Eventually(t, func() bool {
		return strings.Count(replayLog.String(), "operator offset reset (replay)") == 4
	}, 30*time.Second, 100*time.Millisecond) {
		t.Fatalf("no replay; log:\n%s", replayLog.String())
	}
	// Before asserting the tables unchanged, show that the replay re-read everything:
	// the group's offsets are back at the ends.
	adm := kadm.NewClient(prod)
	require.Eventually(t, func() bool {
		got, err := adm.FetchOffsets(ctx, "e2e")
		if err != nil {
			return false
		}
		back := true
		ends.Each(func(e kadm.ListedOffset) {
			o, ok := got.Lookup(e.Topic, e.Partition)
			back = back && ok && o.At == e.Offset
		})
		return back
	}, 60*time.Second, 50*time.Millisecond, "the replay re-reads every record")
	cancel2()
	require.Equal(t, exitOK, <-done, replayLog.String())
	for _, tb := range tables {
		require.Equal(t, before[tb.Topic()], cli(t, "show", "--format", "csv", "--limit", "0", tableDir(tb)).stdout)
	}

	// The overrides: customers soft-deletes (deleted rows stay, flagged), orders
	// hard-deletes and merges copy-on-write (no deletion vector in its log).
	require.Positive(t, w.Counts().Deletes)
	for _, tb := range tables {
		loc := tableDir(tb)
		r := cli(t, "show", "--format", "jsonl", "--limit", "0", loc)
		require.Equal(t, exitOK, r.code, r.stderr)
		want := len(w.Rows(tb))
		require.NotZero(t, want)
		live, deleted := 0, 0
		for _, row := range jsonLines(t, r.stdout) {
			if row[cdctable.ColDeleted] == true {
				deleted++
			} else {
				live++
			}
		}
		require.Equal(t, want, live, "table %s holds the source's current rows", loc)
		logs, err := filepath.Glob(filepath.Join(filepath.FromSlash(loc), "_delta_log", "*.json"))
		require.NoError(t, err)
		dvs := 0
		for _, l := range logs {
			data, err := os.ReadFile(l)
			require.NoError(t, err)
			dvs += strings.Count(string(data), `"deletionVector":{`)
		}
		if tb == tables[0] {
			require.Positive(t, deleted, "soft delete keeps deleted customers")
			require.Positive(t, dvs, "customers merge with deletion vectors (auto)")
			continue
		}
		require.Zero(t, deleted, "hard delete removes orders")
		require.Zero(t, dvs, "copy-on-write orders: no deletion vector in the log")
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
	require.Len(t, opts.Topics, 3)
	require.Equal(t, 10_000, opts.Batch.Records)
	require.EqualValues(t, 16<<20, opts.Batch.Bytes)
	require.Equal(t, time.Second, opts.Batch.Age)
	require.Equal(t, 100, opts.Batch.MinRecords)
	require.Equal(t, 10*time.Second, opts.Batch.MaxDelay)
	require.InDelta(t, 50, opts.Batch.CommitsPerSecond, 0)
	require.EqualValues(t, 256<<20, opts.MaxBufferedBytes)
	require.EqualValues(t, "fail", opts.BadInput)
	require.Equal(t, "cdc2delta.dlq", opts.DeadLetterTopic)
	require.EqualValues(t, "hard", opts.Sink.DeleteMode)
	require.Equal(t, 168*time.Hour, opts.Sink.TombstoneRetention)
	require.Equal(t, map[string][]string{"sales.dbo.order_lines": {"order_id", "line_no"}}, keyColumns(c),
		"only the keyless table with null_key: columns")

	// Each table gets the defaults patched by its overrides.
	route := func(topic string) processor.TableSettings {
		r, err := route.NewRouter(opts.TablePath)
		require.NoError(t, err)
		src, err := r.Source(topic)
		require.NoError(t, err)
		return opts.PerTable(src)
	}
	customers := route("sqlserver.sales.dbo.customers")
	require.EqualValues(t, "dead-letter", customers.BadInput)
	require.EqualValues(t, "hard", customers.Sink.DeleteMode)
	require.Equal(t, 720*time.Hour, customers.Sink.TombstoneRetention)
	require.EqualValues(t, "auto", customers.Sink.Mode)
	require.Equal(t, new(true), customers.Sink.DeletionVectors)
	require.Equal(t, merge.ColumnNamesMapped, customers.Sink.ColumnNames)
	orders := route("sqlserver.sales.dbo.orders")
	require.Equal(t, merge.ColumnNamesPortable, orders.Sink.ColumnNames)
	require.EqualValues(t, "fail", orders.BadInput)
	require.EqualValues(t, "soft", orders.Sink.DeleteMode)
	require.EqualValues(t, "cow", orders.Sink.Mode)
	require.Equal(t, 168*time.Hour, orders.Sink.TombstoneRetention)
}

// TestCheckTableSettings checks what `run` (and `validate`) refuse, and that each
// refusal names the setting and what to do.
func TestCheckTableSettings(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // each must be in the error; none: accepted
	}{
		{"per-table sink settings", `
tables:
  overrides:
    - {name: dbo.a, delete_mode: soft, merge_mode: cow, tombstone_retention: 1h, change_data_feed: true}
    - {name: db.dbo.b, bad_input: dead-letter}
    - {topic: p.db.dbo.c, null_key: columns, key_columns: [id]}`, nil},
		{"defaults key columns with a listed topic", `
tables: {defaults: {null_key: columns, key_columns: [id]}}`, nil},
		{"partition_by", `
tables:
  defaults: {partition_by: [region]}
  overrides: [{name: dbo.a, partition_by: [day]}]`, nil},
		{"key columns without null_key columns", `
tables:
  overrides: [{name: dbo.a, key_columns: [id]}]`,
			[]string{"tables.overrides[0].key_columns", "add null_key: columns"}},
		{"defaults key columns unused", `
tables: {defaults: {key_columns: [id]}}`,
			[]string{"tables.defaults.key_columns", "set null_key: columns"}},
		{"defaults key columns used by an override", `
tables:
  defaults: {key_columns: [id]}
  overrides: [{name: dbo.a, null_key: columns}]`, nil},
		{"null_key columns in defaults with a regex", `
tables: {defaults: {null_key: columns, key_columns: [id]}}`,
			[]string{"tables.defaults.null_key: columns needs kafka.topics", "in an override"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Parse([]byte(`
kafka: {brokers: [k:9092], group_id: g, topics: [p.db.dbo.a], dlq_topic: dlq}
schema_registry: {url: "http://r:8081"}
`+tc.yaml), func(string) (string, bool) { return "", false })
			require.NoError(t, err)
			if strings.Contains(tc.name, "regex") {
				c.Kafka.Topics, c.Kafka.TopicRegex = nil, `^p\.`
			}
			require.NoError(t, c.Validate())
			err = checkTableSettings(c)
			if tc.want == nil {
				require.NoError(t, err)
				_, err = processorOptions(c, nil)
				require.NoError(t, err)
				return
			}
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			_, err = processorOptions(c, nil)
			require.Error(t, err, "run refuses what validate refuses")
		})
	}
}

// TestKeyColumns checks which tables get key columns in the decoder, and under which
// names: every listed topic resolved, or with a regex the names the overrides give.
func TestKeyColumns(t *testing.T) {
	tables := `
tables:
  defaults: {key_columns: [id]}
  overrides:
    - {name: dbo.a, null_key: columns}
    - {topic: p.db.dbo.b, null_key: columns, key_columns: [k1, k2]}
    - {name: db.dbo.c, key_columns: [x]}
    - {name: DB.DBO.C, null_key: columns}
    - {name: dbo.d, bad_input: fail}
`
	tests := []struct {
		name  string
		regex bool
		want  map[string][]string
	}{
		{"topic list", false, map[string][]string{
			"db.dbo.a": {"id"}, "db.dbo.b": {"k1", "k2"}, "db.dbo.c": {"x"}}},
		{"topic regex", true, map[string][]string{
			"dbo.a": {"id"}, "db.dbo.b": {"k1", "k2"}, "db.dbo.c": {"x"}, "DB.DBO.C": {"x"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Parse([]byte(`
kafka: {brokers: [k:9092], group_id: g, topics: [p.db.dbo.a, p.db.dbo.b, p.db.dbo.c, p.db.dbo.d]}
schema_registry: {url: "http://r:8081"}
`+tables), func(string) (string, bool) { return "", false })
			require.NoError(t, err)
			if tc.regex {
				c.Kafka.Topics, c.Kafka.TopicRegex = nil, `^p\.`
			}
			require.NoError(t, c.Validate())
			require.NoError(t, checkTableSettings(c))
			require.Equal(t, tc.want, keyColumns(c))
		})
	}
}

// TestRunKeylessTables runs `cdc2delta run` over two source tables without a primary
// key: the one whose override sets null_key: columns is keyed by its key_columns (an
// update replaces its row); the other keeps the default null_key: error and stops.
func TestRunKeylessTables(t *testing.T) {
	ctx := t.Context()
	gen, regURL := newTestGenerator(t, "")
	keyless := func(name string) *dbzgen.Table {
		tb, err := gen.Table(dbzgen.TableDef{Database: "sales", Schema: "dbo", Name: name, Columns: []dbzgen.Column{
			{Name: "id", Type: "int"}, {Name: "msg", Type: "nvarchar(100)", Nullable: true}}})
		require.NoError(t, err)
		require.Empty(t, tb.KeySchema())
		return tb
	}
	keyed, unkeyed := keyless("events"), keyless("audit")
	prod, brokers := newFakeKafka(t, 1, keyed.Topic(), unkeyed.Topic())
	var recs []*kgo.Record
	for i, ev := range []dbzgen.Event{
		{Op: dbzgen.OpCreate, After: dbzgen.Row{"id": 1, "msg": "a"}},
		{Op: dbzgen.OpCreate, After: dbzgen.Row{"id": 2, "msg": "b"}},
		{Op: dbzgen.OpUpdate, Before: dbzgen.Row{"id": 1, "msg": "a"}, After: dbzgen.Row{"id": 1, "msg": "a2"}},
	} {
		lsn := dbzgen.MakeLSN(0x100, uint32(i+1), 1)
		ev.Source = dbzgen.Source{Time: time.Now(), CommitLSN: lsn, ChangeLSN: lsn, SerialNo: 1}
		for _, tb := range []*dbzgen.Table{keyed, unkeyed} {
			ev.Table = tb
			key, value, err := gen.Encode(ctx, ev)
			require.NoError(t, err)
			recs = append(recs, &kgo.Record{Topic: tb.Topic(), Key: key, Value: value})
		}
	}
	require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr())

	root := t.TempDir()
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: ["%s"]
  group_id: keyless
  topics: ["%s", "%s"]
schema_registry: {url: "%s"}
tables:
  path: "%s/{table}"
  overrides:
    - {name: dbo.events, null_key: columns, key_columns: [id]}
batch: {max_age: 50ms, min_records: 1}
metrics: {listen: ""}
log: {level: warn}
`, brokers[0], keyed.Topic(), unkeyed.Topic(), regURL, filepath.ToSlash(root)), 0o600))

	runCtx, cancel := context.WithCancel(ctx)
	var log syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runEnv(runCtx, []string{"cdc2delta", "run", "--config", cfgPath}, &env{stdout: &log, stderr: &log,
			lookup: func(string) (string, bool) { return "", false }})
	}()
	events := filepath.ToSlash(filepath.Join(root, "events"))
	applied := func() bool {
		st, err := localstore.New(localstore.Options{Dir: events})
		require.NoError(t, err)
		tbl, err := deltalog.Open(ctx, st)
		require.NoError(t, err)
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			return false
		}
		v, ok := snap.TxnVersion(cdctable.TopicPartition{Topic: keyed.Topic()}.AppID())
		return ok && v == 2
	}
	if !assert.Eventually(t, func() bool { return applied() && strings.Contains(log.String(), "table stopped") }, 60*time.Second, 100*time.Millisecond) {
		t.Fatalf("not applied; log:\n%s", log.String())
	}
	cancel()
	require.Equal(t, exitOK, <-done, log.String())
	require.Contains(t, log.String(), "/audit topic="+unkeyed.Topic())
	require.Contains(t, log.String(), "no key columns are configured")

	r := cli(t, "show", "--format", "jsonl", "--limit", "0", events)
	require.Equal(t, exitOK, r.code, r.stderr)
	msgs := map[any]any{}
	for _, row := range jsonLines(t, r.stdout) {
		msgs[row["id"]] = row["msg"]
	}
	require.Equal(t, map[any]any{1.0: "a2", 2.0: "b"}, msgs, "keyed by id: the update replaced row 1")
}

// TestPartitionByReachesSink checks that partition_by, from the defaults or an
// override, reaches each table's sink options.
func TestPartitionByReachesSink(t *testing.T) {
	c, err := config.Parse([]byte(`
kafka: {brokers: [k:9092], group_id: g, topics: [p.db.dbo.a, p.db.dbo.b]}
schema_registry: {url: "http://r:8081"}
tables:
  defaults: {partition_by: [region]}
  overrides: [{name: dbo.b, partition_by: [day, kind]}]
`), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	opts, err := processorOptions(c, nil)
	require.NoError(t, err)
	for table, want := range map[string][]string{"a": {"region"}, "b": {"day", "kind"}} {
		got := opts.PerTable(route.TableSource{Topic: "p.db.dbo." + table, Database: "db", Schema: "dbo", Table: table})
		require.Equal(t, want, got.Sink.PartitionBy, table)
	}
}

// TestRunJSONConverter runs `cdc2delta run` with decoding.converter: json
// and no registry over JsonConverter records (decimals as numbers), with
// and without schemas (then typed by decoding.declared), and over the same
// workload written as Avro: the tables print the same.
func TestRunJSONConverter(t *testing.T) {
	var printed [][]string
	for _, o := range []fixtureOptions{{partitions: 2}, {partitions: 2, json: true}, {partitions: 2, declared: true}} {
		f := newRunFixture(t, o)
		require.Positive(t, f.produce(150))
		f.runUntilCaughtUp()
		printed = append(printed, f.rows())
	}
	require.Greater(t, len(printed[0]), 10)
	require.Equal(t, printed[0], printed[1], "schemas.enable=true")
	require.Equal(t, printed[0], printed[2], "schemas.enable=false, declared")
}
