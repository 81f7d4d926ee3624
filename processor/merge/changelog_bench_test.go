package merge

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// BenchmarkChangeLogCost shows what the change log (ADR 0031, a second
// commit per batch) adds to the CPU of a batch: 10,000 changes (70% update,
// 20% insert, 10% delete) merged into a table of CDC2DELTA_CHANGELOG_BENCH_ROWS
// rows (default 200,000) alone, and with the log's append first, as the
// processor runs them. The two tables take turns batch by batch, so a
// shared machine's load falls on both. Decoding and Kafka are not counted:
// end to end the same added CPU is a smaller share.
func BenchmarkChangeLogCost(b *testing.B) {
	rows := envInt("CDC2DELTA_CHANGELOG_BENCH_ROWS", 200_000)
	const changes = 10_000
	type side struct {
		sink *Sink
		log  *ChangeLog
		tbl  *benchTable
		cpu  time.Duration
	}
	open := func(withLog bool) *side {
		store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
		require.NoError(b, err)
		s, err := Open(b.Context(), Options{Store: store, TableName: "items", Mode: ModeDV})
		require.NoError(b, err)
		b.Cleanup(func() { _ = s.Close() })
		sd := &side{sink: s, tbl: &benchTable{rng: rand.New(rand.NewPCG(7, 8))}}
		sd.tbl.load(b, s, rows)
		if withLog {
			logStore, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
			require.NoError(b, err)
			sd.log, err = OpenChangeLog(b.Context(), ChangeLogOptions{Store: logStore, TableName: "items_changes"})
			require.NoError(b, err)
		}
		return sd
	}
	off, on := open(false), open(true)
	for b.Loop() {
		for _, sd := range []*side{off, on} {
			batch := sd.tbl.changes(changes)
			cpu0 := processCPU()
			if sd.log != nil {
				_, err := sd.log.Append(b.Context(), batch)
				require.NoError(b, err)
			}
			_, err := sd.sink.Apply(b.Context(), batch)
			require.NoError(b, err)
			sd.cpu += processCPU() - cpu0
		}
	}
	perEvent := func(sd *side) float64 { return float64(sd.cpu.Nanoseconds()) / 1e3 / float64(changes*b.N) }
	b.ReportMetric(perEvent(off), "cpu-us/event")
	b.ReportMetric(perEvent(on), "cpu-us/event-logged")
	b.ReportMetric(100*(perEvent(on)/perEvent(off)-1), "log-cpu-%")
}

// BenchmarkChangeLogAppend is the change log's append alone, 10,000 changes
// a batch as in BenchmarkChangeLogCost, for profiling its own CPU.
func BenchmarkChangeLogAppend(b *testing.B) {
	const changes = 10_000
	store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
	require.NoError(b, err)
	log, err := OpenChangeLog(b.Context(), ChangeLogOptions{Store: store, TableName: "items_changes"})
	require.NoError(b, err)
	tbl := &benchTable{rng: rand.New(rand.NewPCG(7, 8)), nextID: 200_000}
	var cpu time.Duration
	b.ReportAllocs()
	for b.Loop() {
		batch := tbl.changes(changes)
		cpu0 := processCPU()
		_, err := log.Append(b.Context(), batch)
		require.NoError(b, err)
		cpu += processCPU() - cpu0
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(changes*b.N), "cpu-us/event")
	var size int64
	for _, f := range log.Snapshot().Files() {
		size += f.Size
	}
	b.ReportMetric(float64(size)/float64(changes*b.N), "file-bytes/event")
}
