package processor

import (
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TestMaintenanceBoundsTables runs tables through many small commits with
// maintenance on: it compacts them whenever their debt reaches CompactAt,
// so their debt ends below it although the commits alone left several
// times as much, and it checkpoints on its own cadence (here only every
// CheckpointMaxCommits versions) instead of every 10 commits. The tables
// equal the model throughout (TestProcessorOracle checks every version).
func TestMaintenanceBoundsTables(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 41, Keys: 60, Snapshot: true})
	opts := pl.options("maintain")
	opts.Batch.Records = 6 // many small commits
	const compactAt, maxCommits = 4, 20
	opts.Maintenance = Maintenance{CompactAt: compactAt, Every: time.Millisecond,
		CheckpointCommits: 5, CheckpointInterval: time.Hour, CheckpointMaxCommits: maxCommits,
		TailFileSize: -1} // every commit adds a file, for compaction to pack
	sinkOpts := opts.Sink
	opts.PerTable = func(src route.TableSource) TableSettings { // and every table keeps a change log
		return TableSettings{Sink: sinkOpts, ChangeLog: src.Path + "_changes"}
	}
	r := pl.start(opts)
	for range 6 {
		pl.produce(120)
		pl.waitCaughtUp()
	}
	target := int64(datafile.DefaultTargetFileSize)
	var paths []string
	for _, tb := range pl.tables {
		paths = append(paths, tablePath(tb), tablePath(tb)+"_changes")
	}
	open := func(path string) (deltalog.Store, *deltalog.Table) {
		store, err := opts.OpenStore(t.Context(), path)
		require.NoError(t, err)
		tbl, err := deltalog.Open(t.Context(), store)
		require.NoError(t, err)
		return store, tbl
	}
	for _, path := range paths {
		_, tbl := open(path)
		require.Eventually(t, func() bool {
			snap, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			return tableops.Debt(snap, tableops.OptimizeOptions{TargetSize: target, PurgeRatio: 0.1}) < compactAt
		}, 30*time.Second, 20*time.Millisecond, "%s: maintenance brings the debt below compact_at", path)
	}
	// Stopped, the maintainer commits no more compactions, so the log and
	// its metrics are final and can be compared.
	r.close(t)
	for _, path := range paths {
		store, tbl := open(path)
		snap, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		batches, optimized := 0, 0
		for v := int64(0); v <= snap.Version(); v++ {
			ci, err := tbl.CommitInfo(t.Context(), v)
			require.NoError(t, err)
			switch ci.Operation {
			case deltalog.OpOptimize:
				optimized++
			case deltalog.OpMerge, deltalog.OpWrite, deltalog.OpStreamingUpdate:
				batches++
			}
		}
		t.Logf("%s: %d versions: %d batches, %d compactions; %d live files", path, snap.Version()+1, batches, optimized, snap.NumFiles())
		require.Greater(t, batches, 4*compactAt, "the commits alone leave a debt far above compact_at")
		require.Positive(t, optimized)
		require.Equal(t, float64(optimized), maintenanceRuns(t, r.reg, path, "ok"))

		// A change log's compacted files keep its delta encodings; a
		// table's files keep the default ones.
		isLog := strings.HasSuffix(path, "_changes")
		for _, add := range snap.Files() {
			require.Equal(t, isLog, usesDeltaEncoding(t, store, add.Path), "%s: file %s", path, add.Path)
		}

		ckpts := checkpointVersions(t, store)
		require.NotEmpty(t, ckpts, "%s: maintenance checkpoints", path)
		prev := int64(-1)
		for _, v := range ckpts {
			require.GreaterOrEqual(t, v-prev, int64(maxCommits), "%s: checkpoints %v follow the cadence, not every 10 commits", path, ckpts)
			prev = v
		}
	}
	pl.requireModel()
	for _, tb := range pl.tables {
		checkChangeLog(t, pl, tb, pl.consumeAll(tb.Topic(), opts.Decoder))
	}
}

