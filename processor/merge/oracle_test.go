package merge_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// The oracle (ADR 0025): random workloads are applied by the Sink, in random
// micro-batches with crashes and failing stores, and every committed version
// (all columns, metadata columns, change data feed, txn versions) is
// compared with internal/harness/cdcmodel, which applies the same events one at a
// time in arrival order. After a failed batch the records are either
// applied again in the same batch or, as a restart, a rebalance or other
// batch caps re-read them from the txn versions on, cut at other
// boundaries together with the batches after them.

// oracleRegressions are seeds that failed once, with what they caught.
// They replay this generator's workloads: when it changes, they replay
// other workloads, and the unit tests in fold_test.go keep the cases.
var oracleRegressions = []struct {
	seed uint64
	what string
}{
	{41, "updates without their LOB after the row's full image in the same batch stored the LOB as NULL (no snapshot, two partitions)"},
	{42, "the same, with a column added mid-stream"},
	{49, "a truncate from one partition removed rows that later changes from another had written"},
	{65, "the same, over three partitions"},
	{79, "the model counted a column left NULL by an event that a truncate of the same batch removes (a fix in the model: no version holds it)"},
	{85, "the same"},
	{35, "a failed commit's delete tombstones counted: applied again in other batches, a version lacked a key inserted before the delete (ADR 0022)"},
	{80, "the same, at version 2"},
	{260, "the same, in the batch creating the table"},
	{453, "the oracle applied a truncate batch from before the table existed again as a replay, which it is not (a fix in the oracle)"},
}

func TestOracleRegressions(t *testing.T) {
	for _, tc := range oracleRegressions {
		t.Run(fmt.Sprintf("seed=%d", tc.seed), func(t *testing.T) { runOracle(t, tc.seed) })
	}
}

// TestOracle runs oracleIterations random workloads from fixed seeds, or
// CDC2DELTA_ORACLE_ITERATIONS from CDC2DELTA_ORACLE_SEED (default: a new
// seed each run, logged). The full tier (-tags integration) runs more.
func TestOracle(t *testing.T) {
	n, base := oracleIterations, uint64(1)
	if oracleLongTier {
		base = uint64(time.Now().UnixNano())
	}
	if v := os.Getenv("CDC2DELTA_ORACLE_ITERATIONS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err, "CDC2DELTA_ORACLE_ITERATIONS")
		base = uint64(time.Now().UnixNano())
	}
	if v := os.Getenv("CDC2DELTA_ORACLE_SEED"); v != "" {
		var err error
		base, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "CDC2DELTA_ORACLE_SEED")
	}
	t.Logf("%d workloads from seed %d", n, base)
	failed := 0
	for i := range uint64(n) {
		seed := base + i
		if !t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runOracle(t, seed) }) {
			if failed++; failed == 3 {
				return // enough to look at
			}
		}
	}
}

// oracleRun is one workload's state.
type oracleRun struct {
	t   testing.TB
	rng *rand.Rand
	// split draws the re-splits after failures and the faults aimed at
	// commits, apart from rng so that runs without them replay the
	// workloads of seeds kept from before.
	split *rand.Rand
	// tape hands out the decisions drawn from rng and split, or, when a
	// script replays (rng and split nil), the script's.
	tape    *tape
	script  *oracleScript // the run's input, saved when it fails
	hook    checkHook     // a test-only check on every version, nil but in the script's own test
	cfg     oracleConfig
	store   *faultstore.Store
	sink    *merge.Sink
	model   *cdcmodel.Model
	version int64 // the table's latest version, -1 before it exists
	txns    map[string]int64
	table   *deltalog.Table
	snap    *deltalog.Snapshot // the latest version read, nil before
	// tail is the sink's TailFileSize, by seed: off, the default, or so
	// small that tails fill and new ones start (absorb.go).
	tail int64
	// indexDir keeps half the seeds' key index on disk, flushed every
	// indexKeys changed keys (ADR 0034); "" keeps it in memory.
	indexDir  string
	indexKeys int
}

// checkHook is called with every version checked and its rows as
// rendered; an error fails the check.
type checkHook func(batch int, version int64, rows string) error

func runOracle(t testing.TB, seed uint64) { recordOracle(t, seed, recordOptions{}) }

