package processor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TestHistoryTable runs the pipeline with a history table over a workload
// with a snapshot, deletes, primary-key changes in both of Debezium's forms,
// late updates of deleted keys, re-deliveries and multi-event
// transactions, through restarts and beside eager maintenance, and requires the history table to hold
// exactly the versions the reference model folds from every record of the
// topic, with its txn equal to the table's.
func TestHistoryTable(t *testing.T) {
	pl := newPipelineOf(t, dbzgen.WorkloadOptions{Seed: 9, Keys: 25, Snapshot: true, MaxTxEvents: 3, DeleteRatio: 0.15,
		KeyChangeRatio: 0.05, KeyUpdateRatio: 0.05, LateUpdate: 0.3, Redeliver: 0.05}, nil, "hist", dbzgen.Orders())
	tb := pl.tables[0]
	opts := pl.options("hist")
	// Maintenance compacts and checkpoints the history table beside its
	// commits, as eagerly as it can.
	opts.Maintenance = Maintenance{CompactAt: 2, Every: time.Millisecond, CheckpointCommits: 2,
		CheckpointInterval: time.Millisecond, PurgeRatio: 0.01}
	opts.Batch.Records = 15 // many commits
	sinkOpts := opts.Sink
	opts.PerTable = func(src route.TableSource) TableSettings {
		return TableSettings{Sink: sinkOpts, History: src.Path + "_history"}
	}
	histSnap := func() *deltalog.Snapshot {
		store, err := opts.OpenStore(t.Context(), tablePath(tb)+"_history")
		require.NoError(t, err)
		ht, err := deltalog.Open(t.Context(), store)
		require.NoError(t, err)
		snap, err := ht.Snapshot(t.Context())
		if err != nil {
			return nil
		}
		return snap
	}
	caughtUp := func() bool {
		snap := histSnap()
		if snap == nil || !pl.caughtUp() {
			return false
		}
		for tp, v := range pl.txns(tb) {
			if hv, ok := snap.TxnVersion(tp.AppID()); !ok || hv != v {
				return false
			}
		}
		return true
	}
	for i := range 3 {
		pl.produce(150)
		r := pl.start(opts)
		require.Eventually(t, caughtUp, 30*time.Second, 20*time.Millisecond, "round %d", i)
		r.close(t)
	}

	recs := pl.consumeAll(tb.Topic(), opts.Decoder)
	store, err := opts.OpenStore(t.Context(), tablePath(tb)+"_history")
	require.NoError(t, err)
	snap := histSnap()
	versions := requireHistory(t, recs, store, snap)
	t.Logf("%d records, %d versions; history table version %d, %d files; counts %+v",
		len(recs), versions, snap.Version(), len(snap.Files()), pl.w.Counts())
	requireShapes(t, pl.w.Counts())
	require.Equal(t, cdctable.ShapeHistory, histSnap().Metadata().Configuration[cdctable.PropShape])
}

// requireHistory requires the history table's snapshot snap in store to
// hold exactly the versions the reference model folds from recs, every
// record of the table's topic, and returns how many versions that is.
func requireHistory(t *testing.T, recs []cdcmodel.Record, store deltalog.Store, snap *deltalog.Snapshot) int {
	t.Helper()
	model := cdcmodel.NewHistory(nil)
	upTo := map[cdcmodel.TopicPartition]int64{}
	for _, r := range recs {
		model.Feed(r)
		upTo[r.TopicPartition] = max(upTo[r.TopicPartition], r.Offset)
	}
	require.True(t, model.Commit(upTo))
	got, err := cdcmodel.ReadSnapshot(t.Context(), store, snap, append(model.KeyColumns(), cdcmodel.ColStartPosition))
	require.NoError(t, err)
	cols := append(model.Columns(), cdcmodel.ColStartAt, cdcmodel.ColEndAt, cdcmodel.ColStartPosition, cdcmodel.ColEndPosition,
		cdcmodel.ColPosition, cdcmodel.ColCommitTime)
	require.Equal(t, cols, got.Columns)
	for _, r := range got.Rows {
		for c, x := range r {
			if tm, ok := x.(time.Time); ok {
				r[c] = tm.UnixMicro() // as the model renders time columns
			}
		}
	}
	want := model.Rows()
	require.Greater(t, len(want), 25, "versions")
	require.Equal(t, cdcmodel.RenderRows(want, cols), cdcmodel.RenderRows(got.Rows, cols))
	return len(want)
}

// requireShapes requires the workload to have sent each shape a history
// table must place: primary-key changes in both forms, late updates of
// deleted keys and re-deliveries.
func requireShapes(t *testing.T, c dbzgen.WorkloadCounts) {
	t.Helper()
	require.Positive(t, c.KeyUpdates, "key updates with Debezium's key headers")
	require.Greater(t, c.KeyChanges, c.KeyUpdates, "key changes as a delete and an insert")
	require.Positive(t, c.LateUpdates, "late updates of deleted keys")
	require.Positive(t, c.Redeliveries, "re-deliveries")
}
