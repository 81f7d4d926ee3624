package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/operator"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// runFixture is a Kafka cluster (kfake unless fixtureOptions.brokers names a real
// one), an in-process registry, a generated orders workload and a config file for
// `cdc2delta run` against them.
type runFixture struct {
	t      *testing.T
	prod   *kgo.Client
	gen    *dbzgen.Generator
	work   *dbzgen.Workload
	orders *dbzgen.Table
	cfg    string
	dir    string // the orders table
	json   bool
	// bare strips records to their payload (schemas.enable=false).
	bare bool
}

type fixtureOptions struct {
	partitions int32
	// brokers is a real cluster's plaintext listener (producing and creating
	// topics); nil starts a kfake cluster.
	brokers []string
	// prefix is Debezium's topic.prefix: unique per test on a shared broker.
	prefix string
	// kafka is the config's kafka block; %s is replaced by the orders topic.
	// Empty: plaintext brokers, group restore-run.
	kafka string
	// json produces JsonConverter records and configures
	// decoding.converter: json without a registry.
	json bool
	// declared produces them with schemas.enable=false and declares the
	// orders topic's columns in decoding.declared.
	declared bool
}

func newRunFixture(t *testing.T, o fixtureOptions) *runFixture {
	t.Helper()
	gen, regURL := newTestGenerator(t, o.prefix)
	f := &runFixture{t: t, gen: gen, json: o.json || o.declared, bare: o.declared}
	var err error
	f.orders, err = f.gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	brokers := o.brokers
	if brokers == nil {
		f.prod, brokers = newFakeKafka(t, o.partitions, f.orders.Topic())
	} else {
		f.prod, err = kgo.NewClient(kgo.SeedBrokers(brokers...))
		require.NoError(t, err)
		t.Cleanup(f.prod.Close)
		_, err := kadm.NewClient(f.prod).CreateTopic(t.Context(), o.partitions, 1, nil, f.orders.Topic())
		require.NoError(t, err)
	}
	f.work, err = dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 11, Keys: 40, Snapshot: true}, f.orders)
	require.NoError(t, err)

	kafka := fmt.Sprintf(`{brokers: ["%s"], group_id: restore-run, topics: ["%s"]}`, brokers[0], f.orders.Topic())
	if o.kafka != "" {
		kafka = fmt.Sprintf(o.kafka, f.orders.Topic())
	}
	root := t.TempDir()
	f.cfg = filepath.Join(root, "cdc2delta.yaml")
	source := fmt.Sprintf(`schema_registry: {url: "%s"}`, regURL)
	if o.json {
		source = "decoding: {converter: json}"
	}
	if o.declared {
		source = fmt.Sprintf("decoding: {converter: json, declared: [%s]}", declaredOrders(t, f))
	}
	require.NoError(t, os.WriteFile(f.cfg, fmt.Appendf(nil, `
kafka: %s
%s
tables: {path: "%s/{database}/{schema}/{table}"}
batch: {max_records: 50, max_age: 50ms, min_records: 1}
metrics: {listen: ""}
log: {level: warn}
`, kafka, source, filepath.ToSlash(root)), 0o600))
	router, err := route.NewRouter(filepath.ToSlash(root) + "/{database}/{schema}/{table}")
	require.NoError(t, err)
	f.dir, err = router.Route(f.orders.Topic())
	require.NoError(t, err)
	return f
}

// produce sends the workload's next n events and returns how many carried a value
// (Kafka tombstones reach no table).
func (f *runFixture) produce(n int) int {
	f.t.Helper()
	var recs []*kgo.Record
	values := 0
	for range n {
		ev := f.work.Next()
		key, value, err := f.gen.Encode(f.t.Context(), ev)
		if f.json {
			key, value, err = f.gen.EncodeJSON(ev, dbzgen.DecimalNumeric)
		}
		if f.bare {
			key, value = payloadOf(f.t, key), payloadOf(f.t, value)
		}
		require.NoError(f.t, err)
		if value != nil {
			values++
		}
		recs = append(recs, &kgo.Record{Topic: ev.Table.Topic(), Key: key, Value: value})
	}
	require.NoError(f.t, f.prod.ProduceSync(f.t.Context(), recs...).FirstErr())
	return values
}

func (f *runFixture) table() *deltalog.Table {
	f.t.Helper()
	st, err := localstore.New(localstore.Options{Dir: f.dir})
	require.NoError(f.t, err)
	tbl, err := deltalog.Open(f.t.Context(), st)
	require.NoError(f.t, err)
	return tbl
}

// runUntilCaughtUp runs `cdc2delta run` until every partition's txn reaches the
// partition's last offset, then stops it with a cancel (SIGTERM), checks exit 0 and
// returns what it wrote.
func (f *runFixture) runUntilCaughtUp() string {
	t := f.t
	ends := map[int32]int64{}
	for p, off := range f.highWatermarks() {
		ends[p] = off - 1
	}
	r := f.start()
	defer r.cancel()
	ended, code := false, 0
	caughtUp := poll(60*time.Second, 50*time.Millisecond, func() bool {
		select {
		case code = <-r.done:
			ended = true
			return true
		default:
		}
		return f.caughtUp(ends)
	})
	if ended {
		t.Fatalf("run ended early with %d: %s", code, r.log.String())
	}
	if !caughtUp {
		t.Fatalf("not caught up to %v; log:\n%s", ends, r.log.String())
	}
	return r.stop()
}