// recordOptions are the script's own test's: a hook, where to save the
// script, whether to save it when the run passes too, and where to put its
// path (a failed run ends by runtime.Goexit, returning nothing).
type recordOptions struct {
	hook   checkHook
	dir    string
	always bool
	saved  *string
}

// recordOracle runs the workload of seed, saving it as a script when it
// fails.
func recordOracle(t testing.TB, seed uint64, o recordOptions) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	cfg := newOracleConfig(rng)
	t.Logf("seed %d: %+v", seed, cfg)
	src := history(rng, cfg)
	recs := deliver(rng, cfg, src.events)
	h := scriptHeader{Seed: seed, Soft: cfg.soft, CoW: cfg.cow, Partitioned: cfg.partitioned, Snapshot: cfg.snapshot,
		TargetFileSize: cfg.targetFileSize, CheckpointEvery: cfg.checkpointEvery, MaxBatch: cfg.maxBatch,
		Tail: []int64{-1, merge.DefaultTailFileSize, 4 << 10}[seed%3], IndexOnDisk: seed/3%2 == 1}
	if h.IndexOnDisk {
		h.IndexKeys = []int{1, 5, 40}[seed/6%3]
	}
	queue := batches(rng, cfg, recs)
	r := newOracleRun(t, h, &tape{t: t})
	r.cfg, r.rng, r.split, r.hook = cfg, rng, rand.New(rand.NewPCG(seed, 0x5b17)), o.hook
	r.script = &oracleScript{header: h, src: src, batches: queue}
	defer func() {
		if t.Failed() || o.always {
			path := r.saveScript(o.dir)
			if o.saved != nil {
				*o.saved = path
			}
		}
	}()
	r.play(queue, src)
}

func newOracleRun(t testing.TB, h scriptHeader, tp *tape) *oracleRun {
	r := &oracleRun{t: t, tape: tp, cfg: h.config(), store: faultstore.Wrap(memstore.New(memstore.Options{})), version: -1,
		model: cdcmodel.New(cdcmodel.Options{SoftDelete: h.Soft}), txns: map[string]int64{}, tail: h.Tail}
	if h.IndexOnDisk {
		r.indexDir, r.indexKeys = t.TempDir(), h.IndexKeys
	}
	t.Logf("tail file size %d, index on disk %v flushed every %d keys", r.tail, r.indexDir != "", r.indexKeys)
	r.sink = r.open()
	return r
}

// play applies the batches and checks every version, then the final rows
// against the source's.
func (r *oracleRun) play(queue [][]cdcmodel.Record, src *source) {
	t, cfg, tp := r.t, r.cfg, r.tape
	var done [][]cdcmodel.Record // the batches applied, in order
	unresolved := 0
	for i := 0; len(queue) > 0; i++ {
		b := queue[0]
		queue = queue[1:]
		n, again := r.step(i, b)
		unresolved += n
		if again {
			k := tp.intN(r.split, "resplit batches", min(3, len(queue)+1))
			cut := func(n int) int { return tp.intN(r.split, "resplit cut", n) }
			queue = append(resplit(cut, cfg, b, queue[:k]), queue[k:]...)
			continue
		}
		if len(done) > 0 && tp.intN(r.rng, "rewind", 8) == 0 {
			old := done[tp.intN(r.rng, "rewind batch", len(done))]
			if pass := tp.intN(r.rng, "rewind passes tombstones", 2) == 0; r.applied(old) {
				r.rewind(i, old, pass)
			}
		}
		done = append(done, b)
		if tp.chance(r.rng, "crash", cfg.crash) {
			r.sink = r.open()
		}
	}
	if cfg.snapshot && unresolved == 0 {
		r.checkSource(src)
	}
	if r.version >= 0 {
		rep, err := merge.VerifyTable(t.Context(), r.store, merge.VerifyOptions{IndexDir: r.indexDir})
		require.NoError(t, err)
		require.Empty(t, rep.Problems, "verify: %s", rep.Summary())
	}
	if r.indexDir != "" && r.version >= 0 {
		// The table's versions were checked; show that they came through
		// the runs.
		runs, err := filepath.Glob(filepath.Join(r.indexDir, "*.run"))
		require.NoError(t, err)
		manifests, err := filepath.Glob(filepath.Join(r.indexDir, "manifest-*"))
		require.NoError(t, err)
		if r.indexKeys == 1 && r.snap != nil && r.snap.NumFiles() > 0 {
			// A table that holds rows had keys after a commit, which a
			// flush every key wrote out. (One seed's table never held a
			// row: its only version created it.)
			require.NotEmpty(t, manifests, "the index on disk wrote no manifest")
		}
		writers := map[string]int{}
		for _, f := range runs {
			w, _, _ := strings.Cut(filepath.Base(f), "-")
			writers[w]++
		}
		t.Logf("index on disk: %d runs, %d manifests; runs by writer %v", len(runs), len(manifests), writers)
	}
}

