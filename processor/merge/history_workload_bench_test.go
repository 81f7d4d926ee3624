package merge

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// BenchmarkHistoryWorkloads applies the same batches to a current-state
// table (Sink, deletion vectors) and to a history table (History), each on
// local disk, both loaded first with CDC2DELTA_HISTORY_BENCH_ROWS rows
// (default 50,000; 10000000 for the 10M rows of history). The
// batches have the shapes of scripts/bench.sh's workloads:
//
//   - 2b: 10,000 uniform upserts (80% updates of live keys, 20% inserts)
//   - 3: 10,000 updates of a Zipf(1.1) hot set spread over the table
//   - 5: 10,000 events of in-batch chains (insert, updates, delete of one key)
//   - 6: 100 uniform upserts
//   - late: 10,000 uniform upserts of which one in ten updates a key at a
//     position up to two batches back (the history table places it in its
//     key's timeline, the current-state table drops it as stale)
//
// The two tables take turns batch by batch (and which goes first), so a
// shared machine's load falls on both. Each reports its CPU per batch and
// rows/s; history/table-cpu is the ratio the issue bounds (at most 2).
// Each also reports the rows it added per batch (the rows its live files
// gained, deleted ones included) and its CPU per row added.
// Before the batches the history table's index is dropped and rebuilt, as
// at a restart: history-index-bytes/row is its heap, history-open-s the
// time of the first batch, which rebuilds it.
// CDC2DELTA_BENCH_CPUPROFILE.history-<workload> receives a profile of the
// batches (both tables; focus on History.Apply).
//
//	CDC2DELTA_HISTORY_BENCH_ROWS=1000000 go test ./processor/merge -run '^$' \
//	    -bench BenchmarkHistoryWorkloads -benchtime 10x -timeout 2h
func BenchmarkHistoryWorkloads(b *testing.B) {
	rows := envInt("CDC2DELTA_HISTORY_BENCH_ROWS", 50_000)
	for _, w := range []struct {
		name  string
		batch int
		gen   func(g *histBenchGen, n int) []ev
	}{
		{"2b", 10_000, (*histBenchGen).upserts},
		{"3", 10_000, (*histBenchGen).hotSet},
		{"5", 10_000, (*histBenchGen).chains},
		{"6", 100, (*histBenchGen).upserts},
		{"late", 10_000, (*histBenchGen).late},
	} {
		b.Run("workload="+w.name, func(b *testing.B) {
			ctx := b.Context()
			tstore, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
			require.NoError(b, err)
			hstore, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
			require.NoError(b, err)
			s, err := Open(ctx, Options{Store: tstore, TableName: "items", Mode: ModeDV})
			require.NoError(b, err)
			defer s.Close()
			h, err := OpenHistory(ctx, HistoryOptions{Store: hstore, TableName: "items_history"})
			require.NoError(b, err)

			g := newHistBenchGen(rows)
			load := envInt("CDC2DELTA_BENCH_LOAD_ROWS", 200_000)
			for start := 0; start < rows; start += load {
				evs := g.inserts(min(load, rows-start))
				_, err := s.Apply(ctx, g.batch(evs))
				require.NoError(b, err)
				_, err = h.Apply(ctx, g.batch(evs))
				require.NoError(b, err)
			}
			// One batch first, with the history table's index dropped: it
			// reads every file once, as after a restart (the MERGE's index
			// is built at open). What the index holds is the live heap it
			// takes; the batch's time is the history table's open.
			withIndex := heapInUse()
			h.index = newHIndex()
			indexBytes := float64(withIndex-min(withIndex, heapInUse())) / float64(rows)
			warm := w.gen(g, w.batch)
			_, err = s.Apply(ctx, g.batch(warm))
			require.NoError(b, err)
			t0 := time.Now()
			_, err = h.Apply(ctx, g.batch(warm))
			require.NoError(b, err)
			openTime := time.Since(t0)

			var tableCPU, histCPU, tableWall, histWall time.Duration
			events := 0
			tableRows0, histRows0 := benchFileRows(b, s.Snapshot()), benchFileRows(b, h.Snapshot())
			stopProfile := benchProfile(b, "history-"+w.name)
			i := 0
			for b.Loop() {
				b.StopTimer()
				evs := w.gen(g, w.batch)
				tb, hb := g.batch(evs), g.batch(evs)
				events += len(evs)
				b.StartTimer()
				applyTable := func() {
					t0, c0 := time.Now(), processCPU()
					_, err := s.Apply(ctx, tb)
					require.NoError(b, err)
					tableWall, tableCPU = tableWall+time.Since(t0), tableCPU+processCPU()-c0
				}
				applyHistory := func() {
					t0, c0 := time.Now(), processCPU()
					_, err := h.Apply(ctx, hb)
					require.NoError(b, err)
					histWall, histCPU = histWall+time.Since(t0), histCPU+processCPU()-c0
				}
				if i%2 == 0 {
					applyTable()
					applyHistory()
				} else {
					applyHistory()
					applyTable()
				}
				i++
			}
			stopProfile()
			n := float64(b.N)
			tableRows := float64(benchFileRows(b, s.Snapshot())-tableRows0) / n
			histRows := float64(benchFileRows(b, h.Snapshot())-histRows0) / n
			b.ReportMetric(tableRows, "table-rows-added/batch")
			b.ReportMetric(histRows, "history-rows-added/batch")
			b.ReportMetric(float64(tableCPU.Microseconds())/n/tableRows, "table-cpu-us/row-added")
			b.ReportMetric(float64(histCPU.Microseconds())/n/histRows, "history-cpu-us/row-added")
			b.ReportMetric(float64(tableCPU.Microseconds())/1000/n, "table-cpu-ms/batch")
			b.ReportMetric(float64(histCPU.Microseconds())/1000/n, "history-cpu-ms/batch")
			b.ReportMetric(histCPU.Seconds()/tableCPU.Seconds(), "history/table-cpu")
			b.ReportMetric(float64(events)/tableWall.Seconds(), "table-rows/s")
			b.ReportMetric(float64(events)/histWall.Seconds(), "history-rows/s")
			b.ReportMetric(histWall.Seconds()/tableWall.Seconds(), "history/table-wall")
			b.ReportMetric(indexBytes, "history-index-bytes/row")
			b.ReportMetric(openTime.Seconds(), "history-open-s")
			b.Logf("%d rows loaded, %d files in the history table, %d in the current-state table",
				rows, len(h.Snapshot().Files()), len(s.Snapshot().Files()))
		})
	}
}

