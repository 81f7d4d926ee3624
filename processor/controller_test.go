package processor

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/control"
	"github.com/cdc2delta/cdc2delta/processor/controller"
	"github.com/cdc2delta/cdc2delta/processor/cut"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TestControlTable runs the processor and a controller, both stopped
// abruptly at random points and restarted, on transactions that span two
// tables and three partitions, with the transaction topic's ENDs sometimes
// late. Customers alone has a snapshot, over its three partitions, and no
// change in the first transactions; its partitions stall from their first
// record and are released one by one, and one stalls again mid-stream.
// Every version of the control table must claim no more than the tables
// held: each row's complete_through is covered by the txn offsets of the
// table version the row names, and the group claims no more than its
// tables' rows. The group's finalized_until never moves back, and once
// everything is applied it reaches the last transaction that ended.
func TestControlTable(t *testing.T) {
	for _, rule := range []string{"transactions", "watermark"} {
		t.Run(rule, func(t *testing.T) {
			for _, seed := range controlSeeds() {
				t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { testControlTable(t, rule == "transactions", seed, nil, "ctl") })
			}
		})
	}
}

// testControlTable is TestControlTable's body on brokers (nil: kfake), with
// topics named from prefix.
func testControlTable(t *testing.T, transactions bool, seed uint64, brokers []string, prefix string) {
	testControlTableThen(t, transactions, seed, brokers, prefix, nil)
}

// testControlTableThen runs then, when set, on the final control state and
// the records of each table's topic.
func testControlTableThen(t *testing.T, transactions bool, seed uint64, brokers []string, prefix string,
	then func(pl *pipeline, st *control.State, recs map[string][]cdcmodel.Record)) {
	testControlTableWith(t, transactions, seed, brokers, prefix, false, then)
}

// TestControlTableHistoryOnly is TestControlTable with history: only (ADR
// 0046): each table's only Delta table is its history table, which the
// controller follows at the table's path. Every claim of the control table
// must be covered by the txn offsets of the history table version it names.
func TestControlTableHistoryOnly(t *testing.T) {
	for _, seed := range controlSeeds()[:1] {
		testControlTableWith(t, true, seed, nil, "ctlhist", true, nil)
	}
}