// usesDeltaEncoding reports whether any column of the data file at path
// (a Delta add path) is DELTA_BINARY_PACKED or DELTA_BYTE_ARRAY.
func usesDeltaEncoding(t *testing.T, store deltalog.Store, path string) bool {
	t.Helper()
	key, err := url.PathUnescape(path)
	require.NoError(t, err)
	rc, err := store.Get(t.Context(), key)
	require.NoError(t, err)
	data, err := io.ReadAll(rc)
	require.NoError(t, errors.Join(err, rc.Close()))
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if slices.Contains(c.MetaData.Encoding, format.DeltaBinaryPacked) || slices.Contains(c.MetaData.Encoding, format.DeltaByteArray) {
				return true
			}
		}
	}
	return false
}

// checkpointVersions lists the versions the table has checkpoints of.
func checkpointVersions(t *testing.T, store deltalog.Store) []int64 {
	t.Helper()
	var out []int64
	for o, err := range store.List(t.Context(), "_delta_log/", "") {
		require.NoError(t, err)
		name := strings.TrimPrefix(o.Path, "_delta_log/")
		if base, ok := strings.CutSuffix(name, ".checkpoint.parquet"); ok {
			v, err := strconv.ParseInt(base, 10, 64)
			require.NoError(t, err)
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// everyPartition is the partitions snap holds offsets of: a sole writer's.
func everyPartition(snap *deltalog.Snapshot) []cdctable.TopicPartition {
	var out []cdctable.TopicPartition
	for id := range snap.Txns() {
		if tp, ok := cdctable.ParseAppID(id); ok {
			out = append(out, tp)
		}
	}
	return out
}

// TestCompactionMeetsCommits plans a compaction on a snapshot that the
// table's own commits have since overtaken, deleting rows in the very files
// it compacts and removing some: a compaction that dropped those deletes
// would resurrect rows. It lands on its first plan, carried past the
// deletes; when a commit also changed the table's metadata it gives way,
// plans again from the new snapshot and lands. The table then equals the
// model.
func TestCompactionMeetsCommits(t *testing.T) {
	for _, tc := range []struct {
		name      string
		alter     bool
		conflicts float64
	}{
		{name: "carried past deletes"},
		{name: "gives way to a metadata change", alter: true, conflicts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := newStaleCompaction(t, 43, func(s deltalog.Store) deltalog.Store { return s })
			pl, sink, stale, m, u, reg, tbl := sc.pl, sc.sink, sc.stale, sc.m, sc.u, sc.reg, sc.tbl
			before, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			require.Greater(t, before.Version(), stale.Version())
			requireTouched(t, stale, before)
			if tc.alter {
				meta := before.Metadata()
				meta.Description = "altered while a compaction ran"
				_, err := tbl.Commit(t.Context(), before, []deltalog.Action{{Metadata: &meta}}, deltalog.Operation{Name: deltalog.OpSetTblProps})
				require.NoError(t, err)
				before, err = tbl.Snapshot(t.Context())
				require.NoError(t, err)
			}

			snap, err := m.compact(t.Context(), u, 0, sink, tbl, stale, everyPartition(stale))
			require.NoError(t, err)
			require.Equal(t, tc.conflicts, maintenanceRuns(t, reg, u.path, "conflict"))
			require.Equal(t, 1.0, maintenanceRuns(t, reg, u.path, "ok"), "the compaction landed")
			require.Equal(t, before.Version()+1, snap.Version())
			ci, err := tbl.CommitInfo(t.Context(), snap.Version())
			require.NoError(t, err)
			require.Equal(t, deltalog.OpOptimize, ci.Operation)
			pl.requireModel()

			// The sink, told it is behind, catches up before its next batch
			// instead of losing the race. The compaction's tags say where
			// its rows came from, so the sink follows them without reading
			// the compacted files (a read of them fails); a metadata change
			// rebuilds its index anyway.
			require.True(t, sink.Snapshot().Version() < snap.Version())
			var faults []*faultstore.Injection
			if !tc.alter {
				was := map[string]bool{}
				for _, f := range before.Files() {
					was[f.Path] = true
				}
				for _, f := range snap.Files() {
					if !was[f.Path] {
						faults = append(faults, sc.sinkStore.Inject(faultstore.Fault{Ops: faultstore.OpGet, Pattern: f.Path}))
					}
				}
				require.NotEmpty(t, faults, "the compaction added files")
			}
			res, err := sink.Apply(t.Context(), merge.Batch{})
			require.NoError(t, err)
			require.Zero(t, res.Retries)
			require.Equal(t, snap.Version(), sink.Snapshot().Version())
			for _, f := range faults {
				require.Zero(t, f.Fired(), "the sink read a compacted file")
				f.Remove()
			}
		})
	}
}

// requireTouched requires that commits from stale to cur removed files of
// stale or gave them new deletion vectors, and both: the race a stale
// compaction must not lose rows to.
func requireTouched(t *testing.T, stale, cur *deltalog.Snapshot) {
	t.Helper()
	now := map[string]string{}
	for _, f := range cur.Files() {
		now[f.Path] = ""
		if f.DeletionVector != nil {
			now[f.Path] = f.DeletionVector.UniqueID()
		}
	}
	var removed, deleted int
	for _, f := range stale.Files() {
		dv, ok := now[f.Path]
		switch {
		case !ok:
			removed++
		case f.DeletionVector == nil && dv != "" || f.DeletionVector != nil && dv != f.DeletionVector.UniqueID():
			deleted++
		}
	}
	require.Positive(t, removed, "files of the stale plan removed")
	require.Positive(t, deleted, "files of the stale plan given new deletion vectors")
}

// staleCompaction is a table whose own commits overtook the snapshot stale
// that a compaction is about to plan on, with the maintainer to run it;
// tbl reads the table through wrap(store).
type staleCompaction struct {
	pl   *pipeline
	sink *merge.Sink
	// sinkStore is the sink's store.
	sinkStore *faultstore.Store
	stale     *deltalog.Snapshot
	m         *maintainer
	u         *upkeep
	reg       *prometheus.Registry
	tbl       *deltalog.Table
}

func newStaleCompaction(t *testing.T, seed uint64, wrap func(deltalog.Store) deltalog.Store) staleCompaction {
	t.Helper()
	pl := newPipelineOf(t, dbzgen.WorkloadOptions{Seed: seed, Keys: 40, Snapshot: true, DeleteRatio: 0.2}, nil, "race", dbzgen.Orders())
	tb := pl.tables[0]
	opts := pl.options("race")
	opts.Batch.Records = 5
	opts.Maintenance.Disabled = true
	run := func(n int) {
		pl.produce(n)
		r := pl.start(opts)
		pl.waitCaughtUp()
		r.close(t)
	}
	run(200)
	sinkStore := faultstore.Wrap(pl.store(tb))
	sink, err := merge.Open(t.Context(), merge.Options{Store: sinkStore, TableName: tablePath(tb)})
	require.NoError(t, err)
	stale := sink.Snapshot()
	run(100) // updates and deletes hit the files stale holds

	p := &Processor{opts: opts, log: testLogger(), now: time.Now}
	reg := prometheus.NewRegistry()
	p.m, err = newMetrics(reg)
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), wrap(pl.store(tb)), deltalog.DisableCheckpoints())
	require.NoError(t, err)
	return staleCompaction{
		pl: pl, sink: sink, sinkStore: sinkStore, stale: stale, reg: reg, tbl: tbl,
		m: &maintainer{p: p, o: Maintenance{CompactAt: 1}.withDefaults(), movedRows: 1},
		u: &upkeep{path: tablePath(tb), ckptVersion: -2, failing: map[string]*failure{}},
	}
}