// rewind applies a batch applied before again, which changes nothing.
func (r *oracleRun) rewind(i int, old []cdcmodel.Record, passTombstones bool) {
	t := r.t
	res, err := r.sink.Apply(t.Context(), engineBatch(old, passTombstones))
	require.NoError(t, err)
	require.False(t, res.Committed, "batch %d: a replay committed", i)
	for _, rec := range old {
		r.model.Feed(rec)
	}
	_, ok := r.model.Commit(upTo(old))
	require.False(t, ok, "batch %d: the model committed a replay", i)
}

// applied reports whether the table's txn versions cover every record of
// recs. A batch from before the table existed (no record with a schema
// yet, a truncate say) was not applied: its offsets were not recorded, so
// applying it again is no replay.
func (r *oracleRun) applied(recs []cdcmodel.Record) bool {
	for _, rec := range recs {
		id := cdctable.TopicPartition{Topic: rec.Topic, Partition: rec.Partition}.AppID()
		if v, ok := r.txns[id]; !ok || rec.Offset > v {
			return false
		}
	}
	return true
}

func (r *oracleRun) open() *merge.Sink {
	r.t.Helper()
	opts := merge.Options{Store: r.store, TableName: "t", Mode: merge.ModeDV, DeleteMode: merge.DeleteHard,
		EnableChangeDataFeed: true, TargetFileSize: r.cfg.targetFileSize, TailFileSize: r.tail,
		IndexDir: r.indexDir, IndexMemoryKeys: r.indexKeys,
		TableOptions: []deltalog.Option{deltalog.CheckpointInterval(r.cfg.checkpointEvery)}}
	if r.cfg.soft {
		opts.DeleteMode = merge.DeleteSoft
	}
	if r.cfg.cow {
		opts.Mode = merge.ModeCoW
	}
	if r.cfg.partitioned {
		opts.PartitionBy = []string{"grp"}
	}
	s, err := merge.Open(r.t.Context(), opts)
	require.NoError(r.t, err)
	return s
}

