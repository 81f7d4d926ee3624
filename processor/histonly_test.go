package processor

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TestHistoryOnlyTable runs the pipeline with history: only (ADR 0046): the
// table's only Delta table is its history table, at the table's own path.
// Through a clean restart, a crash whose commit landed but whose
// acknowledgement was lost (the restart finds the table ahead of the group
// offsets), another restart and eager maintenance, the table must hold
// exactly the versions the reference model folds from every record of the
// topic; every commit carries the txn and the progress the control table
// reads; no current-state table and no second history table is written.
func TestHistoryOnlyTable(t *testing.T) {
	pl := newPipelineOf(t, dbzgen.WorkloadOptions{Seed: 11, Keys: 25, Snapshot: true, MaxTxEvents: 3, DeleteRatio: 0.15,
		KeyChangeRatio: 0.05, KeyUpdateRatio: 0.05, LateUpdate: 0.3, Redeliver: 0.1}, nil, "histonly", dbzgen.Orders())
	pl.mem = map[string]memTable{}
	tb := pl.tables[0]
	path := tablePath(tb)
	const group = "histonly"
	opts := pl.options(group)
	opts.Maintenance = Maintenance{CompactAt: 2, Every: time.Millisecond, CheckpointCommits: 2,
		CheckpointInterval: time.Millisecond, PurgeRatio: 0.01}
	opts.Batch.Records = 15 // many commits
	sinkOpts := opts.Sink
	opts.PerTable = func(src route.TableSource) TableSettings {
		return TableSettings{Sink: sinkOpts, HistoryOnly: true}
	}
	snapshot := func() *deltalog.Snapshot {
		tbl, err := deltalog.Open(t.Context(), pl.store(tb))
		require.NoError(t, err)
		snap, err := tbl.Snapshot(t.Context())
		if err != nil {
			return nil
		}
		return snap
	}

	// A clean start and stop.
	pl.produce(150)
	r := pl.start(opts)
	pl.waitCaughtUp()
	r.close(t)
	require.Equal(t, cdctable.ShapeHistory, snapshot().Metadata().Configuration[cdctable.PropShape])

	// A crash: the next commit of the table lands, its acknowledgement is
	// lost, and the process dies there.
	crashed := make(chan crashState, 1)
	pl.memStore(path).Inject(faultstore.Fault{
		Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/*.json", Nth: 1, AfterWrite: true,
		Err:  fmt.Errorf("%w: injected", deltalog.ErrUnavailable),
		Then: func() { crashed <- pl.capture(group) },
	})
	r = pl.start(opts)
	pl.produce(150)
	var crash crashState
	select {
	case crash = <-crashed:
	case <-time.After(30 * time.Second):
		t.Fatal("no commit reached the table's log")
	}
	r.close(t)
	// The crash left the table ahead of the group's offsets: the restart
	// reads again what the table holds, and must not apply it twice.
	ctbl, err := deltalog.Open(t.Context(), crash.stores[path])
	require.NoError(t, err)
	csnap, err := ctbl.Snapshot(t.Context())
	require.NoError(t, err)
	ahead := 0
	for p := range int32(testPartitions) {
		v, ok := csnap.TxnVersion(cdctable.TopicPartition{Topic: tb.Topic(), Partition: p}.AppID())
		if o, found := crash.group.Lookup(tb.Topic(), p); ok && found && o.At < v+1 {
			ahead++
		}
	}
	require.Positive(t, ahead, "the crashed commit's partitions are ahead of the group offsets")
	pl.restore(group, crash)

	// Restart on what the crash left, then once more.
	for range 2 {
		pl.produce(100)
		r = pl.start(opts)
		pl.waitCaughtUp()
		require.Positive(t, metricWith(t, r.reg, "cdc2delta_events_applied_total", "table", path), "applied events are counted")
		r.close(t)
	}

	recs := pl.consumeAll(tb.Topic(), opts.Decoder)
	snap := snapshot()
	versions := requireHistory(t, recs, pl.store(tb), snap)
	t.Logf("%d records, %d versions; table version %d, %d files; %d partitions ahead at the crash; counts %+v",
		len(recs), versions, snap.Version(), len(snap.Files()), ahead, pl.w.Counts())
	requireShapes(t, pl.w.Counts())

	// Every commit's txn moves forward, and every commit that applied
	// events records the progress the control table reads.
	w := walkLog(t, pl.store(tb))
	require.Empty(t, w.txnRegressions)
	tbl, err := deltalog.Open(t.Context(), pl.store(tb))
	require.NoError(t, err)
	withProgress := 0
	for v := int64(0); v <= snap.Version(); v++ {
		ci, err := tbl.CommitInfo(t.Context(), v)
		require.NoError(t, err)
		if ci.Operation != deltalog.OpMerge {
			continue
		}
		_, ok, err := cdctable.ReadProgress(ci)
		require.NoError(t, err)
		require.True(t, ok, "version %d records its progress", v)
		withProgress++
	}
	require.Positive(t, withProgress)
	pl.memMu.Lock()
	for p := range pl.mem {
		require.Equal(t, path, p, "the only Delta table is the history table at the table's path")
	}
	pl.memMu.Unlock()
}
