package processor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// isoEnv is one isolation scenario: two tables (customers and orders) fed
// by one workload, one of them faulted, and a schema registry reached
// through a proxy that can answer chosen schema ids with an error.
type isoEnv struct {
	t                *testing.T
	pl               *pipeline
	cluster          *kfake.Cluster
	group            string
	faulted, healthy *dbzgen.Table
	fpath, hpath     string
	// faultAt is, per partition of the faulted table, the first offset
	// that cannot be applied while the fault lasts (absent: no bound).
	faultAt map[cdctable.TopicPartition]int64
	// bad, when set, is the record the table must stop at.
	bad *kgo.Record

	regURL string
	regMu  sync.Mutex
	// regStatus answers GET /schemas/ids/{id} of these ids with the
	// status instead of the schema.
	regStatus map[int]int
}

// newIsoEnv builds a pipeline on a fresh kfake cluster; faulted is the index
// in pl.tables (0 customers, 1 orders) of the table to fault.
func newIsoEnv(t *testing.T, local bool, faulted int) *isoEnv {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	pl := newPipelineOn(t, dbzgen.WorkloadOptions{Seed: 11, Keys: 40, Snapshot: true, Redeliver: 0.05, MaxTxEvents: 3, SkipTombstones: true},
		cluster.ListenAddrs(), "shop")
	if !local {
		pl.mem = map[string]memTable{}
	}
	e := &isoEnv{t: t, pl: pl, cluster: cluster, group: "iso", faulted: pl.tables[faulted], healthy: pl.tables[1-faulted], regStatus: map[int]int{}}
	e.fpath, e.hpath = tablePath(e.faulted), tablePath(e.healthy)
	target, err := url.Parse(pl.regURL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/schemas/ids/"); ok {
			id, _ := strconv.Atoi(strings.SplitN(rest, "/", 2)[0])
			e.regMu.Lock()
			code := e.regStatus[id]
			e.regMu.Unlock()
			if code == regFrozen {
				<-r.Context().Done() // the client's deadline ends it
				return
			}
			if code != 0 {
				w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
				w.WriteHeader(code)
				fmt.Fprintf(w, `{"error_code":%d,"message":"refused by the test"}`, code)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.regURL = srv.URL
	return e
}

// options are the pipeline's options with a decoder that reads the
// registry through the proxy (each call a fresh decoder, so an empty schema
// cache, as a restarted process has).
func (e *isoEnv) options() Options {
	o := e.pl.options(e.group)
	regc, err := codecs.NewRegistry(codecs.RegistryOptions{URLs: []string{e.regURL}, MaxAttempts: 1})
	require.NoError(e.t, err)
	o.Decoder, err = codecs.NewDecoder(regc, codecs.Options{})
	require.NoError(e.t, err)
	return o
}

// regFrozen, as refuseSchemas' code, makes the registry take the requests
// for the schemas and never answer, as a frozen (SIGSTOPped) one does.
const regFrozen = -1

// refuseSchemas makes the registry answer code for tb's key and value
// schema ids (0: answer again; regFrozen: never answer).
func (e *isoEnv) refuseSchemas(tb *dbzgen.Table, code int) {
	e.t.Helper()
	keyID, valueID, err := e.pl.gen.Register(e.t.Context(), tb)
	require.NoError(e.t, err)
	e.regMu.Lock()
	defer e.regMu.Unlock()
	for _, id := range []int{keyID, valueID} {
		if code == 0 {
			delete(e.regStatus, id)
		} else {
			e.regStatus[id] = code
		}
	}
}

// mem is the faulted table's memory store, behind its fault wrapper.
func (e *isoEnv) mem() *faultstore.Store {
	require.NotNil(e.t, e.pl.mem, "the case runs on memstore")
	return e.pl.memStore(e.fpath)
}

// tableAt reports whether tb's txn is at end-1 of every non-empty partition.
func (pl *pipeline) tableAt(tb *dbzgen.Table, ends map[cdctable.TopicPartition]int64) bool {
	txns := pl.txns(tb)
	for tp, end := range ends {
		if tp.Topic != tb.Topic() || end == 0 {
			continue
		}
		if v, ok := txns[tp]; !ok || v != end-1 {
			return false
		}
	}
	return true
}

// tableState returns the state of path in s ("" when not open).
func tableState(s Status, path string) TableState {
	for _, ts := range s.Tables {
		if ts.Table == path {
			return ts.State
		}
	}
	return ""
}

// metricLine reports whether the /metrics body has the exact sample line.
func metricLine(body, line string) bool {
	return slices.Contains(strings.Split(body, "\n"), line)
}

// requireTableMetrics checks the table_failed and table_state gauges of
// path in a /metrics body: failed 0 or 1 and the one-hot state.
func requireTableMetrics(t *testing.T, body, path string, state TableState) {
	t.Helper()
	failed := 0
	if state == TableStopped {
		failed = 1
	}
	line := fmt.Sprintf(`cdc2delta_table_failed{table=%q} %d`, path, failed)
	require.True(t, metricLine(body, line), "metrics lack %s\n%s", line, grepLines(body, path))
	for _, s := range tableStates {
		v := 0
		if s == state {
			v = 1
		}
		line := fmt.Sprintf(`cdc2delta_table_state{state=%q,table=%q} %d`, s, path, v)
		require.True(t, metricLine(body, line), "metrics lack %s\n%s", line, grepLines(body, path))
	}
}

// grepLines returns the lines of body that contain s, for failure messages.
func grepLines(body, s string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) && strings.HasPrefix(l, "cdc2delta_table") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// produceUnsafe produces one orders record with status turned from varchar
// into int (a type change the table cannot take), for a key outside the
// workload, so the model does not include it. It returns where it landed.
func (e *isoEnv) produceUnsafe(t *testing.T) *kgo.Record {
	t.Helper()
	def := dbzgen.Orders()
	for i := range def.Columns {
		if def.Columns[i].Name == "status" {
			def.Columns[i].Type = "int"
		}
	}
	changed, err := e.pl.gen.Table(def)
	require.NoError(t, err)
	key, value, err := e.pl.gen.Encode(t.Context(), dbzgen.Event{Table: changed, Op: dbzgen.OpCreate,
		After:  dbzgen.Row{"order_id": 424242, "customer_id": "c1", "status": 7},
		Source: dbzgen.Source{Time: time.Now(), CommitLSN: dbzgen.MakeLSN(0x7fff0000, 1, 1), ChangeLSN: dbzgen.MakeLSN(0x7fff0000, 1, 1), SerialNo: 1}})
	require.NoError(t, err)
	res := e.pl.producer.ProduceSync(t.Context(), &kgo.Record{Topic: changed.Topic(), Key: key, Value: value})
	require.NoError(t, res.FirstErr())
	return res[0].Record
}

// produceKeyless produces one orders record whose value schema lacks the
// key column order_id (the connector's schema lost it), keyed by orders'
// own key schema, for a key outside the workload.
func (e *isoEnv) produceKeyless(t *testing.T) *kgo.Record {
	t.Helper()
	ctx := t.Context()
	src := dbzgen.Source{Time: time.Now(), CommitLSN: dbzgen.MakeLSN(0x7fff0000, 2, 1), ChangeLSN: dbzgen.MakeLSN(0x7fff0000, 2, 1), SerialNo: 1}
	orders := e.pl.tables[1]
	key, _, err := e.pl.gen.Encode(ctx, dbzgen.Event{Table: orders, Op: dbzgen.OpCreate,
		After: dbzgen.Row{"order_id": 424243, "customer_id": "c1"}, Source: src})
	require.NoError(t, err)
	def := dbzgen.Orders()
	def.Columns = slices.DeleteFunc(def.Columns, func(c dbzgen.Column) bool { return c.Name == "order_id" })
	def.Key = nil // no key schema: only the value schema is registered
	lost, err := e.pl.gen.Table(def)
	require.NoError(t, err)
	_, value, err := e.pl.gen.Encode(ctx, dbzgen.Event{Table: lost, Op: dbzgen.OpCreate,
		After: dbzgen.Row{"customer_id": "c1", "status": "new"}, Source: src})
	require.NoError(t, err)
	res := e.pl.producer.ProduceSync(ctx, &kgo.Record{Topic: orders.Topic(), Key: key, Value: value})
	require.NoError(t, res.FirstErr())
	return res[0].Record
}

// produceGarbage produces a record of tb whose value is not Avro (with a
// workload key's bytes as its key), of size bytes; it does not change the
// model.
func (e *isoEnv) produceGarbage(t *testing.T, tb *dbzgen.Table, size int) *kgo.Record {
	t.Helper()
	// Random bytes, so compression does not shrink them, and no Confluent
	// magic byte.
	value := make([]byte, size)
	rng := rand.New(rand.NewPCG(uint64(size), 1))
	for i := range value {
		value[i] = byte(1 + rng.IntN(255))
	}
	res := e.pl.producer.ProduceSync(t.Context(), &kgo.Record{Topic: tb.Topic(), Key: []byte("garbage"), Value: value})
	require.NoError(t, res.FirstErr())
	return res[0].Record
}

// skipRecord moves the txn of r's partition in the faulted table to r's
// offset, with a commit that carries only that txn: what an operator's skip
// of one record does (the `cdc2delta skip` of the bad-input hint).
func (e *isoEnv) skipRecord(t *testing.T, r *kgo.Record) {
	t.Helper()
	ctx := t.Context()
	tbl, err := deltalog.Open(ctx, e.pl.store(e.faulted))
	require.NoError(t, err)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	tp := cdctable.TopicPartition{Topic: r.Topic, Partition: r.Partition}
	v, ok := snap.TxnVersion(tp.AppID())
	require.True(t, ok)
	require.Equal(t, r.Offset-1, v, "the skipped record is the next to apply")
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{{Txn: &deltalog.Txn{AppID: tp.AppID(), Version: r.Offset}}},
		deltalog.Operation{Name: deltalog.OpStreamingUpdate}, deltalog.ReadAppIDs(tp.AppID()))
	require.NoError(t, err)
}

// latestCommit returns the path of the newest commit file in store.
func latestCommit(t *testing.T, store deltalog.Store) string {
	t.Helper()
	v := walkLog(t, store).version
	require.GreaterOrEqual(t, v, int64(0))
	return fmt.Sprintf("_delta_log/%020d.json", v)
}

func readObject(t *testing.T, store deltalog.Store, path string) []byte {
	t.Helper()
	rc, err := store.Get(t.Context(), path)
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return b
}

// isolationCase is one fault class of TestIsolation.
type isolationCase struct {
	name string
	// faulted is the index of the faulted table in pl.tables (0 customers,
	// 1 orders).
	faulted int
	// local runs the tables on localstore (else memstore).
	local bool
	// options adjusts the options of the runs after the warm-up;
	// restartOptions those of the run after the repair.
	options, restartOptions func(e *isoEnv, o *Options)
	// arm installs the fault after the warm-up and may produce records
	// (none that changes the model, and none after a record the fault
	// stops at, except through the workload); it returns the repair. It
	// may narrow e.faultAt.
	arm func(t *testing.T, e *isoEnv) (repair func())
	// The stop: what the TableError must match.
	wantErr   error
	wantPhase string
	wantHint  string
	// continues: the fault must not stop the table; verify checks what
	// it must do instead.
	continues bool
	verify    func(t *testing.T, e *isoEnv, r *running)
	// afterRestart checks the restarted run further.
	afterRestart func(t *testing.T, e *isoEnv, r *running)
}

// TestIsolation faults one of two tables, one class of fault per case, and
// checks that (1) the healthy table reaches the end offsets, also of
// records produced after the faulted one stopped, while the faulted one is
// stopped with its txn not past the fault; (2) /readyz and /metrics name the
// faulted table, with a hint, and not the healthy one; (3) once repaired, a
// fresh process on the same stores and group resumes the faulted table
// from its txn, reading only the records past it, applying nothing twice,
// and every row equals the workload's model.
func TestIsolation(t *testing.T) {
	writeFault := func(err error) func(t *testing.T, e *isoEnv) func() {
		return func(t *testing.T, e *isoEnv) func() {
			in := e.mem().Inject(faultstore.Fault{Ops: faultstore.OpWrite, Err: err})
			return in.Remove
		}
	}
	for _, tc := range []isolationCase{
		{
			name: "permanent write error", faulted: 1,
			arm:     writeFault(errors.New("injected: object store answered 400 InvalidRequest")),
			wantErr: ErrTableFailed, wantPhase: "applying", wantHint: "an error that retrying does not cure",
		},
		{
			name: "read-only directory (chmod)", faulted: 0, local: true,
			arm: func(t *testing.T, e *isoEnv) func() {
				dir := filepath.Join(e.pl.root, e.fpath)
				dirs := []string{dir, filepath.Join(dir, "_delta_log")}
				for _, d := range dirs {
					require.NoError(t, os.Chmod(d, 0o555))
				}
				repair := func() {
					for _, d := range dirs {
						require.NoError(t, os.Chmod(d, 0o755))
					}
				}
				// Root (CAP_DAC_OVERRIDE) writes through 0555: then this
				// way cannot fault the table ("read-only directory
				// (EROFS)" covers the class under root).
				probe := filepath.Join(dir, "probe")
				if err := os.WriteFile(probe, nil, 0o644); err == nil {
					require.NoError(t, os.Remove(probe))
					repair()
					t.Skipf("chmod 0555 does not stop this process (euid %d) from writing", os.Geteuid())
				}
				return repair
			},
			wantErr: fs.ErrPermission, wantPhase: "applying", wantHint: "check that this process may write to the table path",
		},
		{
			name: "read-only directory (EROFS)", faulted: 0,
			arm:     writeFault(&fs.PathError{Op: "open", Path: "/data/tables/customers/part-0.parquet", Err: syscall.EROFS}),
			wantErr: syscall.EROFS, wantPhase: "applying", wantHint: "check that this process may write to the table path",
		},
		{
			name: "permission denied", faulted: 1,
			arm:     writeFault(&fs.PathError{Op: "open", Path: "/data/tables/orders/part-0.parquet", Err: syscall.EACCES}),
			wantErr: fs.ErrPermission, wantPhase: "applying", wantHint: "check that this process may write to the table path",
		},
		{
			name: "full disk", faulted: 1,
			arm:     writeFault(&fs.PathError{Op: "write", Path: "/data/tables/orders/part-0.parquet", Err: syscall.ENOSPC}),
			wantErr: syscall.ENOSPC, wantPhase: "applying", wantHint: "the disk holding the table is full",
		},
		{
			name: "corrupt log", faulted: 1,
			arm: func(t *testing.T, e *isoEnv) func() {
				store := e.mem()
				path := latestCommit(t, store)
				orig := readObject(t, store, path)
				// A torn write: the commit file ends in the middle of a line.
				require.NoError(t, store.Put(t.Context(), path, orig[:len(orig)/2]))
				return func() { require.NoError(t, store.Put(t.Context(), path, orig)) }
			},
			wantErr: ErrTableFailed, wantPhase: "opening", wantHint: "is torn: move that file out of the table",
		},
		{
			name: "missing data file", faulted: 0,
			arm: func(t *testing.T, e *isoEnv) func() {
				store := e.mem()
				tbl, err := deltalog.Open(t.Context(), store)
				require.NoError(t, err)
				snap, err := tbl.Snapshot(t.Context())
				require.NoError(t, err)
				files := snap.Files()
				require.NotEmpty(t, files)
				path := files[0].Path
				orig := readObject(t, store, path)
				require.NoError(t, store.Delete(t.Context(), path))
				return func() { require.NoError(t, store.Put(t.Context(), path, orig)) }
			},
			wantErr: deltalog.ErrNotExist, wantPhase: "opening", wantHint: "a file the table's log references is missing",
		},
		{
			name: "registry auth failure", faulted: 1,
			arm: func(t *testing.T, e *isoEnv) func() {
				e.refuseSchemas(e.faulted, http.StatusUnauthorized)
				return func() { e.refuseSchemas(e.faulted, 0) }
			},
			wantErr: codecs.ErrRegistryRefused, wantPhase: "decoding", wantHint: "schema_registry.username",
		},
		{
			name: "missing dead-letter topic, created by the operator", faulted: 1,
			options: deadLetterOrders,
			arm: func(t *testing.T, e *isoEnv) func() {
				e.produceGarbage(t, e.faulted, 100)
				return func() {
					resp, err := e.pl.adm.CreateTopic(t.Context(), 1, 1, nil, e.faulted.Topic()+".dlq")
					require.NoError(t, err)
					require.NoError(t, resp.Err)
				}
			},
			wantErr: ErrDeadLetterTopic, wantPhase: "opening", wantHint: "create the dead-letter topic",
			afterRestart: requireDeadLettered(100, false),
		},
		{
			name: "missing dead-letter topic, created on restart", faulted: 1,
			options: deadLetterOrders,
			arm: func(t *testing.T, e *isoEnv) func() {
				e.produceGarbage(t, e.faulted, 100)
				return func() {}
			},
			restartOptions: func(_ *isoEnv, o *Options) { o.CreateDeadLetterTopics = true }, // kafka.dlq_create
			wantErr:        ErrDeadLetterTopic, wantPhase: "opening", wantHint: "set kafka.dlq_create: true",
			afterRestart: requireDeadLettered(100, false),
		},
		{
			name: "record too large for the dead-letter topic", faulted: 1,
			options: deadLetterOrders,
			arm: func(t *testing.T, e *isoEnv) func() {
				// kfake reports the topic's max.message.bytes and
				// enforces it.
				resp, err := e.pl.adm.CreateTopic(t.Context(), 1, 1,
					map[string]*string{"max.message.bytes": kadm.StringPtr("4096")}, e.faulted.Topic()+".dlq")
				require.NoError(t, err)
				require.NoError(t, resp.Err)
				e.produceGarbage(t, e.faulted, 20_000)
				return func() {}
			},
			continues: true,
			verify:    requireDeadLettered(20_000, true),
		},
		{
			name: "record too large for the broker", faulted: 1,
			options: deadLetterOrders,
			arm: func(t *testing.T, e *isoEnv) func() {
				// The topic allows the record (the default 1 MiB), the
				// broker refuses it: its message.max.bytes is lower.
				resp, err := e.pl.adm.CreateTopic(t.Context(), 1, 1, nil, e.faulted.Topic()+".dlq")
				require.NoError(t, err)
				require.NoError(t, resp.Err)
				e.produceGarbage(t, e.faulted, 200_000)
				refuseLargeProduce(e.cluster, 100_000)
				return func() {}
			},
			continues: true,
			verify:    requireDeadLettered(200_000, true),
		},
		{
			name: "unsafe schema: column type change", faulted: 1,
			arm: func(t *testing.T, e *isoEnv) func() {
				e.bad = e.produceUnsafe(t)
				e.faultAt = map[cdctable.TopicPartition]int64{{Topic: e.bad.Topic, Partition: e.bad.Partition}: e.bad.Offset}
				return func() { e.skipRecord(t, e.bad) }
			},
			wantErr: merge.ErrSchema, wantPhase: "applying", wantHint: "cannot be applied to the table safely",
		},
		{
			name: "unsafe schema: key column dropped", faulted: 1,
			arm: func(t *testing.T, e *isoEnv) func() {
				e.bad = e.produceKeyless(t)
				e.faultAt = map[cdctable.TopicPartition]int64{{Topic: e.bad.Topic, Partition: e.bad.Partition}: e.bad.Offset}
				return func() { e.skipRecord(t, e.bad) }
			},
			wantErr: codecs.ErrUnsupportedSchema, wantPhase: "decoding", wantHint: "a key column must stay in the value",
		},
	} {
		t.Run(tc.name, func(t *testing.T) { runIsolationCase(t, tc) })
	}
}

func runIsolationCase(t *testing.T, tc isolationCase) {
	e := newIsoEnv(t, tc.local, tc.faulted)
	pl := e.pl
	start := time.Now()

	// Warm-up: both tables exist, with several commits and a txn on
	// every partition.
	warm := pl.start(e.options())
	for range 2 {
		pl.produce(150)
		pl.waitCaughtUp()
	}
	warm.close(t)
	warmTxn := pl.txns(e.faulted)
	e.faultAt = pl.endOffsets(e.faulted.Topic())

	repair := tc.arm(t, e)
	pl.produce(200)
	opts := e.options()
	if tc.options != nil {
		tc.options(e, &opts)
	}
	r := pl.start(opts)
	srv := httptest.NewServer(r.p.Handler(r.reg))
	defer srv.Close()

	if tc.continues {
		pl.waitCaughtUp()
		tc.verify(t, e, r)
		code, body := get(t, srv.URL+"/readyz")
		require.Equal(t, http.StatusOK, code, body)
		_, body = get(t, srv.URL+"/metrics")
		requireTableMetrics(t, body, e.fpath, TableRunning)
		requireTableMetrics(t, body, e.hpath, TableRunning)
	} else {
		// (1) The faulted table stops, with an error naming it, its
		// cause and what to do.
		require.Eventually(t, func() bool { return len(r.p.Status().Failed) > 0 }, 20*time.Second, 10*time.Millisecond,
			"the faulted table stops")
		st := r.p.Status()
		require.Len(t, st.Failed, 1, "only the faulted table stops")
		te := st.Failed[0]
		t.Logf("stopped: %v", te)
		require.Equal(t, e.fpath, te.Table)
		require.ErrorIs(t, te, ErrTableFailed)
		require.ErrorIs(t, te, tc.wantErr)
		require.Equal(t, tc.wantPhase, te.Phase)
		require.Contains(t, te.Hint, tc.wantHint)
		require.Contains(t, te.Hint, "restart", "the hint says how to resume")
		if e.bad != nil {
			require.Equal(t, cdctable.TopicPartition{Topic: e.bad.Topic, Partition: e.bad.Partition}, te.TopicPartition,
				"the error names the record that stopped the table")
			require.Equal(t, e.bad.Offset, te.Offset, "the error names the record that stopped the table")
		}

		// The healthy table takes records produced after the stop: the
		// process was committing all along, so the faulted table could
		// have moved had it not been stopped.
		pl.produce(200)
		ends := pl.endOffsets(e.healthy.Topic())
		require.Eventually(t, func() bool { return pl.tableAt(e.healthy, ends) }, 20*time.Second, 20*time.Millisecond,
			"the healthy table reaches the end offsets")
		st = r.p.Status()
		require.Equal(t, TableStopped, tableState(st, e.fpath))
		require.Equal(t, TableRunning, tableState(st, e.hpath))
		require.Len(t, st.Failed, 1)
		if txns := pl.txns(e.faulted); txns != nil {
			requireNotPast(t, txns, e.faultAt)
		}

		// (2) Health and metrics name the faulted table, and only it.
		code, body := get(t, srv.URL+"/readyz")
		require.Equal(t, http.StatusServiceUnavailable, code)
		require.Contains(t, body, e.fpath)
		require.Contains(t, body, te.Hint)
		require.NotContains(t, body, e.hpath)
		code, _ = get(t, srv.URL+"/healthz")
		require.Equal(t, http.StatusOK, code, "a stopped table does not make the process unhealthy")
		_, body = get(t, srv.URL+"/metrics")
		requireTableMetrics(t, body, e.fpath, TableStopped)
		requireTableMetrics(t, body, e.hpath, TableRunning)
	}
	r.close(t)

	// (3) Repair, restart on the same stores and group.
	stopTxn := pl.txns(e.faulted)
	repair()
	if stopTxn == nil { // unreadable while faulted
		stopTxn = pl.txns(e.faulted)
	}
	require.NotNil(t, stopTxn)
	if !tc.continues {
		requireNotPast(t, stopTxn, e.faultAt)
	}
	for tp, v := range warmTxn {
		require.GreaterOrEqual(t, stopTxn[tp], v, "%s: no txn moves back", tp.AppID())
	}
	resumeTxn := pl.txns(e.faulted) // after the repair (a skip moves it)
	var want int64
	for tp, end := range pl.endOffsets(e.faulted.Topic()) {
		want += end - resumeTxn[tp] - 1
	}
	if tc.restartOptions != nil {
		tc.restartOptions(e, &opts)
	}
	r2 := pl.start(opts)
	require.Eventually(t, func() bool {
		return metricWith(t, r2.reg, "cdc2delta_events_consumed_total", "table", e.fpath) == float64(want)
	}, 20*time.Second, 10*time.Millisecond, "the restart reads the %d records past the faulted table's txn", want)
	pl.waitCaughtUp()
	pl.requireModel()
	require.Equal(t, float64(want), metricWith(t, r2.reg, "cdc2delta_events_consumed_total", "table", e.fpath),
		"nothing before the txn is read again")
	require.Zero(t, metricWith(t, r2.reg, "cdc2delta_events_consumed_total", "table", e.hpath),
		"the healthy table had applied everything")
	require.Zero(t, metricSum(t, r2.reg, "cdc2delta_events_skipped_replayed_total"), "no record at or below a txn reached a table")
	for _, tb := range pl.tables {
		require.Empty(t, walkLog(t, pl.store(tb)).txnRegressions, "a batch of %s applied twice", tablePath(tb))
	}
	// With nothing to re-read, nothing above proves the restart is up
	// (and before its assignment a process owns nothing, so is ready).
	require.Eventually(t, func() bool {
		st := r2.p.Status()
		return st.Ready() && st.Partitions == len(pl.tables)*testPartitions && tableState(st, e.fpath) == TableRunning
	}, 20*time.Second, 10*time.Millisecond, "the restart owns every partition, ready, the faulted table running")
	if tc.afterRestart != nil {
		tc.afterRestart(t, e, r2)
	}
	t.Logf("%s: %s, %d records re-read on restart", tc.name, time.Since(start).Round(time.Millisecond), want)
}

// requireNotPast checks that no partition's txn reached the offset its
// fault bounds it by.
func requireNotPast(t *testing.T, txns, faultAt map[cdctable.TopicPartition]int64) {
	t.Helper()
	for tp, at := range faultAt {
		if v, ok := txns[tp]; ok {
			require.Less(t, v, at, "%s applied past the fault", tp.AppID())
		}
	}
}

// consumeAll reads n records of topic from its start.
func consumeAll(t *testing.T, pl *pipeline, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(pl.brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		require.NoError(t, fs.Err())
		got = append(got, fs.Records()...)
	}
	require.Len(t, got, n)
	return got
}

// deadLetterOrders gives the faulted table the dead-letter policy, with a
// dead-letter topic per source topic; the healthy table keeps PolicyFail.
func deadLetterOrders(e *isoEnv, o *Options) {
	o.DeadLetterTopic = "{topic}.dlq"
	o.TablePolicies = map[string]Policy{e.fpath: PolicyDeadLetter}
}

// requireDeadLettered checks that the garbage record of size bytes went to
// the faulted table's dead-letter topic, without its value when dropped.
func requireDeadLettered(size int, dropped bool) func(t *testing.T, e *isoEnv, r *running) {
	return func(t *testing.T, e *isoEnv, r *running) {
		t.Helper()
		require.Equal(t, 1.0, metricWith(t, r.reg, "cdc2delta_events_dead_lettered_total", "table", e.fpath))
		got := consumeAll(t, e.pl, e.faulted.Topic()+".dlq", 1)[0]
		require.Equal(t, "garbage", string(got.Key), "the key is kept")
		require.Equal(t, e.faulted.Topic(), headerOf(got, HeaderTopic))
		require.NotEmpty(t, headerOf(got, HeaderError))
		if !dropped {
			require.Len(t, got.Value, size)
			require.Empty(t, headerOf(got, HeaderValueDropped))
			require.Zero(t, metricWith(t, r.reg, "cdc2delta_dead_letter_values_dropped_total", "table", e.fpath))
			return
		}
		require.Nil(t, got.Value, "the value is left out")
		require.Equal(t, strconv.Itoa(size), headerOf(got, HeaderValueDropped))
		require.Equal(t, 1.0, metricWith(t, r.reg, "cdc2delta_dead_letter_values_dropped_total", "table", e.fpath))
	}
}

// refuseLargeProduce makes the cluster refuse, as MESSAGE_TOO_LARGE, every
// produced batch larger than limit bytes, as a broker whose
// message.max.bytes is below a topic's max.message.bytes does.
func refuseLargeProduce(c *kfake.Cluster, limit int) {
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.ProduceRequest)
		large := false
		for _, rt := range r.Topics {
			for _, rp := range rt.Partitions {
				large = large || len(rp.Records) > limit
			}
		}
		if !large {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.MessageTooLarge.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// txnsIn returns tb's txn versions in store (a clone of a faulted store
// reads without its faults).
func txnsIn(t *testing.T, store deltalog.Store, tb *dbzgen.Table) map[cdctable.TopicPartition]int64 {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	out := map[cdctable.TopicPartition]int64{}
	for p := range int32(testPartitions) {
		tp := cdctable.TopicPartition{Topic: tb.Topic(), Partition: p}
		if v, ok := snap.TxnVersion(tp.AppID()); ok {
			out[tp] = v
		}
	}
	return out
}

// health is one look at the processor from outside: its status, /readyz
// and /metrics.
type health struct {
	st      Status
	code    int    // of /readyz
	ready   string // the /readyz body
	metrics string
	faulted TableState
}

func (e *isoEnv) look(t *testing.T, r *running, url string) health {
	t.Helper()
	h := health{st: r.p.Status()}
	h.code, h.ready = get(t, url+"/readyz")
	_, h.metrics = get(t, url+"/metrics")
	h.faulted = tableState(h.st, e.fpath)
	return h
}

// hasTableMetrics reports whether the /metrics body shows path in state.
func hasTableMetrics(body, path string, state TableState) bool {
	return metricLine(body, fmt.Sprintf(`cdc2delta_table_state{state=%q,table=%q} 1`, state, path))
}

// TestIsolationTransientStorageOutage: one table's store fails every call
// as unavailable for a while. That table retries (ready, /readyz saying
// so), then past the retry budget is reported stalled (not ready, named in
// /readyz and cdc2delta_table_state), while the other table keeps
// committing; when the store is back the table recovers by itself, in the
// same process, with nothing lost or applied twice.
func TestIsolationTransientStorageOutage(t *testing.T) {
	e := newIsoEnv(t, false, 1)
	pl := e.pl
	opts := e.options()
	opts.RetryBudget = time.Second
	r := pl.start(opts)
	srv := httptest.NewServer(r.p.Handler(r.reg))
	defer srv.Close()
	pl.produce(200)
	pl.waitCaughtUp()
	before := pl.txns(e.faulted)

	outage := e.mem().Inject(faultstore.Fault{Err: fmt.Errorf("injected outage: %w", deltalog.ErrUnavailable)})
	pl.produce(200)
	var h health
	require.Eventually(t, func() bool {
		h = e.look(t, r, srv.URL)
		return h.faulted == TableRetrying && h.code == http.StatusOK && hasTableMetrics(h.metrics, e.fpath, TableRetrying)
	}, 10*time.Second, 5*time.Millisecond, "the table retries within its budget, ready")
	require.Contains(t, h.ready, "table "+e.fpath+" retrying applying")

	require.Eventually(t, func() bool {
		h = e.look(t, r, srv.URL)
		return h.faulted == TableStalled && hasTableMetrics(h.metrics, e.fpath, TableStalled)
	}, 10*time.Second, 5*time.Millisecond, "past the budget the table is stalled")
	require.Equal(t, http.StatusServiceUnavailable, h.code)
	require.Contains(t, h.ready, "table "+e.fpath+" stalled: applying has failed for")
	require.Contains(t, h.ready, "injected outage")
	require.NotContains(t, h.ready, e.hpath)
	require.True(t, hasTableMetrics(h.metrics, e.hpath, TableRunning))
	require.Empty(t, h.st.Failed, "a transient failure stops nothing")
	require.Positive(t, metricWith(t, r.reg, "cdc2delta_retries_total", "table", e.fpath))
	require.Positive(t, metricWith(t, r.reg, "cdc2delta_table_retry_seconds", "table", e.fpath))

	// The other table keeps committing, also what is produced now.
	pl.produce(200)
	ends := pl.endOffsets(e.healthy.Topic())
	require.Eventually(t, func() bool { return pl.tableAt(e.healthy, ends) }, 20*time.Second, 20*time.Millisecond,
		"the healthy table reaches the end offsets")
	require.Equal(t, before, txnsIn(t, e.mem().Unwrap(), e.faulted), "nothing reached the faulted store")
	require.Equal(t, TableStalled, tableState(r.p.Status(), e.fpath))

	// The store is back: the table recovers by itself.
	outage.Remove()
	pl.waitCaughtUp()
	require.Eventually(t, func() bool {
		h = e.look(t, r, srv.URL)
		return h.faulted == TableRunning && h.code == http.StatusOK && hasTableMetrics(h.metrics, e.fpath, TableRunning)
	}, 10*time.Second, 10*time.Millisecond, "the table runs again")
	require.Zero(t, metricWith(t, r.reg, "cdc2delta_table_retry_seconds", "table", e.fpath))
	pl.requireModel()
	require.Equal(t, float64(pl.totalRecords()), metricSum(t, r.reg, "cdc2delta_events_consumed_total"), "every record read once")
	for _, tb := range pl.tables {
		require.Empty(t, walkLog(t, pl.store(tb)).txnRegressions, "a batch of %s applied twice", tablePath(tb))
	}
}

// TestIsolationRegistryOutage: the registry answers 503 for one table's
// schemas, then is down for all. The other table, whose schemas are cached,
// keeps committing; the waiting table is named in /readyz (not ready) and
// metrics, stops nothing, and catches up by itself once the registry is
// back.
func TestIsolationRegistryOutage(t *testing.T) {
	e := newIsoEnv(t, false, 1)
	pl := e.pl
	pl.produce(200) // registers the schemas
	e.refuseSchemas(e.faulted, http.StatusServiceUnavailable)
	opts := e.options()
	opts.RetryBudget = 500 * time.Millisecond
	r := pl.start(opts)
	srv := httptest.NewServer(r.p.Handler(r.reg))
	defer srv.Close()

	ends := pl.endOffsets(e.healthy.Topic())
	require.Eventually(t, func() bool { return pl.tableAt(e.healthy, ends) }, 20*time.Second, 20*time.Millisecond,
		"the healthy table commits while the other waits for its schemas")
	var h health
	waiting := func() bool {
		h = e.look(t, r, srv.URL)
		return h.code == http.StatusServiceUnavailable && slices.ContainsFunc(strings.Split(h.ready, "\n"), func(l string) bool {
			return strings.HasPrefix(l, "table "+e.fpath+" ") && strings.Contains(l, "waits for the schema registry")
		})
	}
	require.Eventually(t, waiting, 10*time.Second, 10*time.Millisecond, "/readyz names the waiting table")
	require.NotContains(t, h.ready, e.hpath)
	require.Empty(t, h.st.Failed)

	// The whole registry goes down: the healthy table's schemas are
	// cached, so it keeps committing what is produced now.
	pl.regDown.Store(true)
	pl.produce(200)
	ends = pl.endOffsets(e.healthy.Topic())
	require.Eventually(t, func() bool { return pl.tableAt(e.healthy, ends) }, 20*time.Second, 20*time.Millisecond,
		"the healthy table commits through a registry outage")
	stalled := func() bool {
		return waiting() && tableState(h.st, e.fpath) == TableStalled && hasTableMetrics(h.metrics, e.fpath, TableStalled)
	}
	if !assert.Eventually(t, stalled, 10*time.Second, 10*time.Millisecond) {
		t.Fatalf("past the budget the waiting table is stalled: %+v\n%s\n%s", h.st.Tables, h.ready, grepLines(h.metrics, e.fpath))
	}
	require.True(t, hasTableMetrics(h.metrics, e.hpath, TableRunning))
	require.Empty(t, pl.txns(e.faulted), "nothing of the waiting table is applied")
	require.Zero(t, metricSum(t, r.reg, "cdc2delta_bad_input_total"), "waiting is not bad input")

	pl.regDown.Store(false)
	e.refuseSchemas(e.faulted, 0)
	pl.waitCaughtUp()
	require.Eventually(t, func() bool { return r.p.Status().Ready() }, 10*time.Second, 10*time.Millisecond)
	pl.requireModel()
	require.Equal(t, float64(pl.totalRecords()), metricSum(t, r.reg, "cdc2delta_events_consumed_total"), "every record read once")
	for _, tb := range pl.tables {
		require.Empty(t, walkLog(t, pl.store(tb)).txnRegressions, "a batch of %s applied twice", tablePath(tb))
	}
}

// TestIsolationRegistryFrozen: the registry takes the requests for one
// table's schemas and never answers. Each decoding attempt ends at its
// deadline; the table's partitions wait, it is stalled past the budget,
// counted from when the registry stopped answering, and named in /readyz
// as waiting for the schema registry, while the other table goes on. Once
// the registry answers, it catches up with nothing lost or applied twice.
func TestIsolationRegistryFrozen(t *testing.T) {
	const budget = 500 * time.Millisecond
	e := newIsoEnv(t, false, 1)
	pl := e.pl
	pl.produce(200) // registers the schemas
	e.refuseSchemas(e.faulted, regFrozen)
	opts := e.options()
	opts.RetryBudget = budget
	start := time.Now()
	r := pl.start(opts)
	srv := httptest.NewServer(r.p.Handler(r.reg))
	defer srv.Close()

	var h health
	stalled := func() bool {
		h = e.look(t, r, srv.URL)
		return h.code == http.StatusServiceUnavailable && h.faulted == TableStalled &&
			slices.ContainsFunc(strings.Split(h.ready, "\n"), func(l string) bool {
				return strings.HasPrefix(l, "table "+e.fpath+" stalled: waits for the schema registry")
			})
	}
	if !assert.Eventually(t, stalled, decodeTimeout+budget+2*time.Second, 10*time.Millisecond) {
		t.Fatalf("not stalled %s after the start: %+v\n%s", time.Since(start).Round(time.Millisecond), h.st.Tables, h.ready)
	}
	require.Contains(t, h.ready, "deadline exceeded")
	// The other table goes on, and never waits for the frozen lookups.
	pl.produce(200)
	ends := pl.endOffsets(e.healthy.Topic())
	held := ""
	require.Eventually(t, func() bool {
		for _, ts := range r.p.Status().Tables {
			if ts.Table == e.hpath && ts.Registry && held == "" {
				held = fmt.Sprintf("%s %v", ts.State, ts.LastErr)
			}
		}
		return pl.tableAt(e.healthy, ends)
	}, 30*time.Second, 20*time.Millisecond, "the other table goes on")
	require.Empty(t, held, "the other table waited for the frozen registry")

	e.refuseSchemas(e.faulted, 0)
	pl.waitCaughtUp()
	require.Eventually(t, func() bool { return r.p.Status().Ready() }, 10*time.Second, 10*time.Millisecond)
	pl.requireModel()
	for _, tb := range pl.tables {
		require.Empty(t, walkLog(t, pl.store(tb)).txnRegressions, "a batch of %s applied twice", tablePath(tb))
	}
}