// benchFileRows counts the rows of snap's live files, deleted ones too: a
// table with deletion vectors that rewrites no file grows by the rows each
// batch writes.
func benchFileRows(b *testing.B, snap *deltalog.Snapshot) int64 {
	var n int64
	for _, a := range snap.Files() {
		st, ok, err := deltalog.ParseStatsSummary(a.Stats)
		require.NoError(b, err)
		require.True(b, ok, "file %s has no statistics", a.Path)
		n += st.NumRecords
	}
	return n
}

// histBenchGen generates the benchmark's events over keys 0..next-1, as
// cmd/cdc2bench's generator does, with one position per event.
type histBenchGen struct {
	rng    *rand.Rand
	live   []bool
	next   int32
	seq    int64
	lates  int64 // serial numbers of late events, unique
	zipf   *rand.Zipf
	busy   map[int32]bool
	offset int64
}

func newHistBenchGen(rows int) *histBenchGen {
	return &histBenchGen{rng: rand.New(rand.NewPCG(11, 12)), live: make([]bool, 0, rows+rows/4), busy: map[int32]bool{}}
}

// histBenchPos is position seq (serial distinguishes late events placed
// just after an earlier one).
func histBenchPos(seq, serial int64) codecs.Position {
	var l codecs.LSN
	binary.BigEndian.PutUint64(l[2:], uint64(seq))
	return codecs.Position{Commit: l, Change: l, Serial: serial}
}

// batch makes fresh records of evs (each table gets its own).
func (g *histBenchGen) batch(evs []ev) Batch {
	tp := cdctable.TopicPartition{Topic: itemsTopic}
	bt := Batch{Records: make([]Record, len(evs)), LastOffsets: map[cdctable.TopicPartition]int64{tp: evs[len(evs)-1].offset}}
	for i, e := range evs {
		bt.Records[i] = histBenchRecord(e)
	}
	return bt
}

// histBenchRecord is ev's record with a position beyond 16 bits (ev.pos is
// the sequence number, ev.part the serial) and a 40-byte note, as the
// bench table's rows carry.
func histBenchRecord(e ev) Record {
	c := codecs.Change{Op: e.op, Table: itemsID, Pos: histBenchPos(int64(e.pos), int64(e.part)), CommitMillis: 1_750_000_000_000 + int64(e.pos)/4}
	c.Layout, c.KeyLayout, c.KeyIndex = itemsLayout, itemsKey, []int{0}
	c.Key = []any{e.id}
	c.Row = []any{e.id, e.name, decimal128.FromInt64(e.price), e.notes}
	return Record{TopicPartition: cdctable.TopicPartition{Topic: itemsTopic}, Offset: e.offset, Change: c}
}