// step applies one batch, through injected failures, checks the version it
// committed against the model, and returns the model's unresolved count.
// After a failure it may give up on the batch (again): the caller then cuts
// its records anew with the batches after it (resplit). A failed attempt
// whose commit landed is checked as the batch's version even then.
func (r *oracleRun) step(i int, recs []cdcmodel.Record) (unresolved int, again bool) {
	t := r.t
	ctx := t.Context()
	tp := r.tape
	b := engineBatch(recs, tp.intN(r.rng, "pass tombstones", 2) == 0)
	var res merge.Result
	landed := false // a failed attempt's commit that reached the log
	for attempt := 0; ; attempt++ {
		var inj *faultstore.Injection
		if attempt == 0 && tp.chance(r.rng, "fault", r.cfg.fault) {
			f := faultstore.Fault{Ops: faultstore.OpWrite, Nth: 1 + tp.intN(r.rng, "fault write nth", 6), AfterWrite: tp.intN(r.rng, "fault after write", 2) == 0}
			if tp.intN(r.rng, "fault get", 4) == 0 {
				f = faultstore.Fault{Ops: faultstore.OpGet, Nth: 1 + tp.intN(r.rng, "fault get nth", 4)}
			}
			if tp.intN(r.split, "fault commit", 3) == 0 {
				// The commit itself fails, everything before it written.
				f = faultstore.Fault{Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/*.json", Nth: 1}
			}
			inj = r.store.Inject(f)
		}
		var err error
		res, err = r.sink.Apply(ctx, b)
		if inj != nil {
			inj.Remove()
		}
		if err == nil {
			break
		}
		require.ErrorIs(t, err, faultstore.ErrInjected, "batch %d", i)
		require.Zero(t, attempt, "batch %d: it failed without a fault", i)
		landed = landed || r.latest(ctx) > r.version
		if tp.intN(r.rng, "crash after failure", 2) == 0 {
			r.sink = r.open() // a crash; else the same Sink reloads
		}
		if tp.intN(r.split, "give up batch", 2) == 0 {
			again = true
			break
		}
	}
	if again && !landed {
		return 0, true // nothing committed; the records come again
	}
	for _, rec := range recs {
		r.model.Feed(rec)
	}
	want, ok := r.model.Commit(upTo(recs))
	v := r.latest(ctx)
	if !ok {
		require.Equal(t, r.version, v, "batch %d committed version %d, the model expected no commit", i, v)
		require.False(t, res.Committed)
		return 0, again
	}
	require.Equal(t, r.version+1, v, "batch %d: the model expected a commit", i)
	require.True(t, res.Committed || landed, "batch %d", i)
	r.version = v
	for tp, off := range upTo(recs) {
		id := cdctable.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}.AppID()
		r.txns[id] = max(r.txns[id], off)
	}
	r.check(i, want)
	if res.Committed && !landed {
		require.Equal(t, int64(want.Unresolved), res.UnavailableUnresolved, "batch %d: unresolved unavailable columns", i)
	}
	return want.Unresolved, again
}

// latest returns the table's latest version, read from the log: mostly
// by applying the new commits to the last snapshot read, one time in eight
// from scratch (the last checkpoint and the commits after it).
func (r *oracleRun) latest(ctx context.Context) int64 {
	var err error
	if r.table == nil {
		r.table, err = deltalog.Open(ctx, r.store)
		require.NoError(r.t, err)
	}
	if r.snap == nil || r.tape.intN(r.rng, "read from scratch", 8) == 0 {
		r.snap, err = r.table.Snapshot(ctx)
	} else {
		r.snap, err = r.table.Update(ctx, r.snap)
	}
	if errors.Is(err, deltalog.ErrNotExist) {
		r.snap = nil
		return -1
	}
	require.NoError(r.t, err)
	return r.snap.Version()
}

// check compares the table's latest version with the model.
func (r *oracleRun) check(i int, want cdcmodel.Commit) {
	t := r.t
	require.Equal(t, r.version, r.snap.Version())
	got, err := cdcmodel.ReadSnapshot(t.Context(), r.store, r.snap, r.model.KeyColumns())
	require.NoError(t, err)
	cols := r.model.Columns()
	require.Equal(t, cols, got.Columns, "batch %d version %d: columns", i, r.version)
	rows := cdcmodel.RenderRows(got.Rows, cols)
	require.Equal(t, cdcmodel.RenderRows(r.model.Rows(), cols), rows, "batch %d version %d: rows", i, r.version)
	require.Equal(t, cdcmodel.RenderChanges(want.Changes, cols), cdcmodel.RenderChanges(got.Changes, cols), "batch %d version %d: change data feed", i, r.version)
	require.Equal(t, r.txns, got.Txns, "batch %d version %d: txn versions", i, r.version)
	if r.hook != nil {
		require.NoError(t, r.hook(i, r.version, fmt.Sprint(rows)), "batch %d version %d: hook", i, r.version)
	}
}

// checkSource compares the model's final rows (live ones) with the source's:
// with a snapshot to start from and no unresolved column, the two agree.
func (r *oracleRun) checkSource(src *source) {
	want := map[string]cdcmodel.Row{}
	for id, row := range src.rows {
		out := cdcmodel.Row{}
		for k, v := range row {
			out[k] = v
		}
		want[cdcmodel.RowKey(cdcmodel.Row{"id": id}, []string{"id"})] = out
	}
	got := map[string]cdcmodel.Row{}
	for k, row := range r.model.Rows() {
		if row[cdcmodel.ColDeleted] == true {
			continue
		}
		out := cdcmodel.Row{}
		for _, c := range src.layout.Columns {
			out[c.Name] = row[c.Name]
		}
		got[k] = out
	}
	require.Equal(r.t, want, got, "the model's final rows are not the source's")
}