// testControlTableWith is testControlTableThen, with history: only for
// every table when historyOnly is set.
func testControlTableWith(t *testing.T, transactions bool, seed uint64, brokers []string, prefix string, historyOnly bool,
	then func(pl *pipeline, st *control.State, recs map[string][]cdcmodel.Record)) {
	rng := rand.New(rand.NewPCG(seed, 0xc0))
	pl := newPipelineOf(t, dbzgen.WorkloadOptions{
		Seed: seed, Keys: 30, Snapshot: true, MaxTxEvents: 6, TransactionTopic: true, LateEnd: 0.3, Redeliver: 0.05,
		SnapshotSkip: []string{"orders"}, QuietStart: map[string]int{"customers": 10 + rng.IntN(30)},
	}, brokers, prefix, dbzgen.Customers(), dbzgen.Orders())
	customers := pl.tables[0]
	// Each customers partition is released at the start of a round; one
	// released partition stalls again for the round after.
	release := map[int32]int{}
	for p := range int32(testPartitions) {
		release[p] = 1 + rng.IntN(3)
	}
	restall := int32(rng.IntN(testPartitions))
	stalled := func(round int, p int32) bool {
		return round < release[p] || p == restall && round == release[p]+1
	}
	txTopic := pl.gen.TransactionTopic()
	_, err := pl.adm.CreateTopics(t.Context(), 1, 1, nil, txTopic)
	require.NoError(t, err)
	opts := pl.options(prefix)
	opts.Batch = BatchLimits{Records: 1 + rng.IntN(40), Age: 10 * time.Millisecond, MinRecords: 1, MaxDelay: 10 * time.Millisecond} // every batch at Age
	opts.ShutdownTimeout = time.Nanosecond
	sinkOpts := opts.Sink
	opts.PerTable = func(src route.TableSource) TableSettings {
		return TableSettings{Sink: sinkOpts, ChangeLog: src.Path + "_changes", HistoryOnly: historyOnly}
	}
	ctlStore := memstore.New(memstore.Options{})
	copts := controller.Options{Brokers: pl.brokers, Topics: pl.topics(), OpenStore: opts.OpenStore, Control: ctlStore,
		Groups: map[string][]string{"sales": {"sales.dbo.customers", "sales.dbo.orders"}}, Decoder: opts.Decoder,
		Interval: 20 * time.Millisecond, Logger: testLogger()}
	if transactions {
		copts.TransactionTopic = txTopic
	}
	var reg *prometheus.Registry
	// Two controllers at once, as two processes would run them, share the
	// control table.
	startController := func() (stop func()) {
		var stops []func()
		for range 2 {
			reg = prometheus.NewRegistry()
			copts.Registerer = reg
			c, err := controller.New(copts)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx) }()
			stops = append(stops, func() {
				cancel()
				require.NoError(t, <-done)
				c.Close()
			})
		}
		return func() {
			for _, s := range stops {
				s()
			}
		}
	}
	for round := range 4 {
		for p := range int32(testPartitions) {
			if !stalled(round, p) {
				pl.stalls.Release(p)
			}
		}
		pl.stalls.Stall(func(ev dbzgen.Event, p int32) bool { return ev.Table == customers && stalled(round, p) })
		pl.produce(150 + rng.IntN(200))
		r := pl.start(opts)
		stop := startController()
		if round < 3 {
			// Kept: the close's moment is random on purpose, with partitions stalled.
			time.Sleep(time.Duration(200+rng.IntN(300)) * time.Millisecond)
		} else {
			for p := range int32(testPartitions) {
				pl.stalls.Release(p)
			}
			pl.waitCaughtUp()
		}
		r.close(t)
		stop()
	}
	// Every change is applied: the controller, once more, must reach the
	// last transaction that ended.
	lastEnd := lastEndedTx(t, pl, txTopic)
	stop := startController()
	ctl, err := control.Open(t.Context(), ctlStore, nil)
	require.NoError(t, err)
	var st *control.State
	reached := func() bool {
		st, err = ctl.Read(t.Context())
		require.NoError(t, err)
		g := st.Groups["sales"]
		if transactions {
			return g.CompleteThrough == cut.End(lastEnd)
		}
		return g.CompleteThrough.Commit.Compare(lastEnd) >= 0
	}
	if !assert.Eventually(t, reached, 20*time.Second, 20*time.Millisecond) {
		debugStuck(t, pl, txTopic, st)
	}
	require.True(t, reached(), "the group reaches the last transaction that ended, %s; the tables: %+v", lastEnd, st.Tables)
	stop()
	require.False(t, st.Groups["sales"].FinalizedUntil.IsZero())
	behind := metricWith(t, reg, "cdc2delta_group_finalized_behind_seconds", "group", "sales")
	require.False(t, math.IsNaN(behind))
	require.GreaterOrEqual(t, behind, 0.0)

	recs := map[string][]cdcmodel.Record{}
	for _, tb := range pl.tables {
		recs[tb.Topic()] = pl.consumeAll(tb.Topic(), opts.Decoder)
	}
	checkControlHistory(t, pl, ctlStore, recs, !historyOnly)
	for _, tb := range pl.tables {
		checkChangeLog(t, pl, tb, recs[tb.Topic()])
	}
	if then != nil {
		then(pl, st, recs)
	}
}