// unlistableAfterCommit fails every listing once a commit was tried, as a
// shutdown or an outage that starts between a lost race (whose winners
// are read by name) and the re-read of the log would.
type unlistableAfterCommit struct {
	deltalog.Store
	tried *atomic.Bool
}

func (s unlistableAfterCommit) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	s.tried.Store(true)
	return s.Store.PutIfAbsent(ctx, p, data)
}

func (s unlistableAfterCommit) List(ctx context.Context, prefix, startAfter string) iter.Seq2[deltalog.ObjectInfo, error] {
	if s.tried.Load() {
		return func(yield func(deltalog.ObjectInfo, error) bool) {
			yield(deltalog.ObjectInfo{}, errors.New("store unlistable (test)"))
		}
	}
	return s.Store.List(ctx, prefix, startAfter)
}

// TestCompactionLostRaceThenUnreadable loses the compaction's race and
// then cannot re-read the log (CI once saw this at shutdown, where the
// re-read's context was cancelled). The compaction fails with the read's
// error and still returns the snapshot it had, which the checkpoint that
// follows uses: a nil snapshot there was a panic.
func TestCompactionLostRaceThenUnreadable(t *testing.T) {
	var tried atomic.Bool
	sc := newStaleCompaction(t, 44, func(s deltalog.Store) deltalog.Store { return unlistableAfterCommit{s, &tried} })
	snap, err := sc.m.compact(t.Context(), sc.u, 0, sc.sink, sc.tbl, sc.stale, everyPartition(sc.stale))
	require.ErrorContains(t, err, "store unlistable (test)")
	require.True(t, tried.Load(), "the compaction tried to commit")
	require.Equal(t, 1.0, maintenanceRuns(t, sc.reg, sc.u.path, "conflict"), "the stale plan lost")
	require.Same(t, sc.stale, snap)
	require.NotPanics(t, func() { _ = sc.m.checkpoint(t.Context(), sc.u, sc.tbl, snap) })
	sc.pl.requireModel()
}

