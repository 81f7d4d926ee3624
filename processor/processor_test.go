package processor

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
	"github.com/cdc2delta/cdc2delta/processor/operator"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

func TestEndToEnd(t *testing.T) {
	tests := []struct {
		name  string
		regex bool
	}{
		{"topic list", false},
		{"topic regex", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 1, Keys: 60, Snapshot: true, Redeliver: 0.1, MaxTxEvents: 3})
			pl.produce(600)
			opts := pl.options("e2e")
			if tc.regex {
				opts.Topics, opts.TopicRegex = []string{`^shop\.sales\.dbo\.[a-z]+$`}, true
			}
			r := pl.start(opts)
			pl.waitCaughtUp()
			pl.requireModel()
			pl.requireGroupOffsets("e2e")
			require.True(t, r.p.Status().Ready())
			commits := metricWith(t, r.reg, "cdc2delta_group_commits_total", "result", "ok")
			require.Eventually(t, func() bool {
				return metricWith(t, r.reg, "cdc2delta_group_commits_total", "result", "ok") >= commits+2
			}, 5*time.Second, 20*time.Millisecond, "an idle processor re-commits its offsets")
			require.Equal(t, float64(pl.totalRecords()), metricSum(t, r.reg, "cdc2delta_events_consumed_total"))
			require.Positive(t, metricSum(t, r.reg, "cdc2delta_tombstones_total"))
			require.Positive(t, metricSum(t, r.reg, "cdc2delta_events_duplicates_total")+metricSum(t, r.reg, "cdc2delta_events_skipped_stale_total"))

			srv := httptest.NewServer(r.p.Handler(r.reg))
			defer srv.Close()
			code, body := get(t, srv.URL+"/readyz")
			require.Equal(t, http.StatusOK, code, body)
			code, _ = get(t, srv.URL+"/healthz")
			require.Equal(t, http.StatusOK, code)
			_, body = get(t, srv.URL+"/metrics")
			require.NotContains(t, body, `topic=""`)
			for _, name := range []string{"cdc2delta_events_applied_total", "cdc2delta_partition_delta_offset",
				"cdc2delta_partition_group_offset", "cdc2delta_partition_high_watermark", "cdc2delta_end_to_end_latency_seconds"} {
				require.Contains(t, body, name)
			}

			r.close(t)
			code, body = get(t, srv.URL+"/readyz")
			require.Equal(t, http.StatusServiceUnavailable, code, "a stopped processor is not ready")
			require.Contains(t, body, "not running")
			require.NoError(t, r.p.Close(), "Close is idempotent")
			require.ErrorIs(t, r.p.Run(t.Context()), ErrClosed, "Run after Close")
		})
	}
}

func TestRestartResumesFromTxn(t *testing.T) {
	tests := []struct {
		name string
		// reset is applied to the group between the runs.
		reset func(pl *pipeline)
		// replay: the second run re-reads everything.
		replay bool
	}{
		{"clean", func(*pipeline) {}, false},
		{"stale commit of ours", func(pl *pipeline) { pl.resetGroup("g", 0, cdctable.GroupMeta(1)) }, false},
		{"operator reset to earliest", func(pl *pipeline) { pl.resetGroup("g", 0, "") }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 2, Keys: 40, Snapshot: true, Redeliver: 0.1})
			pl.produce(300)
			r1 := pl.start(pl.options("g"))
			pl.waitCaughtUp()
			pl.requireModel()
			r1.close(t)
			first := pl.totalRecords()
			before := map[string][]string{}
			for _, tb := range pl.tables {
				before[tb.Def().Name] = pl.tableRows(tb)
			}

			tc.reset(pl)
			r2 := pl.start(pl.options("g"))
			pl.requireGroupOffsets("g") // the assignment re-commits txn+1 at once
			if tc.replay {
				require.Eventually(t, func() bool {
					return metricSum(t, r2.reg, "cdc2delta_events_consumed_total") == float64(first)
				}, 20*time.Second, 20*time.Millisecond)
				require.Eventually(t, func() bool {
					return metricSum(t, r2.reg, "cdc2delta_events_skipped_replayed_total")+metricSum(t, r2.reg, "cdc2delta_tombstones_total") == float64(first)
				}, 20*time.Second, 20*time.Millisecond, "a replay must change nothing")
				for _, tb := range pl.tables {
					require.Equal(t, before[tb.Def().Name], pl.tableRows(tb), "replay changed %s", tb.Def().Name)
				}
			}
			pl.produce(300)
			pl.waitCaughtUp()
			pl.requireModel()
			pl.requireGroupOffsets("g")
			consumed := metricSum(t, r2.reg, "cdc2delta_events_consumed_total")
			if tc.replay {
				require.Equal(t, float64(pl.totalRecords()), consumed)
			} else {
				require.Equal(t, float64(pl.totalRecords()-first), consumed, "the second run re-read applied records")
				require.Zero(t, metricSum(t, r2.reg, "cdc2delta_events_skipped_replayed_total"))
			}
		})
	}
}

