package merge

import (
	"cmp"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

func BenchmarkDedup(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 10_000
	recs := make([]Record, n)
	keys := make([]string, n)
	for i := range recs {
		id := int32(rng.IntN(5_000))
		recs[i] = ev{op: opU, id: id, pos: i, offset: int64(i), part: id % 4}.record()
		keys[i] = strconv.Itoa(int(id))
	}
	for b.Loop() {
		dedup(recs, keys)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
}

// benchTableRows is the table size of BenchmarkMerge; CDC2DELTA_BENCH_ROWS
// overrides it (e.g. 10000000).
func benchTableRows() int {
	return envInt("CDC2DELTA_BENCH_ROWS", 1_000_000)
}

// benchCoWMaxRows is the largest table BenchmarkMerge/cow runs on (building
// and rewriting a 10M-row table copy-on-write takes many minutes);
// CDC2DELTA_BENCH_COW_MAX_ROWS overrides it.
func benchCoWMaxRows() int {
	return envInt("CDC2DELTA_BENCH_COW_MAX_ROWS", 1_000_000)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// heapInUse is the live heap after full collections: two, since what a
// finalizer or cleanup keeps alive (open files, readers) is freed by the
// collection after the one that queued it.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// benchTable generates the changes of the merge benchmarks.
type benchTable struct {
	rng    *rand.Rand
	pos    int
	off    int64
	nextID int32
}

func (t *benchTable) record(op codecs.Op, id int32) Record {
	t.pos++
	t.off++
	return ev{op: op, id: id, pos: t.pos, name: "name-" + strconv.Itoa(int(id)), price: int64(id), offset: t.off}.record()
}

// load inserts rows keys in batches of 200,000, one data file each;
// CDC2DELTA_BENCH_LOAD_ROWS sets another size, to weigh a batch's cost
// against the table's file count (a uniform batch touches every file).
func (t *benchTable) load(b *testing.B, s *Sink, rows int) {
	load := envInt("CDC2DELTA_BENCH_LOAD_ROWS", 200_000)
	for start := 0; start < rows; start += load {
		batch := Batch{}
		for id := start; id < min(start+load, rows); id++ {
			batch.Records = append(batch.Records, t.record(opC, int32(id)))
		}
		_, err := s.Apply(b.Context(), batch)
		require.NoError(b, err)
	}
	t.nextID = int32(rows)
}

// changes makes a batch of n changes: uniform random keys, 70% update, 20%
// insert, 10% delete.
func (t *benchTable) changes(n int) Batch {
	batch := Batch{Records: make([]Record, 0, n)}
	for range n {
		switch x := t.rng.IntN(10); {
		case x < 7:
			batch.Records = append(batch.Records, t.record(opU, int32(t.rng.IntN(int(t.nextID)))))
		case x < 9:
			batch.Records = append(batch.Records, t.record(opC, t.nextID))
			t.nextID++
		default:
			batch.Records = append(batch.Records, t.record(opD, int32(t.rng.IntN(int(t.nextID)))))
		}
	}
	return batch
}

// BenchmarkMerge merges 10,000-change batches (uniform random keys, 70%
// update, 20% insert, 10% delete) into a table of CDC2DELTA_BENCH_ROWS rows
// on local disk, with the key index in memory or on disk (dv-disk, ADR
// 0034). It reports the index memory and the open time of a sink reopened
// after a clean stop.
func BenchmarkMerge(b *testing.B) {
	for _, c := range []struct {
		name string
		mode Mode
		disk bool
	}{{"dv", ModeDV, false}, {"dv-disk", ModeDV, true}, {"cow", ModeCoW, false}} {
		b.Run(c.name, func(b *testing.B) {
			rows := benchTableRows()
			if c.mode == ModeCoW && rows > benchCoWMaxRows() {
				b.Skipf("copy-on-write skipped above %d rows (CDC2DELTA_BENCH_COW_MAX_ROWS)", benchCoWMaxRows())
			}
			store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
			require.NoError(b, err)
			opts := Options{Store: store, TableName: "items", Mode: c.mode}
			if c.disk {
				opts.IndexDir = b.TempDir()
				opts.IndexMemoryKeys = envInt("CDC2DELTA_BENCH_MEMORY_KEYS", 0)
			}
			s, err := Open(b.Context(), opts)
			require.NoError(b, err)
			tbl := &benchTable{rng: rand.New(rand.NewPCG(7, 8))}
			tbl.load(b, s, rows)
			require.NoError(b, s.Close())
			// Reopen to measure what a loaded sink holds: the key index
			// (and the snapshot, which is small beside it).
			s = nil
			before := heapInUse()
			t0 := time.Now()
			s, err = Open(b.Context(), opts)
			require.NoError(b, err)
			openTime := time.Since(t0)
			indexBytes := float64(heapInUse()-before) / float64(rows)
			const changes = 10_000
			filesAdded := 0
			var took []time.Duration
			cpu0 := processCPU()
			stopProfile := benchProfile(b, c.name+".merge")
			for b.Loop() {
				t := time.Now()
				res, err := s.Apply(b.Context(), tbl.changes(changes))
				require.NoError(b, err)
				took = append(took, time.Since(t))
				filesAdded += res.FilesAdded
			}
			stopProfile()
			// CPU time includes the GC and goroutines, and is what to compare
			// across runs on a shared machine; wall time grows with its load.
			b.ReportMetric(float64((processCPU()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/batch")
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/batch")
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(changes*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(filesAdded)/float64(b.N), "files/op")
			b.ReportMetric(indexBytes, "index-bytes/key")
			b.ReportMetric(openTime.Seconds(), "open-s")
			b.Logf("table %d rows, version %d, open %v, in-memory index table %d keys", rows, s.Version(), openTime, s.state.index.keys.len())
			if c.disk {
				killOpen, keys := openAfterKill(b, s, opts, tbl, changes)
				b.ReportMetric(killOpen.Seconds(), "open-after-kill-s")
				b.Logf("open after a kill with %d keys changed since the last flush: %v", keys, killOpen)
			}
		})
	}
}

// openAfterKill merges batches into s until its in-memory index is one batch
// short of a flush, the most a kill can leave the persisted index behind,
// then abandons s without closing it, as a SIGKILL would, and times a new
// Open. It returns the time and the keys changed since the last flush.
func openAfterKill(b *testing.B, s *Sink, opts Options, tbl *benchTable, changes int) (time.Duration, int) {
	memKeys := cmp.Or(opts.IndexMemoryKeys, DefaultIndexMemoryKeys)
	for s.state.index.keys.len()+changes < memKeys {
		_, err := s.Apply(b.Context(), tbl.changes(changes))
		require.NoError(b, err)
	}
	keys := s.state.index.keys.len()
	// The abandoned sink's run files stay open; its state is dropped so
	// that only the new sink's index is in memory.
	s.state = nil
	stopProfile := benchProfile(b, "open-after-kill")
	t0 := time.Now()
	s2, err := Open(b.Context(), opts)
	require.NoError(b, err)
	took := time.Since(t0)
	stopProfile()
	require.NoError(b, s2.Close())
	return took, keys
}

// benchProfile writes a CPU profile of what runs until the returned stop to
// $CDC2DELTA_BENCH_CPUPROFILE.name, when that is set: a profile of the
// phase alone, without the table's load.
func benchProfile(b *testing.B, name string) (stop func()) {
	prefix := os.Getenv("CDC2DELTA_BENCH_CPUPROFILE")
	if prefix == "" {
		return func() {}
	}
	f, err := os.Create(prefix + "." + name)
	require.NoError(b, err)
	require.NoError(b, pprof.StartCPUProfile(f))
	return func() {
		pprof.StopCPUProfile()
		require.NoError(b, f.Close())
	}
}

// BenchmarkCatchUp measures how a sink whose table another writer changed
// (one 10,000-change batch) gets back in step: incrementally (catchUp) or by
// rebuilding its index (full), on a table of CDC2DELTA_BENCH_ROWS rows.
func BenchmarkCatchUp(b *testing.B) {
	rows := benchTableRows()
	store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
	require.NoError(b, err)
	opts := Options{Store: store, TableName: "items", Mode: ModeDV}
	writer, err := Open(b.Context(), opts)
	require.NoError(b, err)
	tbl := &benchTable{rng: rand.New(rand.NewPCG(7, 8))}
	tbl.load(b, writer, rows)
	for _, mode := range []string{"incremental", "full"} {
		b.Run(mode, func(b *testing.B) {
			s, err := Open(b.Context(), opts)
			require.NoError(b, err)
			for b.Loop() {
				b.StopTimer()
				_, err := writer.Apply(b.Context(), tbl.changes(10_000))
				require.NoError(b, err)
				b.StartTimer()
				if mode == "full" {
					err = s.fullReload(b.Context())
				} else {
					err = s.catchUp(b.Context())
				}
				require.NoError(b, err)
			}
			require.Equal(b, writer.Version(), s.Version())
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/catchup")
		})
	}
}

// BenchmarkOpenIndex measures rebuilding the key index of a 1M-row table.
func BenchmarkOpenIndex(b *testing.B) {
	rows := benchTableRows()
	store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
	require.NoError(b, err)
	s, err := Open(b.Context(), Options{Store: store, TableName: "items"})
	require.NoError(b, err)
	const load = 200_000
	for start := 0; start < rows; start += load {
		batch := Batch{}
		for id := start; id < min(start+load, rows); id++ {
			batch.Records = append(batch.Records, ev{op: opC, id: int32(id), pos: id + 1, offset: int64(id)}.record())
		}
		_, err := s.Apply(b.Context(), batch)
		require.NoError(b, err)
	}
	for b.Loop() {
		_, err := Open(b.Context(), Options{Store: store, TableName: "items"})
		require.NoError(b, err)
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkOpenTombstones measures opening a sink on a table of 10,000 rows
// whose last batches each left a tombstone file (ADR 0022): files=64 is
// about the most the batch path lets pile up before it compacts. It reports
// the store reads an open makes (on S3 each is a GET).
//
//	go test ./processor/merge -run '^$' -bench BenchmarkOpenTombstones -count 6
func BenchmarkOpenTombstones(b *testing.B) {
	for _, files := range []int{1, 64} {
		b.Run("files="+strconv.Itoa(files), func(b *testing.B) {
			store := memstore.New(memstore.Options{})
			opts := Options{Store: store, TableName: "items", Mode: ModeDV}
			s, err := Open(b.Context(), opts)
			require.NoError(b, err)
			tbl := &benchTable{rng: rand.New(rand.NewPCG(7, 8))}
			tbl.load(b, s, 10_000)
			for i := range files {
				batch := Batch{}
				for k := range 10 {
					batch.Records = append(batch.Records, tbl.record(opD, int32(i*10+k)))
				}
				_, err := s.Apply(b.Context(), batch)
				require.NoError(b, err)
			}
			gets := 0
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				clone := faultstore.Wrap(store.Clone()) // counts the reads
				opts.Store = clone
				b.StartTimer()
				cpu0 := processCPU()
				s, err := Open(b.Context(), opts)
				cpu += processCPU() - cpu0
				require.NoError(b, err)
				require.Len(b, s.state.tombs.keys, 10*files)
				gets += clone.Calls(faultstore.OpGet)
			}
			// CPU time is what to compare across runs on a shared machine.
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/open")
			b.ReportMetric(float64(gets)/float64(b.N), "gets/open")
		})
	}
}

// BenchmarkApplyHotKeys merges batches of 50,000 updates over 20,000 hot
// keys (each key changed a few times per batch, the steady hot-key
// workload of cdc2bench e2e) into a 20,000-row table on local disk.
//
//	go test -run '^$' -bench 'ApplyHotKeys' -benchmem -count 6 -cpu 1 ./processor/merge/
func BenchmarkApplyHotKeys(b *testing.B) {
	const keys, changes = 20_000, 50_000
	store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
	require.NoError(b, err)
	s, err := Open(b.Context(), Options{Store: store, TableName: "items", Mode: ModeDV})
	require.NoError(b, err)
	tbl := &benchTable{rng: rand.New(rand.NewPCG(7, 8))}
	tbl.load(b, s, keys)
	batches := make([]Batch, 4)
	for i := range batches {
		batches[i].Records = make([]Record, 0, changes)
		for range changes {
			batches[i].Records = append(batches[i].Records, tbl.record(opU, int32(tbl.rng.IntN(keys))))
		}
	}
	b.ReportAllocs()
	cpu0, i := processCPU(), 0
	for b.Loop() {
		// Positions must grow: renumber the batch past the last one.
		batch := batches[i%len(batches)]
		for j := range batch.Records {
			tbl.pos++
			tbl.off++
			r := &batch.Records[j]
			r.Offset, r.Change.Pos, r.Change.CommitMillis = tbl.off, pos(tbl.pos), 1_700_000_000_000+int64(tbl.pos)
		}
		i++
		_, err := s.Apply(b.Context(), batch)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(changes*b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(changes*b.N)/(processCPU()-cpu0).Seconds(), "events/cpu-s")
}