// maintenanceRuns is cdc2delta_maintenance_total of a table's compactions
// with result.
func maintenanceRuns(t *testing.T, reg *prometheus.Registry, table, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "cdc2delta_maintenance_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["table"] == table && labels["kind"] == upkeepCompact && labels["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// refusingCheckpoints fails every checkpoint write, as a full disk or a
// bucket policy that refuses the checkpoint prefix would.
type refusingCheckpoints struct{ deltalog.Store }

func (s refusingCheckpoints) Put(ctx context.Context, p string, data []byte) error {
	if strings.HasSuffix(p, ".checkpoint.parquet") {
		return errors.New("checkpoint refused (test)")
	}
	return s.Store.Put(ctx, p, data)
}

// TestMaintenanceFailureStaysInMaintenance refuses every checkpoint: the
// failure is counted and logged by kind and backs off, while the tables
// keep ingesting to the end offsets and compaction goes on.
func TestMaintenanceFailureStaysInMaintenance(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 47, Keys: 60, Snapshot: true})
	pl.mem = map[string]memTable{}
	opts := pl.options("refuse")
	opts.OpenStore = func(_ context.Context, path string) (deltalog.Store, error) {
		return refusingCheckpoints{pl.memStore(path)}, nil
	}
	opts.Batch.Records = 6
	opts.Maintenance = Maintenance{CompactAt: 4, Every: time.Millisecond, CheckpointCommits: 2,
		CheckpointInterval: time.Millisecond, TailFileSize: -1}
	var logs lockedBuffer
	reg := prometheus.NewRegistry()
	p, err := New(opts, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))), WithRegisterer(reg))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	for range 4 {
		pl.produce(120)
		pl.waitCaughtUp()
	}
	// Compaction goes on after the checkpoints failed: the debt the last
	// commits left falls below compact_at, where 30-odd commits would leave
	// far more.
	for _, tb := range pl.tables {
		tbl, err := deltalog.Open(t.Context(), pl.store(tb))
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			snap, err := tbl.Snapshot(t.Context())
			return err == nil && snap.Version() > 25 &&
				tableops.Debt(snap, tableops.OptimizeOptions{TargetSize: datafile.DefaultTargetFileSize, PurgeRatio: 0.1}) < 4
		}, 30*time.Second, 20*time.Millisecond, "%s: compaction went on after checkpoints failed", tb.Def().Name)
	}
	cancel()
	require.NoError(t, <-done)
	require.NoError(t, p.Close())
	pl.requireModel()
	for _, tb := range pl.tables {
		table := tablePath(tb)
		require.Empty(t, checkpointVersions(t, pl.store(tb)), "%s: every checkpoint was refused", table)
		require.Equal(t, 1.0, metricWith(t, reg, "cdc2delta_table_maintenance_failures", "table", table),
			"%s: one failure, then it backs off for a minute", table)
	}
	require.Contains(t, logs.String(), "kind=checkpoint")
	require.Contains(t, logs.String(), "checkpoint refused (test)")
	require.Regexp(t, `failures=1 retry_in=([0-9]+m)?[0-9]+s`, logs.String(), "it backs off (a minute, with jitter)")
}