func TestTwoInstancesShareGroup(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 3, Keys: 80, Snapshot: true, Redeliver: 0.05, MaxTxEvents: 2})
	pl.produce(300)
	a := pl.start(pl.options("shared"))
	b := pl.start(pl.options("shared"))
	pl.produce(300)
	require.Eventually(t, func() bool {
		return a.p.Status().Partitions > 0 && b.p.Status().Partitions > 0
	}, 20*time.Second, 20*time.Millisecond, "both members own partitions")
	pl.produce(300)
	a.close(t) // b takes over a's partitions mid-stream
	pl.produce(300)
	pl.waitCaughtUp()
	pl.requireModel()
	pl.requireGroupOffsets("shared")
	require.Equal(t, 2*testPartitions, b.p.Status().Partitions)
}

func TestUnsafeSchemaChangeStopsTable(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 7, Keys: 20, Snapshot: true, SkipTombstones: true})
	pl.produce(100)
	r := pl.start(pl.options("schema"))
	pl.waitCaughtUp()

	// The same source table, with status turned from varchar into int:
	// the table cannot take it without reinterpreting data.
	def := dbzgen.Orders()
	for i := range def.Columns {
		if def.Columns[i].Name == "status" {
			def.Columns[i].Type = "int"
		}
	}
	changed, err := pl.gen.Table(def)
	require.NoError(t, err)
	key, value, err := pl.gen.Encode(t.Context(), dbzgen.Event{Table: changed, Op: dbzgen.OpCreate,
		After:  dbzgen.Row{"order_id": 424242, "customer_id": "c1", "status": 7},
		Source: dbzgen.Source{Time: time.Now(), CommitLSN: dbzgen.MakeLSN(0x7fff0000, 1, 1), ChangeLSN: dbzgen.MakeLSN(0x7fff0000, 1, 1), SerialNo: 1}})
	require.NoError(t, err)
	res := pl.producer.ProduceSync(t.Context(), &kgo.Record{Topic: changed.Topic(), Key: key, Value: value})
	require.NoError(t, res.FirstErr())
	badAt := res[0].Record

	require.Eventually(t, func() bool { return len(r.p.Status().Failed) == 1 }, 20*time.Second, 20*time.Millisecond)
	f := r.p.Status().Failed[0]
	require.ErrorIs(t, f, ErrTableFailed)
	require.ErrorIs(t, f, merge.ErrSchema, "stopped by the schema check, not by decoding")
	t.Log(f)
	require.Equal(t, tablePath(pl.tables[1]), f.Table)
	require.Equal(t, badAt.Offset, f.Offset)
	require.Equal(t, badAt.Partition, f.Partition)
	v := pl.txns(pl.tables[1])[cdctable.TopicPartition{Topic: badAt.Topic, Partition: badAt.Partition}]
	require.Less(t, v, badAt.Offset, "the change must stay unapplied")
	pl.requireModel() // nothing else changed; the customers table is unaffected
}

func TestReplayFromTimestamp(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 8, Keys: 30, Snapshot: true})
	pl.produce(150)
	// Record timestamps have millisecond resolution: at is the next millisecond, which
	// no record produced so far has, and the next records are produced from it on.
	at := time.Now().Truncate(time.Millisecond).Add(time.Millisecond)
	for time.Now().Before(at) {
		runtime.Gosched()
	}
	first := pl.totalRecords()
	pl.produce(150)
	r := pl.start(pl.options("replay"))
	pl.waitCaughtUp()
	pl.requireModel()

	_, err := operator.ReplayFrom(t.Context(), pl.adm, operator.ReplayOptions{Group: "replay", Topics: pl.topics(), Partition: -1, At: at})
	require.ErrorIs(t, err, operator.ErrGroupActive)
	r.close(t)
	before := map[string][]string{}
	for _, tb := range pl.tables {
		before[tb.Def().Name] = pl.tableRows(tb)
	}
	offs, err := operator.ReplayFrom(t.Context(), pl.adm, operator.ReplayOptions{Group: "replay", Topics: pl.topics(), Partition: -1, At: at})
	require.NoError(t, err)
	var sum int64
	offs.Each(func(o kadm.Offset) { sum += o.At })
	require.Equal(t, first, sum, "offsets at the first record after the timestamp")

	r2 := pl.start(pl.options("replay"))
	want := float64(pl.totalRecords() - first)
	require.Eventually(t, func() bool {
		return metricSum(t, r2.reg, "cdc2delta_events_consumed_total") == want
	}, 20*time.Second, 20*time.Millisecond, "the replay re-reads the records after the timestamp")
	pl.requireGroupOffsets("replay")
	for _, tb := range pl.tables {
		require.Equal(t, before[tb.Def().Name], pl.tableRows(tb), "replay changed %s", tb.Def().Name)
	}
}

