package processor

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// pipeline is an in-process Kafka (kfake), schema registry and Debezium
// event generator feeding processors that write Delta tables to a temp dir.
type pipeline struct {
	t        testing.TB
	brokers  []string
	regURL   string
	gen      *dbzgen.Generator
	tables   []*dbzgen.Table
	w        *dbzgen.Workload
	root     string
	producer *kgo.Client
	adm      *kadm.Client
	dlq      string
	regDown  *atomic.Bool
	// stalls hold partitions back at the processor when a test asks.
	stalls *stalls
	// mem, when set, holds the tables in memory by path instead of under
	// root.
	mem   map[string]memTable
	memMu sync.Mutex
	// json writes and reads records as Kafka's JsonConverter does
	// (schemas.enable=true) instead of Avro.
	json bool
}

const testPartitions = 3

func newPipeline(t testing.TB, wo dbzgen.WorkloadOptions) *pipeline {
	t.Helper()
	return newPipelineOn(t, wo, nil, "shop")
}

// newPipelineOn uses the given brokers (nil: an in-process kfake cluster),
// creating the topics, named with prefix, if they do not exist.
func newPipelineOn(t testing.TB, wo dbzgen.WorkloadOptions, brokers []string, prefix string) *pipeline {
	t.Helper()
	return newPipelineOf(t, wo, brokers, prefix, dbzgen.Customers(), dbzgen.Orders())
}