// TestMaintenanceVacuums sets VacuumInterval on tables whose retention is
// one second: compaction removes files, VACUUM (START and END commits)
// deletes them once they are older than the retention, and every file left
// on storage is live or still within it. The tables equal the model.
func TestMaintenanceVacuums(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 53, Keys: 60, Snapshot: true})
	opts := pl.options("vacuum")
	opts.Batch.Records = 6
	opts.Sink.Properties = map[string]string{"delta.deletedFileRetentionDuration": "interval 1 seconds"}
	opts.Maintenance = Maintenance{CompactAt: 3, Every: time.Millisecond, VacuumInterval: time.Millisecond, TailFileSize: -1}
	r := pl.start(opts)
	for range 3 {
		pl.produce(120)
		pl.waitCaughtUp()
	}
	// stale counts a table's removed data files older than the retention
	// (with a margin) that are still stored, its VACUUM END commits and its
	// OPTIMIZE commits (which remove files; their tombstones may already be
	// past the one-second retention and gone from the checkpoint).
	stale := func(tb *dbzgen.Table) (stale, vacuums, optimizes int) {
		store := pl.store(tb)
		tbl, err := deltalog.Open(t.Context(), store)
		require.NoError(t, err)
		snap, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		for v := int64(0); v <= snap.Version(); v++ {
			ci, err := tbl.CommitInfo(t.Context(), v)
			require.NoError(t, err)
			switch ci.Operation {
			case deltalog.OpVacuumEnd:
				vacuums++
			case deltalog.OpOptimize:
				optimizes++
			}
		}
		live := map[string]bool{}
		for _, f := range snap.Files() {
			live[f.Path] = true
		}
		young := map[string]bool{}
		for _, rm := range snap.Tombstones() {
			if rm.DeletionTimestamp != nil && time.Since(time.UnixMilli(*rm.DeletionTimestamp)) < 3*time.Second {
				young[rm.Path] = true
			}
		}
		for o, err := range store.List(t.Context(), "", "") {
			require.NoError(t, err)
			if strings.HasSuffix(o.Path, ".parquet") && !strings.HasPrefix(o.Path, "_delta_log/") && !live[o.Path] && !young[o.Path] {
				stale++
			}
		}
		return stale, vacuums, optimizes
	}
	before := 0
	for _, tb := range pl.tables {
		n, _, optimizes := stale(tb)
		before += n
		require.Positive(t, optimizes, "%s: compaction removed files", tb.Def().Name)
	}
	// Commits make the maintainer look at the tables again, and VACUUM them once the
	// removed files are past the retention. A few commits a second: each one
	// may compact and remove files, and a tighter loop under the race
	// detector keeps some always in flight.
	var poked time.Time
	require.Eventually(t, func() bool {
		if time.Since(poked) > time.Second {
			pl.produce(10)
			pl.waitCaughtUp()
			poked = time.Now()
		}
		for _, tb := range pl.tables {
			if n, vacuums, _ := stale(tb); n > 0 || vacuums == 0 {
				return false
			}
		}
		return true
	}, 90*time.Second, 50*time.Millisecond, "removed data files older than the retention are deleted")
	r.close(t)
	pl.requireModel()
	t.Logf("%d files no version references (orphans of lost races) were kept within the retention, then deleted", before)
}