func TestRebalanceUnderLoad(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 10, Keys: 100, Snapshot: true, Redeliver: 0.05, MaxTxEvents: 4, KeyChangeRatio: 0.05})
	opts := pl.options("three")
	opts.Batch = BatchLimits{Records: 50, Age: 10 * time.Millisecond}
	var members []*running
	// Each membership change comes after 200 records produced in bursts 10ms apart, so
	// that it happens under load.
	step := func(change func()) {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for range 5 {
			pl.produce(40)
			<-tick.C
		}
		change()
	}
	step(func() { members = append(members, pl.start(opts)) })
	step(func() { members = append(members, pl.start(opts)) })
	step(func() { members = append(members, pl.start(opts)) })
	step(func() { members[0].close(t) })
	step(func() { members = append(members, pl.start(opts)) })
	step(func() { members[1].close(t) })
	step(func() {})
	pl.waitCaughtUp()
	pl.requireModel()
	pl.requireGroupOffsets("three")
	owned := 0
	for _, m := range members[2:] {
		owned += m.p.Status().Partitions
	}
	require.Equal(t, 2*testPartitions, owned, "the remaining members own every partition")
}

// TestCloseDuringSlowCommit closes a processor while a Delta commit is slow
// and later records are pending: the abandoned batch must not be overtaken
// by the pending ones (which would move the txn past it and lose it).
func TestCloseDuringSlowCommit(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 12, Keys: 50, Snapshot: true, Redeliver: 0.05})
	pl.mem = map[string]memTable{}
	pl.produce(100)
	r1 := pl.start(pl.options("slow"))
	pl.waitCaughtUp()

	var faults []*faultstore.Injection
	var slowDone atomic.Int32 // slow commits that got past their delay
	for _, tb := range pl.tables {
		faults = append(faults, pl.memStore(tablePath(tb)).Inject(faultstore.Fault{
			Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/*.json", Nth: 1, Delay: 10 * time.Second, DelayOnly: true,
			Then: func() { slowDone.Add(1) }}))
	}
	pl.produce(200)
	require.Eventually(t, func() bool { return faults[0].Fired()+faults[1].Fired() > 0 }, 10*time.Second, 5*time.Millisecond)
	pl.produce(200) // polled while the commit hangs
	// The case under test holds only if, at close, every record has been polled while a
	// commit still hangs: show both before closing.
	want := float64(pl.totalRecords())
	require.Eventually(t, func() bool { return metricSum(t, r1.reg, "cdc2delta_events_consumed_total") == want },
		20*time.Second, 5*time.Millisecond, "the later records are polled")
	require.Zero(t, slowDone.Load(), "a commit still hangs when the processor closes")
	r1.close(t)
	for _, f := range faults {
		f.Remove()
	}

	pl.start(pl.options("slow"))
	pl.waitCaughtUp()
	pl.requireModel()
	pl.requireGroupOffsets("slow")
}

// TestPerTableSettings routes two topics to two tables with their own
// settings: customers soft-deletes and merges with deletion vectors, orders
// hard-deletes and merges copy-on-write. Each table must show its own
// behaviour.
func TestPerTableSettings(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 21, Keys: 40, Snapshot: true, Redeliver: 0.05, MaxTxEvents: 3})
	pl.produce(200)
	customers, orders := pl.tables[0], pl.tables[1]
	var mu sync.Mutex
	var seen []route.TableSource
	opts := pl.options("per-table")
	opts.Maintenance.TailFileSize = -1 // every update leaves a vector or a rewrite to see
	opts.PerTable = func(src route.TableSource) TableSettings {
		mu.Lock()
		seen = append(seen, src)
		mu.Unlock()
		if src.Table == customers.Def().Name {
			return TableSettings{Sink: merge.Options{DeleteMode: merge.DeleteSoft, Mode: merge.ModeDV}}
		}
		return TableSettings{Sink: merge.Options{DeleteMode: merge.DeleteHard, Mode: merge.ModeCoW}, BadInput: PolicyDeadLetter}
	}
	r := pl.start(opts)
	pl.waitCaughtUp()
	pl.produce(150)
	pl.produceRaw(orders.Topic(), 1, []byte("k"), []byte("not avro")) // dead-lettered by orders' policy
	pl.produce(150)                                                   // updates and deletes of rows committed before
	pl.waitCaughtUp()
	require.Equal(t, 1.0, metricWith(t, r.reg, "cdc2delta_events_dead_lettered_total", "table", tablePath(orders)))
	require.Empty(t, r.p.Status().Failed)

	mu.Lock()
	require.ElementsMatch(t, []route.TableSource{
		{Topic: customers.Topic(), Database: "sales", Schema: "dbo", Table: "customers", Path: tablePath(customers)},
		{Topic: orders.Topic(), Database: "sales", Schema: "dbo", Table: "orders", Path: tablePath(orders)},
	}, seen, "PerTable is called once per table, with the names from its topic")
	mu.Unlock()

	live, deleted := pl.tableRowsSplit(customers)
	require.Equal(t, pl.modelRows(customers), live, "soft delete: the live rows are the source's")
	require.NotEmpty(t, deleted, "soft delete: deleted rows stay, flagged %s", cdctable.ColDeleted)
	require.Positive(t, pl.w.Counts().Deletes)
	live, deleted = pl.tableRowsSplit(orders)
	require.Equal(t, pl.modelRows(orders), live)
	require.Empty(t, deleted, "hard delete: deleted rows are gone")

	require.Positive(t, pl.logDeletionVectors(customers), "dv: updates mark old rows in deletion vectors")
	require.Zero(t, pl.logDeletionVectors(orders), "cow: no deletion vector anywhere in the log")
}

// logDeletionVectors counts the add actions with a deletion vector in every
// commit of the table's log.
func (pl *pipeline) logDeletionVectors(tb *dbzgen.Table) int {
	pl.t.Helper()
	commits, err := filepath.Glob(filepath.Join(pl.root, tablePath(tb), "_delta_log", "*.json"))
	require.NoError(pl.t, err)
	require.NotEmpty(pl.t, commits)
	n := 0
	for _, c := range commits {
		data, err := os.ReadFile(c)
		require.NoError(pl.t, err)
		for line := range strings.SplitSeq(string(data), "\n") {
			var a struct {
				Add *struct {
					DeletionVector *json.RawMessage `json:"deletionVector"`
				} `json:"add"`
			}
			if line == "" {
				continue
			}
			require.NoError(pl.t, json.Unmarshal([]byte(line), &a))
			if a.Add != nil && a.Add.DeletionVector != nil && string(*a.Add.DeletionVector) != "null" {
				n++
			}
		}
	}
	return n
}

// TestTableSettings checks the settings a table gets, and that settings New
// could not check are refused with ErrOptions (the topic is then reported
// unroutable instead of retried).
func TestTableSettings(t *testing.T) {
	src := route.TableSource{Topic: "p.db.dbo.t", Database: "db", Schema: "dbo", Table: "t", Path: "db/dbo/t"}
	per := func(ts TableSettings) func(route.TableSource) TableSettings {
		return func(route.TableSource) TableSettings { return ts }
	}
	tests := []struct {
		name    string
		opts    Options
		wantErr string
		want    merge.Options
		wantPol Policy
	}{
		{"template", Options{Sink: merge.Options{DeleteMode: merge.DeleteSoft}, BadInput: PolicyFail},
			"", merge.Options{DeleteMode: merge.DeleteSoft}, PolicyFail},
		{"table policy by path", Options{BadInput: PolicyFail, DeadLetterTopic: "dlq", TablePolicies: map[string]Policy{"db/dbo/t": PolicyDeadLetter}},
			"", merge.Options{}, PolicyDeadLetter},
		{"per table", Options{Sink: merge.Options{DeleteMode: merge.DeleteSoft}, BadInput: PolicyFail,
			PerTable: per(TableSettings{Sink: merge.Options{Mode: merge.ModeCoW}})},
			"", merge.Options{Mode: merge.ModeCoW}, PolicyFail},
		{"per table policy wins", Options{BadInput: PolicyFail, DeadLetterTopic: "dlq", TablePolicies: map[string]Policy{"db/dbo/t": PolicyFail},
			PerTable: per(TableSettings{BadInput: PolicyDeadLetter})},
			"", merge.Options{}, PolicyDeadLetter},
		{"dead letter without topic", Options{BadInput: PolicyFail, PerTable: per(TableSettings{BadInput: PolicyDeadLetter})},
			"dead letter topic", merge.Options{}, ""},
		{"unknown policy", Options{BadInput: PolicyFail, PerTable: per(TableSettings{BadInput: "skip"})},
			"bad-input policy", merge.Options{}, ""},
		{"unknown delete mode", Options{BadInput: PolicyFail, PerTable: per(TableSettings{Sink: merge.Options{DeleteMode: "purge"}})},
			"delete mode", merge.Options{}, ""},
		{"unknown merge mode", Options{BadInput: PolicyFail, PerTable: per(TableSettings{Sink: merge.Options{Mode: "mor"}})},
			"merge mode", merge.Options{}, ""},
		{"history tracking both ways", Options{BadInput: PolicyFail, PerTable: per(TableSettings{History: "h",
			HistoryOptions: merge.HistoryOptions{TrackHistory: []string{"a"}, TrackHistoryExcept: []string{"b"}}})},
			"track_history and track_history_except", merge.Options{}, ""},
		{"history only", Options{BadInput: PolicyFail, PerTable: per(TableSettings{HistoryOnly: true})},
			"", merge.Options{}, PolicyFail},
		{"history only and beside", Options{BadInput: PolicyFail, PerTable: per(TableSettings{HistoryOnly: true, History: "h"})},
			"a second history table", merge.Options{}, ""},
		{"history only with soft deletes", Options{BadInput: PolicyFail, PerTable: per(TableSettings{HistoryOnly: true,
			Sink: merge.Options{DeleteMode: merge.DeleteSoft}})},
			"no current-state table to flag deleted rows in", merge.Options{}, ""},
		{"history only tracking both ways", Options{BadInput: PolicyFail, PerTable: per(TableSettings{HistoryOnly: true,
			HistoryOptions: merge.HistoryOptions{TrackHistory: []string{"a"}, TrackHistoryExcept: []string{"b"}}})},
			"track_history and track_history_except", merge.Options{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Processor{opts: tc.opts}
			so, pol, _, err := p.tableSettings(src)
			if tc.wantErr != "" {
				require.ErrorIs(t, err, ErrOptions)
				require.ErrorContains(t, err, tc.wantErr)
				require.ErrorContains(t, err, src.Path)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, so)
			require.Equal(t, tc.wantPol, pol)
		})
	}
}

// TestRegistryOutageAllowsRebalance checks that a member stuck retrying a
// registry outage still honours a rebalance: a second member joining gets
// its share of partitions while the registry is down, and nothing is lost or
// applied twice once it is back.
func TestRegistryOutageAllowsRebalance(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 22, Keys: 40, Snapshot: true, Redeliver: 0.05})
	pl.produce(300) // the generator registers its schemas before the outage
	pl.regDown.Store(true)
	opts := pl.options("outage")
	opts.ClientOptions = append(opts.ClientOptions, kgo.RebalanceTimeout(60*time.Second), kgo.SessionTimeout(45*time.Second))
	a := pl.start(opts)
	require.Eventually(t, func() bool {
		return metricSum(t, a.reg, "cdc2delta_events_consumed_total") == 0 && a.p.Status().Partitions == 2*testPartitions
	}, 20*time.Second, 20*time.Millisecond)
	waitRegistryWaiting(t, a, len(pl.tables)) // a is retrying the records it polled
	b := pl.start(opts)
	require.Eventually(t, func() bool {
		return b.p.Status().Partitions > 0
	}, 15*time.Second, 20*time.Millisecond, "the rebalance waits for the registry (beyond the session timeout)")
	require.Equal(t, 2*testPartitions, a.p.Status().Partitions+b.p.Status().Partitions)
	require.Zero(t, metricSum(t, a.reg, "cdc2delta_events_consumed_total")+metricSum(t, b.reg, "cdc2delta_events_consumed_total"),
		"nothing decoded while the registry is down")

	pl.regDown.Store(false)
	pl.produce(100)
	pl.waitCaughtUp()
	pl.requireModel()
	pl.requireGroupOffsets("outage")
}