const histBenchNote = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"

func (g *histBenchGen) emit(op codecs.Op, id int32) ev {
	g.seq++
	g.offset++
	e := ev{op: op, id: id, pos: int(g.seq), part: 1, offset: g.offset}
	if op == codecs.OpDelete {
		g.live[id] = false
		return e
	}
	g.live[id] = true
	e.name = "status-" + strconv.Itoa(g.rng.IntN(7))
	e.price = g.rng.Int64N(10_000_000)
	k := g.rng.IntN(len(histBenchNote))
	e.notes = histBenchNote[k:] + histBenchNote[:k]
	return e
}

func (g *histBenchGen) newKey() int32 {
	id := g.next
	g.next++
	g.live = append(g.live, false)
	return id
}

func (g *histBenchGen) inserts(n int) []ev {
	out := make([]ev, n)
	for i := range out {
		out[i] = g.emit(codecs.OpCreate, g.newKey())
	}
	return out
}

// liveKey picks a live key uniformly, skipping keys of open chains.
func (g *histBenchGen) liveKey() (int32, bool) {
	for range 1000 {
		id := g.rng.Int32N(g.next)
		if g.live[id] && !g.busy[id] {
			return id, true
		}
	}
	return 0, false
}

func (g *histBenchGen) upserts(n int) []ev {
	out := make([]ev, 0, n)
	for range n {
		if g.rng.IntN(100) < 80 {
			if id, ok := g.liveKey(); ok {
				out = append(out, g.emit(codecs.OpUpdate, id))
				continue
			}
		}
		out = append(out, g.emit(codecs.OpCreate, g.newKey()))
	}
	return out
}

// hotSet updates keys drawn from Zipf(1.1) over the keys, rank r mapped
// to a key spread over the whole table.
func (g *histBenchGen) hotSet(n int) []ev {
	if g.zipf == nil {
		g.zipf = rand.NewZipf(g.rng, 1.1, 1, uint64(g.next)-1)
	}
	out := make([]ev, 0, n)
	for range n {
		id := int32((g.zipf.Uint64() * 2_654_435_761) % uint64(g.next))
		if !g.live[id] {
			id, _ = g.liveKey()
		}
		out = append(out, g.emit(codecs.OpUpdate, id))
	}
	return out
}

// chains interleaves up to eight open chains: new keys go insert, one to
// three updates, then half the time a delete; live keys go update,
// update, delete (cmd/cdc2bench's workload 5).
func (g *histBenchGen) chains(n int) []ev {
	type chain struct {
		id  int32
		ops []codecs.Op
	}
	var open []*chain
	out := make([]ev, 0, n)
	for len(out) < n {
		if len(open) < 8 {
			c := &chain{}
			if g.rng.IntN(2) == 0 {
				c.id = g.newKey()
				c.ops = append(c.ops, codecs.OpCreate)
				for range 1 + g.rng.IntN(3) {
					c.ops = append(c.ops, codecs.OpUpdate)
				}
				if g.rng.IntN(2) == 0 {
					c.ops = append(c.ops, codecs.OpDelete)
				}
			} else if id, ok := g.liveKey(); ok {
				c.id, c.ops = id, []codecs.Op{codecs.OpUpdate, codecs.OpUpdate, codecs.OpDelete}
			} else {
				continue
			}
			g.busy[c.id] = true
			open = append(open, c)
		}
		i := g.rng.IntN(len(open))
		c := open[i]
		out = append(out, g.emit(c.ops[0], c.id))
		c.ops = c.ops[1:]
		if len(c.ops) == 0 {
			delete(g.busy, c.id)
			open = slices.Delete(open, i, i+1)
		}
	}
	for _, c := range open {
		delete(g.busy, c.id)
	}
	return out
}

// late is upserts of which one in ten updates a live key at a position up
// to two batches back, just after that position's event.
func (g *histBenchGen) late(n int) []ev {
	out := g.upserts(n)
	for i := range out {
		if g.rng.IntN(10) != 0 || out[i].op != codecs.OpUpdate {
			continue
		}
		g.lates++
		out[i].pos -= 1 + g.rng.IntN(min(2*n, out[i].pos-1))
		out[i].part = int32(1 + g.lates)
	}
	return out
}
