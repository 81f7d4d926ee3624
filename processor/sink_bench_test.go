package processor

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
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
	if v, err := strconv.Atoi(os.Getenv("CDC2DELTA_BENCH_ROWS")); err == nil && v > 0 {
		return v
	}
	return 1_000_000
}

// BenchmarkMerge merges 10,000-change batches (uniform random keys, 70%
// update, 20% insert, 10% delete) into a table of 1M rows on local disk.
func BenchmarkMerge(b *testing.B) {
	for _, mode := range []MergeMode{MergeDV, MergeCoW} {
		b.Run(string(mode), func(b *testing.B) {
			rows := benchTableRows()
			store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
			require.NoError(b, err)
			s, err := OpenSink(b.Context(), SinkOptions{Store: store, TableName: "items", MergeMode: mode, DisableDeletionVectors: mode == MergeCoW})
			require.NoError(b, err)
			p, off := 0, int64(0)
			next := func(op codecs.Op, id int32) Record {
				p++
				off++
				return ev{op: op, id: id, pos: p, name: "name-" + strconv.Itoa(int(id)), price: int64(id), offset: off}.record()
			}
			const load = 200_000
			for start := 0; start < rows; start += load {
				batch := Batch{}
				for id := start; id < min(start+load, rows); id++ {
					batch.Records = append(batch.Records, next(opC, int32(id)))
				}
				_, err := s.Apply(b.Context(), batch)
				require.NoError(b, err)
			}
			rng := rand.New(rand.NewPCG(7, 8))
			nextID := int32(rows)
			const changes = 10_000
			var total ApplyResult
			for b.Loop() {
				batch := Batch{Records: make([]Record, 0, changes)}
				for range changes {
					switch x := rng.IntN(10); {
					case x < 7:
						batch.Records = append(batch.Records, next(opU, int32(rng.IntN(int(nextID)))))
					case x < 9:
						batch.Records = append(batch.Records, next(opC, nextID))
						nextID++
					default:
						batch.Records = append(batch.Records, next(opD, int32(rng.IntN(int(nextID)))))
					}
				}
				res, err := s.Apply(b.Context(), batch)
				require.NoError(b, err)
				total.Updated += res.Updated
				total.FilesAdded += res.FilesAdded
			}
			b.ReportMetric(float64(changes*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(total.FilesAdded)/float64(b.N), "files/op")
			b.Log(fmt.Sprintf("table %d rows, version %d", rows, s.Version()))
		})
	}
}

// BenchmarkOpenIndex measures rebuilding the key index of a 1M-row table.
func BenchmarkOpenIndex(b *testing.B) {
	rows := benchTableRows()
	store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
	require.NoError(b, err)
	s, err := OpenSink(b.Context(), SinkOptions{Store: store, TableName: "items"})
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
		_, err := OpenSink(b.Context(), SinkOptions{Store: store, TableName: "items"})
		require.NoError(b, err)
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