// runUntilLogged runs `cdc2delta run` until its log says want, then stops it with a
// cancel (SIGTERM), checks exit 0 and returns what it wrote.
func (f *runFixture) runUntilLogged(want string) string {
	f.t.Helper()
	r := f.start()
	defer r.cancel()
	require.Eventually(f.t, func() bool { return strings.Contains(r.log.String(), want) }, 60*time.Second, 50*time.Millisecond,
		"the log does not say %q", want)
	return r.stop()
}

// inProcessRun is `cdc2delta run` on the fixture's config, in this process.
type inProcessRun struct {
	t      *testing.T
	log    syncBuffer
	done   chan int // the exit code
	cancel context.CancelFunc
}

// start runs `cdc2delta run` in the background; stop ends it.
func (f *runFixture) start() *inProcessRun {
	ctx, cancel := context.WithCancel(f.t.Context())
	r := &inProcessRun{t: f.t, done: make(chan int, 1), cancel: cancel}
	go func() {
		r.done <- runEnv(ctx, []string{"cdc2delta", "run", "--config", f.cfg}, &env{stdout: &r.log, stderr: &r.log,
			lookup: func(string) (string, bool) { return "", false }})
	}()
	return r
}

// stop cancels the run (SIGTERM), checks that it exits 0 and returns what it wrote.
func (r *inProcessRun) stop() string {
	r.t.Helper()
	r.cancel()
	select {
	case code := <-r.done:
		require.Equal(r.t, exitOK, code, r.log.String())
	case <-time.After(30 * time.Second):
		r.t.Fatalf("run did not stop; log:\n%s", r.log.String())
	}
	return r.log.String()
}

func (f *runFixture) highWatermarks() map[int32]int64 {
	f.t.Helper()
	out := map[int32]int64{}
	r := cli(f.t, "offsets", "--config", f.cfg, "--json")
	require.Equal(f.t, exitOK, r.code, r.stderr)
	var rows []operator.PartitionLag
	require.NoError(f.t, json.Unmarshal([]byte(r.stdout), &rows))
	for _, row := range rows {
		out[row.Partition] = row.HighWatermark
	}
	return out
}

func (f *runFixture) caughtUp(ends map[int32]int64) bool {
	snap, err := f.table().Snapshot(f.t.Context())
	if err != nil {
		return false
	}
	for p, last := range ends {
		v, ok := snap.TxnVersion(cdctable.TopicPartition{Topic: f.orders.Topic(), Partition: p}.AppID())
		if last >= 0 && (!ok || v < last) {
			return false
		}
	}
	return true
}

// rows prints the table's rows as sorted CSV lines.
func (f *runFixture) rows(args ...string) []string {
	f.t.Helper()
	r := cli(f.t, append(append([]string{"show", "--format", "csv", "--limit", "0"}, args...), f.dir)...)
	require.Equal(f.t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	slices.Sort(lines)
	return lines
}

// newTestGenerator starts an in-process schema registry and returns a
// Debezium event generator registering its schemas there (topic prefix
// prefix, or the default when empty) and the registry's URL.
func newTestGenerator(t *testing.T, prefix string) (*dbzgen.Generator, string) {
	t.Helper()
	reg, err := registry.New()
	require.NoError(t, err)
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(srv.Close)
	src, err := sr.NewClient(sr.URLs(srv.URL))
	require.NoError(t, err)
	gopts := dbzgen.DefaultOptions()
	if prefix != "" {
		gopts.Prefix = prefix
	}
	return dbzgen.New(src, gopts), srv.URL
}

// newFakeKafka starts a one-broker kfake cluster holding topics and returns
// a producer to it and its listen addresses.
func newFakeKafka(t *testing.T, partitions int32, topics ...string) (*kgo.Client, []string) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	prod, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	require.NoError(t, err)
	t.Cleanup(prod.Close)
	return prod, cluster.ListenAddrs()
}

// payloadOf strips a JsonConverter record to what schemas.enable=false writes.
func payloadOf(t *testing.T, b []byte) []byte {
	if b == nil {
		return nil
	}
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	return m["payload"]
}

// declaredOrders is the orders topic's decoding.declared entry, read from
// the Connect schema the JsonConverter would write, as a JSON flow mapping.
func declaredOrders(t *testing.T, f *runFixture) string {
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 1, Keys: 1, Snapshot: true}, f.orders)
	require.NoError(t, err)
	key, value, err := f.gen.EncodeJSON(w.Next(), dbzgen.DecimalNumeric) // a snapshot read
	require.NoError(t, err)
	var msg struct {
		Schema struct {
			Fields []struct {
				Fields []struct {
					Field, Type, Name string
					Optional          bool
					Parameters        map[string]string
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal(value, &msg))
	type column struct {
		Name      string `json:"name"`
		Type      string `json:"type"`
		Logical   string `json:"logical,omitempty"`
		Scale     int    `json:"scale,omitempty"`
		Precision int    `json:"precision,omitempty"`
		Optional  bool   `json:"optional"`
	}
	decl := struct {
		Topic   string   `json:"topic"`
		Key     []string `json:"key"`
		Columns []column `json:"columns"`
	}{Topic: f.orders.Topic()}
	for _, c := range msg.Schema.Fields[1].Fields {
		col := column{Name: c.Field, Type: c.Type, Logical: c.Name, Optional: c.Optional}
		col.Scale, _ = strconv.Atoi(c.Parameters["scale"])
		col.Precision, _ = strconv.Atoi(c.Parameters["connect.decimal.precision"])
		decl.Columns = append(decl.Columns, col)
	}
	var k struct{ Payload map[string]any }
	require.NoError(t, json.Unmarshal(key, &k))
	for name := range k.Payload {
		decl.Key = append(decl.Key, name)
	}
	out, err := json.Marshal(decl)
	require.NoError(t, err)
	return string(out)
}
