package processor

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// TestProcessorOracle runs the whole pipeline (Kafka, decoding, per-table
// batches under random hard caps, MERGE) on a workload whose updates leave
// unchanged LOBs as Debezium's placeholder, with primary-key changes in both
// of Debezium's forms, late updates of deleted keys and re-deliveries, with the processor stopped
// abruptly at random points and restarted, and compares every committed
// version of the table, rows and change feed, with the reference model fed
// the same records: each version must equal the model applied up to that
// version's txn offsets.
func TestProcessorOracle(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4}
	if n := oracleSeeds(); n > 0 {
		seeds = nil
		for i := range uint64(n) {
			seeds = append(seeds, uint64(time.Now().UnixNano())+i)
		}
	}
	compactions := 0
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x0ac1e))
			pl := newPipelineOf(t, dbzgen.WorkloadOptions{
				Seed: seed, Keys: 50, Snapshot: true, Placeholders: 0.7, DeleteRatio: 0.1, KeyChangeRatio: 0.05,
				KeyUpdateRatio: 0.03, LateUpdate: 0.2, MaxTxEvents: 3, Redeliver: 0.1, RedeliverWindow: 100,
			}, nil, "oracle", dbzgen.Tickets())
			opts := pl.options("oracle")
			opts.Sink.EnableChangeDataFeed = true
			opts.Batch = BatchLimits{Records: 1 + rng.IntN(80), Bytes: int64(4<<10 + rng.IntN(64<<10)), Age: 20 * time.Millisecond}
			opts.ShutdownTimeout = time.Nanosecond // a stop abandons what is in flight, as a crash would
			// The commit budget (ADR 0030) only moves when batches commit:
			// its own generator leaves the caps and rounds as they were.
			brng := rand.New(rand.NewPCG(seed, 0xb0d6e7))
			opts.Batch.MinRecords = 1 + brng.IntN(100)
			opts.Batch.MaxDelay = time.Duration(20+brng.IntN(200)) * time.Millisecond
			if seed%2 == 0 {
				opts.Batch.CommitsPerSecond = float64(5 + brng.IntN(100))
			}
			// Seeds 1 and 2 of every 4 commit drained batches early (issue 15).
			opts.Batch.Drained = seed%4 == 1 || seed%4 == 2
			// Maintenance (ADR 0032) compacts and checkpoints beside the
			// commits, as eagerly as it can, racing them.
			mrng := rand.New(rand.NewPCG(seed, 0x3a1e7))
			// Odd seeds write a file per commit, for compaction to pack; even
			// ones fold small batches into a tail file (absorb).
			opts.Maintenance = Maintenance{CompactAt: 1 + mrng.IntN(6), Every: time.Millisecond,
				CheckpointCommits: 1 + mrng.IntN(5), CheckpointInterval: time.Millisecond, PurgeRatio: 0.01,
				TailFileSize: []int64{merge.DefaultTailFileSize, 0}[seed%2]}
			t.Logf("caps: %d records, %d bytes; budget: min %d records, max delay %s, %.0f commits/s, drained %v; compact at %d, tail %d",
				opts.Batch.Records, opts.Batch.Bytes, opts.Batch.MinRecords, opts.Batch.MaxDelay, opts.Batch.CommitsPerSecond, opts.Batch.Drained,
				opts.Maintenance.CompactAt, opts.Maintenance.TailFileSize)
			for round := range 4 {
				pl.produce(150 + rng.IntN(300))
				r := pl.start(opts)
				if round < 3 {
					// Kept: the close's moment is random on purpose (mid-batch, mid-commit).
					time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
				} else {
					pl.waitCaughtUp()
				}
				r.close(t)
			}
			require.Positive(t, pl.w.Counts().Unavailable, "the workload sends placeholders")
			requireShapes(t, pl.w.Counts())
			tb := pl.tables[0]
			compactions += compareVersions(t, pl.store(tb), pl.consumeAll(tb.Topic(), opts.Decoder))
		})
	}
	require.Positive(t, compactions, "maintenance compacted the tables while they were written")
}

// oracleSeeds is CDC2DELTA_PROCESSOR_ORACLE_SEEDS: that many fresh seeds
// instead of the fixed ones.
func oracleSeeds() int {
	n, _ := strconv.Atoi(os.Getenv("CDC2DELTA_PROCESSOR_ORACLE_SEEDS"))
	return n
}

// consumeAll reads every record of topic back, decoded, in offset order per
// partition.
func (pl *pipeline) consumeAll(topic string, dec *codecs.Decoder) []cdcmodel.Record {
	t := pl.t
	ends := pl.endOffsets(topic)
	want := 0
	for _, end := range ends {
		want += int(end)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(pl.brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	var out []cdcmodel.Record
	for len(out) < want {
		fs := cl.PollFetches(t.Context())
		require.NoError(t, fs.Err())
		fs.EachRecord(func(r *kgo.Record) {
			c, err := dec.DecodeRecord(t.Context(), r.Topic, r.Partition, r.Offset, r.Key, r.Value)
			require.NoError(t, err)
			out = append(out, cdcmodel.Record{TopicPartition: cdcmodel.TopicPartition{Topic: r.Topic, Partition: r.Partition}, Offset: r.Offset, Change: c})
		})
	}
	slices.SortStableFunc(out, func(a, b cdcmodel.Record) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return int(a.Offset - b.Offset)
	})
	return out
}

// compareVersions checks every version of the table in store against the
// model fed recs: version v must hold what the model holds once it has
// applied the records up to v's txn offsets. A version that advances no txn
// must be maintenance's, holding the same rows as the version before and no
// change data; it returns how many OPTIMIZE versions there were.
func compareVersions(t *testing.T, store deltalog.Store, recs []cdcmodel.Record) int {
	model := cdcmodel.New(cdcmodel.Options{})
	for _, r := range recs {
		model.Feed(r)
	}
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	last, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	optimized := 0
	for v := int64(0); v <= last.Version(); v++ {
		got, err := cdcmodel.ReadVersion(t.Context(), store, v, []string{"ticket_id"})
		require.NoError(t, err, "version %d", v)
		upTo := map[cdcmodel.TopicPartition]int64{}
		for app, off := range got.Txns {
			tp, ok := cdctable.ParseAppID(app)
			require.True(t, ok, app)
			upTo[cdcmodel.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}] = off
		}
		want, ok := model.Commit(upTo)
		cols := model.Columns()
		if !ok {
			ci, err := tbl.CommitInfo(t.Context(), v)
			require.NoError(t, err)
			require.Contains(t, []string{deltalog.OpOptimize, deltalog.OpVacuumStart, deltalog.OpVacuumEnd}, ci.Operation, "version %d advances no txn", v)
			require.Equal(t, cdcmodel.RenderRows(model.Rows(), cols), cdcmodel.RenderRows(got.Rows, cols), "version %d (%s): rows", v, ci.Operation)
			require.Empty(t, got.Changes, "version %d (%s): change data", v, ci.Operation)
			if ci.Operation == deltalog.OpOptimize {
				optimized++
			}
			continue
		}
		require.Equal(t, cdcmodel.RenderRows(model.Rows(), cols), cdcmodel.RenderRows(got.Rows, cols), "version %d: rows", v)
		require.Equal(t, cdcmodel.RenderChanges(want.Changes, cols), cdcmodel.RenderChanges(got.Changes, cols), "version %d: change data feed", v)
	}
	t.Logf("%d versions equal the model, %d of them compactions", last.Version()+1, optimized)
	return optimized
}