// TestCheckpointCadenceFollowsState: a table with few tombstones is
// checkpointed after CheckpointCommits versions; one with 3,000 after 30
// (one per checkpointRowsPerCommit rows), so its checkpoints cost no more
// per commit.
func TestCheckpointCadenceFollowsState(t *testing.T) {
	for _, tc := range []struct {
		tombstones int
		due        int64
	}{{500, 10}, {3000, 30}} {
		t.Run(strconv.Itoa(tc.tombstones), func(t *testing.T) {
			ctx := t.Context()
			tbl, err := deltalog.Open(ctx, memstore.New(memstore.Options{}), deltalog.DisableCheckpoints())
			require.NoError(t, err)
			schema := &deltalog.StructType{Fields: []deltalog.StructField{{Name: "id", Type: deltalog.TypeLong}}}
			ss, err := schema.SchemaString()
			require.NoError(t, err)
			proto := deltalog.MinimalProtocol(schema, nil)
			res, err := tbl.Commit(ctx, nil, []deltalog.Action{{Protocol: &proto}, {Metadata: &deltalog.Metadata{
				ID: "cadence", Format: deltalog.Format{Provider: "parquet"}, SchemaString: ss, Configuration: map[string]string{},
			}}}, deltalog.Operation{Name: deltalog.OpCreateTable})
			require.NoError(t, err)
			var removes []deltalog.Action
			for i := range tc.tombstones {
				removes = append(removes, deltalog.Action{Remove: &deltalog.Remove{Path: "gone-" + strconv.Itoa(i) + ".parquet", DataChange: true}})
			}
			res, err = tbl.Commit(ctx, res.Snapshot, removes, deltalog.Operation{Name: deltalog.OpDelete})
			require.NoError(t, err)
			snap := res.Snapshot
			require.Equal(t, tc.tombstones, snap.NumTombstones())

			p := &Processor{log: testLogger(), now: time.Now}
			p.m, err = newMetrics(prometheus.NewRegistry())
			require.NoError(t, err)
			m := &maintainer{p: p, o: Maintenance{CheckpointInterval: time.Nanosecond}.withDefaults()}
			u := &upkeep{path: "cadence", ckptVersion: -2, failing: map[string]*failure{}}
			require.NoError(t, m.checkpoint(ctx, u, tbl, snap))
			require.EqualValues(t, -1, u.ckptVersion, "no checkpoint yet: the table has none")
			for v := snap.Version() + 1; ; v++ {
				res, err := tbl.Commit(ctx, snap, []deltalog.Action{{Txn: &deltalog.Txn{AppID: "a", Version: v}}}, deltalog.Operation{Name: deltalog.OpWrite})
				require.NoError(t, err)
				snap = res.Snapshot
				require.NoError(t, m.checkpoint(ctx, u, tbl, snap))
				if u.ckptVersion >= 0 {
					require.Equal(t, tc.due, u.ckptVersion+1, "versions since none (-1) when due")
					break
				}
				require.Less(t, v, int64(200))
			}
			last, err := tbl.LastCheckpointVersion(ctx)
			require.NoError(t, err)
			require.Equal(t, u.ckptVersion, last)
		})
	}
}