// newPipelineOf is newPipelineOn for the given source tables.
func newPipelineOf(t testing.TB, wo dbzgen.WorkloadOptions, brokers []string, prefix string, defs ...dbzgen.TableDef) *pipeline {
	t.Helper()
	reg, err := registry.New()
	require.NoError(t, err)
	down := new(atomic.Bool)
	st := &stalls{reg: reg, ids: map[[2]int]int{}, refused: map[int]int32{}}
	h := reg.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() || st.refuses(r.URL.Path) {
			http.Error(w, "registry down (test)", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	src, err := sr.NewClient(sr.URLs(srv.URL))
	require.NoError(t, err)
	gopts := dbzgen.DefaultOptions()
	gopts.Prefix = prefix
	gen := dbzgen.New(src, gopts)
	var tables []*dbzgen.Table
	var topics []string
	for _, def := range defs {
		tb, err := gen.Table(def)
		require.NoError(t, err)
		tables = append(tables, tb)
		topics = append(topics, tb.Topic())
	}
	dlq := prefix + ".cdc2delta.dlq"
	topics = append(topics, dlq)
	if brokers == nil {
		cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(testPartitions, topics...))
		require.NoError(t, err)
		t.Cleanup(cluster.Close)
		brokers = cluster.ListenAddrs()
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	t.Cleanup(prod.Close)
	if _, err := kadm.NewClient(prod).CreateTopics(t.Context(), testPartitions, 1, nil, topics...); err != nil {
		require.NoError(t, err)
	}
	w, err := dbzgen.NewWorkload(wo, tables...)
	require.NoError(t, err)
	return &pipeline{t: t, brokers: brokers, regURL: srv.URL, gen: gen, tables: tables, w: w,
		root: t.TempDir(), producer: prod, adm: kadm.NewClient(prod), dlq: dlq, regDown: down, stalls: st}
}

func (pl *pipeline) topics() []string {
	var out []string
	for _, tb := range pl.tables {
		out = append(out, tb.Topic())
	}
	return out
}

// produce encodes the workload's next n events and produces them keyed, so
// each key stays in one partition and in order.
func (pl *pipeline) produce(n int) {
	pl.t.Helper()
	ctx := pl.t.Context()
	recs := make([]*kgo.Record, 0, n)
	for range n {
		ev := pl.w.Next()
		key, value, err := pl.gen.Encode(ctx, ev)
		if pl.json {
			key, value, err = pl.gen.EncodeJSON(ev, dbzgen.DecimalBase64)
		}
		require.NoError(pl.t, err)
		r := &kgo.Record{Topic: pl.gen.Topic(ev), Key: key, Value: value}
		hs, err := pl.gen.Headers(ev)
		require.NoError(pl.t, err)
		for _, h := range hs {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		pl.stalls.mark(pl.t, ev, r)
		recs = append(recs, r)
	}
	require.NoError(pl.t, pl.producer.ProduceSync(ctx, recs...).FirstErr())
}

// produceRaw produces one record with the given bytes.
func (pl *pipeline) produceRaw(topic string, part int32, key, value []byte) {
	pl.t.Helper()
	r := &kgo.Record{Topic: topic, Key: key, Value: value}
	cl, err := kgo.NewClient(kgo.SeedBrokers(pl.brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(pl.t, err)
	defer cl.Close()
	r.Partition = part
	require.NoError(pl.t, cl.ProduceSync(pl.t.Context(), r).FirstErr())
}

func (pl *pipeline) options(group string) Options {
	regc, err := codecs.NewRegistry(codecs.RegistryOptions{URLs: []string{pl.regURL}, MaxAttempts: 1})
	require.NoError(pl.t, err)
	dec, err := codecs.NewDecoder(regc, codecs.Options{})
	if pl.json {
		dec, err = codecs.NewDecoder(nil, codecs.Options{Converter: codecs.ConverterJSON})
	}
	require.NoError(pl.t, err)
	return Options{
		Brokers: pl.brokers,
		Group:   group,
		Topics:  pl.topics(),
		OpenStore: func(_ context.Context, path string) (deltalog.Store, error) {
			if pl.mem != nil {
				return pl.memStore(path), nil
			}
			return localstore.New(localstore.Options{Dir: filepath.Join(pl.root, path), NoSync: true})
		},
		Decoder: dec,
		// MinRecords 1 and MaxDelay = Age: every batch commits at Age, where
		// the defaults (100 records, up to 10 s) would hold a test's trickle
		// for seconds.
		Batch:            BatchLimits{Records: 150, Age: 30 * time.Millisecond, MinRecords: 1, MaxDelay: 30 * time.Millisecond},
		Maintenance:      DefaultMaintenance(), // what users run; its zero TailFileSize is off
		RecommitInterval: 200 * time.Millisecond,
		RetryMin:         20 * time.Millisecond,
		RetryMax:         500 * time.Millisecond,
		DeadLetterTopic:  pl.dlq,
		ClientOptions: []kgo.Opt{
			kgo.FetchMaxWait(50 * time.Millisecond),
			kgo.HeartbeatInterval(100 * time.Millisecond),
		},
	}
}

// running is a processor running in the background.
type running struct {
	p    *Processor
	reg  *prometheus.Registry
	stop context.CancelFunc
	done chan error
}

func (pl *pipeline) start(opts Options) *running {
	pl.t.Helper()
	reg := prometheus.NewRegistry()
	p, err := New(opts, WithLogger(testLogger()), WithRegisterer(reg))
	require.NoError(pl.t, err)
	ctx, cancel := context.WithCancel(context.WithoutCancel(pl.t.Context()))
	r := &running{p: p, reg: reg, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- p.Run(ctx) }()
	pl.t.Cleanup(func() { r.close(pl.t) })
	return r
}

// close stops Run, waits for it and closes the processor; idempotent.
func (r *running) close(t testing.TB) {
	r.stop()
	if r.done != nil {
		require.NoError(t, <-r.done)
		r.done = nil
	}
	require.NoError(t, r.p.Close())
}

func testLogger() *slog.Logger {
	level := slog.LevelError
	if os.Getenv("CDC2DELTA_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// endOffsets returns each partition's end offset (next offset to be written).
func (pl *pipeline) endOffsets(topics ...string) map[cdctable.TopicPartition]int64 {
	pl.t.Helper()
	ends, err := pl.adm.ListEndOffsets(pl.t.Context(), topics...)
	require.NoError(pl.t, err)
	out := map[cdctable.TopicPartition]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		out[cdctable.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.Offset
	})
	return out
}

// tablePath is the default route of a generator table.
func tablePath(tb *dbzgen.Table) string {
	d := tb.Def()
	return filepath.Join(d.Database, d.Schema, d.Name)
}

// memTable is a table held in memory. The pipeline reaches it through
// faults, where a test injects failures; durable is what a restarted
// process would find.
type memTable struct {
	faults  *faultstore.Store
	durable *memstore.Store
}

func newMemTable(durable *memstore.Store) memTable {
	return memTable{faults: faultstore.Wrap(durable), durable: durable}
}

// memStore returns the store of a table path held in memory, creating it
// once.
func (pl *pipeline) memStore(path string) *faultstore.Store {
	pl.memMu.Lock()
	defer pl.memMu.Unlock()
	if _, ok := pl.mem[path]; !ok {
		pl.mem[path] = newMemTable(memstore.New(memstore.Options{}))
	}
	return pl.mem[path].faults
}

func (pl *pipeline) store(tb *dbzgen.Table) deltalog.Store {
	if pl.mem != nil {
		return pl.memStore(tablePath(tb))
	}
	s, err := localstore.New(localstore.Options{Dir: filepath.Join(pl.root, tablePath(tb)), NoSync: true})
	require.NoError(pl.t, err)
	return s
}

// txns returns the table's txn versions per partition.
func (pl *pipeline) txns(tb *dbzgen.Table) map[cdctable.TopicPartition]int64 {
	tbl, err := deltalog.Open(pl.t.Context(), pl.store(tb))
	require.NoError(pl.t, err)
	snap, err := tbl.Snapshot(pl.t.Context())
	if err != nil {
		return nil
	}
	out := map[cdctable.TopicPartition]int64{}
	for p := range int32(testPartitions) {
		tp := cdctable.TopicPartition{Topic: tb.Topic(), Partition: p}
		if v, ok := snap.TxnVersion(tp.AppID()); ok {
			out[tp] = v
		}
	}
	return out
}

// caughtUp reports whether every table's txn equals its partitions' last
// offsets.
func (pl *pipeline) caughtUp() bool {
	for _, tb := range pl.tables {
		ends := pl.endOffsets(tb.Topic())
		txns := pl.txns(tb)
		for tp, end := range ends {
			if end == 0 {
				continue
			}
			if v, ok := txns[tp]; !ok || v != end-1 {
				return false
			}
		}
	}
	return true
}

func (pl *pipeline) waitCaughtUp() {
	pl.t.Helper()
	require.Eventually(pl.t, pl.caughtUp, 60*time.Second, 50*time.Millisecond, "tables did not catch up")
}

// compareCols are the columns compared between the table and the workload
// model: keys and text/bit columns, whose values need no conversion.
var compareCols = map[string][]string{
	"customers": {"customer_id", "name", "email", "is_active"},
	"orders":    {"order_id", "customer_id", "status", "flag"},
}

// tableRows reads the table's live rows with deltalog and datafile and
// renders the compared columns, in key order.
func (pl *pipeline) tableRows(tb *dbzgen.Table) []string {
	pl.t.Helper()
	rows, _ := pl.tableRowsSplit(tb)
	return rows
}

// tableRowsSplit is tableRows, with the rows flagged _cdc_deleted (soft
// deletes) returned apart.
func (pl *pipeline) tableRowsSplit(tb *dbzgen.Table) (live, deleted []string) {
	pl.t.Helper()
	ctx := pl.t.Context()
	store := pl.store(tb)
	tbl, err := deltalog.Open(ctx, store)
	require.NoError(pl.t, err)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(pl.t, err)
	column := func(name string) int {
		return slices.IndexFunc(snap.Schema().Fields, func(f deltalog.StructField) bool { return f.Name == name })
	}
	cols := compareCols[tb.Def().Name]
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = column(c)
		require.GreaterOrEqual(pl.t, idx[i], 0, "column %s", c)
	}
	del := column(cdctable.ColDeleted)
	for _, add := range snap.Files() {
		rows, err := datafile.Read(ctx, store, &add, snap.Schema(), datafile.ReadOptions{Properties: snap.Metadata().Configuration})
		require.NoError(pl.t, err)
		for _, r := range rows {
			vals := make([]any, len(idx))
			for i, j := range idx {
				vals[i] = r[j]
			}
			if del >= 0 && r[del] == true {
				deleted = append(deleted, render(vals))
				continue
			}
			live = append(live, render(vals))
		}
	}
	slices.Sort(live)
	slices.Sort(deleted)
	return live, deleted
}

// modelRows renders the workload model's rows like tableRows.
func (pl *pipeline) modelRows(tb *dbzgen.Table) []string {
	cols := compareCols[tb.Def().Name]
	var out []string
	for _, row := range pl.w.Rows(tb) {
		vals := make([]any, len(cols))
		for i, c := range cols {
			vals[i] = row[c]
		}
		out = append(out, render(vals))
	}
	slices.Sort(out)
	return out
}

func render(vals []any) string {
	s := ""
	for _, v := range vals {
		if v == nil {
			s += "<nil>|"
			continue
		}
		s += fmt.Sprintf("%v|", v)
	}
	return s
}

// requireModel checks every table equals the workload model, no key twice.
func (pl *pipeline) requireModel() {
	pl.t.Helper()
	for _, tb := range pl.tables {
		got, want := pl.tableRows(tb), pl.modelRows(tb)
		require.NotEmpty(pl.t, want)
		require.Equal(pl.t, want, got, "table %s", tb.Def().Name)
	}
}

// requireGroupOffsets checks the group's committed offsets equal txn+1.
func (pl *pipeline) requireGroupOffsets(group string) {
	pl.t.Helper()
	require.Eventually(pl.t, func() bool {
		resp, err := pl.adm.FetchOffsets(pl.t.Context(), group)
		if err != nil {
			return false
		}
		for _, tb := range pl.tables {
			for tp, v := range pl.txns(tb) {
				o, ok := resp.Lookup(tp.Topic, tp.Partition)
				if !ok || o.At != v+1 || !cdctable.IsGroupMeta(o.Metadata) {
					return false
				}
			}
		}
		return true
	}, 10*time.Second, 50*time.Millisecond, "group offsets are not txn+1")
}

// metricSum sums every series of a metric family in reg.
func metricSum(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	return metricWith(t, reg, name, "", "")
}

// metricWith sums the series of a metric family whose label has value
// (label "": every series).
func metricWith(t testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
				return l.GetName() == label && l.GetValue() == value
			}) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

// totalRecords is the number of records in the source topics.
func (pl *pipeline) totalRecords() int64 {
	var n int64
	for _, end := range pl.endOffsets(pl.topics()...) {
		n += end
	}
	return n
}

// resetGroup commits offset off for every source partition, as Kafka's
// tools do (with meta), while the group has no members.
func (pl *pipeline) resetGroup(group string, off int64, meta string) {
	pl.t.Helper()
	var os kadm.Offsets
	for _, topic := range pl.topics() {
		for p := range int32(testPartitions) {
			os.Add(kadm.Offset{Topic: topic, Partition: p, At: off, LeaderEpoch: -1, Metadata: meta})
		}
	}
	resp, err := pl.adm.CommitOffsets(pl.t.Context(), group, os)
	require.NoError(pl.t, err)
	require.NoError(pl.t, resp.Error())
}