// checkChangeLog: the table's change log holds every record consumed, but
// tombstones, exactly once, and its txn is the table's.
func checkChangeLog(t *testing.T, pl *pipeline, tb *dbzgen.Table, recs []cdcmodel.Record) {
	store, err := pl.options("x").OpenStore(t.Context(), tablePath(tb)+"_changes")
	require.NoError(t, err)
	lt, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := lt.Snapshot(t.Context())
	require.NoError(t, err)
	meta, schema := snap.Metadata(), snap.Schema()
	col := func(name string) int {
		return slices.IndexFunc(schema.Fields, func(f deltalog.StructField) bool { return f.Name == name })
	}
	got := map[string]int{}
	for _, f := range snap.Files() {
		rows, err := datafile.Read(t.Context(), store, &f, schema, datafile.ReadOptions{Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns})
		require.NoError(t, err)
		for _, r := range rows {
			got[fmt.Sprintf("%v/%v/%v %v %v", r[col(cdctable.LogKafkaTopic)], r[col(cdctable.LogKafkaPart)], r[col(cdctable.LogKafkaOffset)], r[col(cdctable.LogOp)], r[col(cdctable.LogPosition)])]++
		}
	}
	want := map[string]int{}
	for _, r := range recs {
		if r.Change.Op != codecs.OpTombstone {
			want[fmt.Sprintf("%s/%d/%d %c %s", r.Topic, r.Partition, r.Offset, r.Change.Op, r.Change.Pos.Hex())]++
		}
	}
	require.Equal(t, want, got, "the change log of %s", tb.Topic())
	main := pl.txns(tb)
	for tp, v := range main {
		lv, ok := snap.TxnVersion(tp.AppID())
		require.True(t, ok && lv == v, "%s: change log txn %d, table txn %d", tp, lv, v)
	}
}

// lastEndedTx is the commit of the latest END on the transaction topic.
func lastEndedTx(t *testing.T, pl *pipeline, topic string) codecs.LSN {
	var last codecs.LSN
	dec := pl.options("x").Decoder
	for _, r := range pl.rawRecordsOf(topic) {
		ev, err := dec.DecodeTransaction(t.Context(), r.Topic, r.Partition, r.Offset, r.Value)
		require.NoError(t, err)
		if ev.Status == codecs.TxEnd && ev.Commit.Compare(last) > 0 {
			last = ev.Commit
		}
	}
	return last
}

// checkControlHistory reads every version of the control table and checks
// that no row claims more than its table version holds, and that the
// group's finalized_until never moves back.
// A history table's rows are versions, not the current state: rowsToo
// compares a current-state table's rows with the model too.
func checkControlHistory(t *testing.T, pl *pipeline, ctlStore deltalog.Store, recs map[string][]cdcmodel.Record, rowsToo bool) {
	ctl, err := control.Open(t.Context(), ctlStore, nil)
	require.NoError(t, err)
	latest, err := ctl.Read(t.Context())
	require.NoError(t, err)
	byName := map[string]*dbzgen.Table{}
	for _, tb := range pl.tables {
		d := tb.Def()
		byName[d.Database+"."+d.Schema+"."+d.Name] = tb
	}
	txnsAt := map[string]map[int64]map[cdctable.TopicPartition]int64{}
	txns := func(name string, v int64) map[cdctable.TopicPartition]int64 {
		if txnsAt[name] == nil {
			txnsAt[name] = map[int64]map[cdctable.TopicPartition]int64{}
		}
		if m, ok := txnsAt[name][v]; ok {
			return m
		}
		tt, err := deltalog.Open(t.Context(), pl.store(byName[name]))
		require.NoError(t, err)
		snap, err := tt.SnapshotAt(t.Context(), v)
		require.NoError(t, err)
		m := map[cdctable.TopicPartition]int64{}
		for id, txn := range snap.Txns() {
			tp, ok := cdctable.ParseAppID(id)
			require.True(t, ok)
			m[tp] = txn.Version
		}
		txnsAt[name][v] = m
		return m
	}
	rows := newRowsOracle(t, pl, recs)
	covered := func(row control.Row) {
		tb := byName[row.Name]
		require.NotNil(t, tb, row.Name)
		if rowsToo {
			rows.check(tb, row.DeltaVersion, row.CompleteThrough, fmt.Sprintf("%s row of %s", row.Kind, row.Name))
		}
		applied := txns(row.Name, row.DeltaVersion)
		// A change re-delivered is one change: one applied copy is enough.
		done, first := map[string]bool{}, map[string]cdcmodel.Record{}
		for _, r := range recs[tb.Topic()] {
			if r.Change.Op == codecs.OpTombstone || r.Change.Pos.Compare(row.CompleteThrough) > 0 {
				continue
			}
			id := fmt.Sprint(r.Change.Key, r.Change.Pos)
			off, ok := applied[cdctable.TopicPartition{Topic: r.Topic, Partition: r.Partition}]
			done[id] = done[id] || ok && r.Offset <= off
			if _, seen := first[id]; !seen {
				first[id] = r
			}
		}
		for id, ok := range done {
			r := first[id]
			require.True(t, ok, "%s row of %s claims complete through %s at version %d, but %s/%d offset %d (%s) is not applied there",
				row.Kind, row.Name, row.CompleteThrough, row.DeltaVersion, r.Topic, r.Partition, r.Offset, r.Change.Pos)
		}
	}
	var finalized time.Time
	tableRows, versionRows := 0, 0
	for v := int64(1); v <= latest.Version; v++ {
		st, err := ctl.ReadAt(t.Context(), v)
		require.NoError(t, err)
		for _, row := range st.Tables {
			if row.CompleteThrough != (codecs.Position{}) {
				covered(row)
				tableRows++
			}
		}
		for _, vs := range st.Versions {
			for _, row := range vs {
				covered(row)
				versionRows++
			}
		}
		g := st.Groups["sales"]
		require.False(t, g.FinalizedUntil.Before(finalized), "control version %d: finalized_until went back", v)
		finalized = g.FinalizedUntil
		for _, name := range []string{"sales.dbo.customers", "sales.dbo.orders"} {
			if tr, ok := st.Tables[name]; ok && g.CompleteThrough != (codecs.Position{}) {
				require.LessOrEqual(t, g.CompleteThrough.Compare(tr.CompleteThrough), 0, "control version %d: the group passes %s", v, name)
			}
		}
	}
	require.Positive(t, tableRows)
	require.Positive(t, versionRows)
	require.Greater(t, latest.Version, int64(3), "controllers committed while the processor ran")
	t.Logf("%d control versions, %d table rows and %d version rows checked against their txns and rows", latest.Version, tableRows, versionRows)
}

