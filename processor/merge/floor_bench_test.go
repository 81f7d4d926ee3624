package merge

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// upserts makes a batch of n uniform upserts: 80% updates of random
// existing keys, 20% inserts (workload 2b of cdc2bench).
func (t *benchTable) upserts(n int) Batch {
	batch := Batch{Records: make([]Record, 0, n)}
	for range n {
		if t.rng.IntN(10) < 8 {
			batch.Records = append(batch.Records, t.record(opU, int32(t.rng.IntN(int(t.nextID)))))
			continue
		}
		batch.Records = append(batch.Records, t.record(opC, t.nextID))
		t.nextID++
	}
	return batch
}

// BenchmarkMergeFloor sets the merge of 10,000-change upsert batches into a
// table of CDC2DELTA_FLOOR_BENCH_ROWS rows (default 200,000, local disk,
// the sink's defaults) against its floor: the rows the merge wrote for the
// batch (its inserts and updates) encoded into one Parquet file with our
// writer and committed once to a local table, the least any writer of the
// batch does. Merge and floor take turns batch by batch, so a shared
// machine's load falls on both; the ratio is what to read.
// CDC2DELTA_BENCH_CPUPROFILE.floor receives a profile of both (focus on
// Sink.Apply for where the merge's rest goes).
func BenchmarkMergeFloor(b *testing.B) {
	rows := envInt("CDC2DELTA_FLOOR_BENCH_ROWS", 200_000)
	const changes = 10_000
	ctx := b.Context()
	store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
	require.NoError(b, err)
	s, err := Open(ctx, Options{Store: store, TableName: "items", Mode: ModeDV})
	require.NoError(b, err)
	defer s.Close()
	tbl := &benchTable{rng: rand.New(rand.NewPCG(7, 8))}
	tbl.load(b, s, rows)

	floorStore, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
	require.NoError(b, err)
	floor, err := deltalog.Open(ctx, floorStore)
	require.NoError(b, err)
	snap := s.Snapshot()
	proto, meta := snap.Protocol(), snap.Metadata()
	created, err := floor.Commit(ctx, nil, []deltalog.Action{{Protocol: &proto}, {Metadata: &meta}}, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(b, err)
	floorSnap := created.Snapshot

	var merges, floors []time.Duration
	var mergeCPU, floorCPU time.Duration
	stopProfile := benchProfile(b, "floor")
	for b.Loop() {
		batch := tbl.upserts(changes)
		before := map[string]bool{}
		for _, a := range s.Snapshot().Files() {
			before[a.Path] = true
		}
		t0, cpu0 := time.Now(), processCPU()
		res, err := s.Apply(ctx, batch)
		require.NoError(b, err)
		merges, mergeCPU = append(merges, time.Since(t0)), mergeCPU+processCPU()-cpu0

		// The batch's rows, as the merge wrote them (untimed).
		var written [][]any
		for _, a := range s.Snapshot().Files() {
			if !before[a.Path] {
				r, err := datafile.Read(ctx, store, &a, s.Snapshot().Schema(), datafile.ReadOptions{Properties: meta.Configuration})
				require.NoError(b, err)
				written = append(written, r...)
			}
		}
		n := int(res.Inserted + res.Updated)
		require.GreaterOrEqual(b, len(written), n, "the merge wrote the batch's rows")
		written = written[len(written)-n:] // an absorbed tail file's old rows come first

		t0, cpu0 = time.Now(), processCPU()
		w, err := datafile.NewWriter(datafile.Options{Schema: snap.Schema(), PartitionColumns: meta.PartitionColumns,
			Properties: meta.Configuration, TargetFileSize: 1 << 40})
		require.NoError(b, err)
		adds, err := w.Write(ctx, floorStore, written)
		require.NoError(b, err)
		require.Len(b, adds, 1, "one Parquet file")
		c, err := floor.Commit(ctx, floorSnap, []deltalog.Action{{Add: &adds[0]}}, deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(b, err)
		floorSnap = c.Snapshot
		floors, floorCPU = append(floors, time.Since(t0)), floorCPU+processCPU()-cpu0
	}
	stopProfile()
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	m, f := p50(merges), p50(floors)
	b.ReportMetric(m, "merge-p50-ms")
	b.ReportMetric(f, "floor-p50-ms")
	b.ReportMetric(m/f, "merge/floor")
	// CPU as well: on a shared machine the wall-time ratio moves with the
	// load, and the merge runs some of its work in parallel.
	b.ReportMetric(mergeCPU.Seconds()/floorCPU.Seconds(), "merge/floor-cpu")
}