// rawRecordsOf reads every record of topic.
func (pl *pipeline) rawRecordsOf(topic string) []*kgo.Record {
	ends := pl.endOffsets(topic)
	want := 0
	for _, e := range ends {
		want += int(e)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(pl.brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(pl.t, err)
	defer cl.Close()
	var out []*kgo.Record
	for len(out) < want {
		fs := cl.PollFetches(pl.t.Context())
		require.NoError(pl.t, fs.Err())
		out = append(out, fs.Records()...)
	}
	return out
}

// controlSeeds are TestControlTable's seeds: two fixed ones, or
// CDC2DELTA_CONTROL_SEEDS fresh ones.
func controlSeeds() []uint64 {
	if s, err := strconv.ParseUint(os.Getenv("CDC2DELTA_CONTROL_SEED"), 10, 64); err == nil {
		return []uint64{s}
	}
	n, _ := strconv.Atoi(os.Getenv("CDC2DELTA_CONTROL_SEEDS"))
	if n <= 0 {
		return []uint64{3, 8}
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(time.Now().UnixNano()) + uint64(i)
	}
	return seeds
}

func debugStuck(t *testing.T, pl *pipeline, txTopic string, st *control.State) {
	dec := pl.options("x").Decoder
	ends := map[codecs.LSN]codecs.TxEvent{}
	var order []codecs.LSN
	for _, r := range pl.rawRecordsOf(txTopic) {
		ev, _ := dec.DecodeTransaction(t.Context(), r.Topic, r.Partition, r.Offset, r.Value)
		if ev.Status == codecs.TxEnd {
			if _, ok := ends[ev.Commit]; !ok {
				order = append(order, ev.Commit)
			}
			ends[ev.Commit] = ev
		}
	}
	for _, tb := range pl.tables {
		d := tb.Def()
		name := d.Database + "." + d.Schema + "." + d.Name
		row := st.Tables[name]
		id := codecs.TableID{Database: d.Database, Schema: d.Schema, Table: d.Name}
		tt, _ := deltalog.Open(t.Context(), pl.store(tb))
		snap, _ := tt.Snapshot(t.Context())
		got := map[string]map[int64][]int64{}
		for v := int64(0); v <= snap.Version(); v++ {
			ci, _ := tt.CommitInfo(t.Context(), v)
			p, ok, _ := cdctable.ReadProgress(ci)
			if !ok {
				continue
			}
			for _, tx := range p.TxIDs() {
				if got[tx] == nil {
					got[tx] = map[int64][]int64{}
				}
				got[tx][v] = p.Orders(tx)
			}
		}
		for _, c := range order {
			if cut.End(c).Compare(row.CompleteThrough) <= 0 {
				continue
			}
			n := ends[c].Counts[id]
			have := map[int64]bool{}
			for _, os := range got[c.String()] {
				for _, o := range os {
					have[o] = true
				}
			}
			if int64(len(have)) < n {
				t.Logf("%s: first incomplete tx %s: END counts %d, progress has %v", name, c, n, got[c.String()])
				break
			}
		}
	}
}

// TestChangeLogCatchesUp: a change log that lags its table (it was off for a
// while) is caught up from its own txn on the next start, the table ignoring
// what it already holds; the log then holds every record once.
func TestChangeLogCatchesUp(t *testing.T) {
	pl := newPipelineOf(t, dbzgen.WorkloadOptions{Seed: 4, Keys: 40, Snapshot: true, MaxTxEvents: 3}, nil, "clog", dbzgen.Orders())
	tb := pl.tables[0]
	withLog := pl.options("clog")
	sinkOpts := withLog.Sink
	withLog.PerTable = func(src route.TableSource) TableSettings {
		return TableSettings{Sink: sinkOpts, ChangeLog: src.Path + "_changes"}
	}
	without := pl.options("clog")
	logCaughtUp := func() bool {
		store, err := withLog.OpenStore(t.Context(), tablePath(tb)+"_changes")
		require.NoError(t, err)
		lt, err := deltalog.Open(t.Context(), store)
		require.NoError(t, err)
		snap, err := lt.Snapshot(t.Context())
		if err != nil {
			return false
		}
		for tp, v := range pl.txns(tb) {
			if lv, ok := snap.TxnVersion(tp.AppID()); !ok || lv != v {
				return false
			}
		}
		return pl.caughtUp()
	}
	for i, opts := range []Options{withLog, without, withLog} {
		pl.produce(120)
		r := pl.start(opts)
		if i == 1 {
			pl.waitCaughtUp()
		} else {
			require.Eventually(t, logCaughtUp, 20*time.Second, 20*time.Millisecond, "round %d", i)
		}
		r.close(t)
	}
	checkChangeLog(t, pl, tb, pl.consumeAll(tb.Topic(), withLog.Decoder))
}

// TestControllerRoundHasAKafkaDeadline: a broker that takes the round's
// admin requests and never answers fails the round within KafkaTimeout,
// naming kafka.brokers, instead of holding the control table's keeper.
func TestControllerRoundHasAKafkaDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	pl := newPipelineOf(t, dbzgen.WorkloadOptions{Seed: 1}, cluster.ListenAddrs(), "ctlhang", dbzgen.Orders())
	opts := pl.options("ctlhang")
	c, err := controller.New(controller.Options{Brokers: pl.brokers, TopicRegex: `^ctlhang\.`, OpenStore: opts.OpenStore,
		Control: memstore.New(memstore.Options{}), KafkaTimeout: timeout})
	require.NoError(t, err)
	defer c.Close()

	release := make(chan struct{})
	cluster.ControlKey(int16(kmsg.Metadata), func(kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		cluster.SleepControl(func() { <-release })
		return nil, nil, false
	})
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- c.Round(t.Context()) }()
	select {
	case err = <-done:
	case <-time.After(timeout + 5*time.Second):
		close(release)
		<-done
		t.Fatalf("a round still waits for the broker %s after it stopped answering", time.Since(start).Round(time.Millisecond))
	}
	close(release)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, fmt.Sprintf("no answer from kafka.brokers %v within %s", pl.brokers, timeout))
	require.Less(t, time.Since(start), timeout+2*time.Second)
}
