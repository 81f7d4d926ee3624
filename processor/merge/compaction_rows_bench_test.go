package merge

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// BenchmarkCatchUpBoundedCompaction compacts a table of
// CDC2DELTA_BENCH_ROWS narrow rows (default 4,000,000), loaded in 16 files,
// as automatic maintenance does (128 MiB target, 1 GiB a run), with a row
// bound of maxRows rows a file and a run (0: bytes only, as before the
// bound), run after run until nothing is left to compact; after each run
// the sink, its key index on disk, catches up: it indexes every row of the
// new files before it could commit again. It reports the longest catch-up
// (the longest the table's commits wait), the most rows one commit handed
// it, and the runs.
//
//	go test ./processor/merge -run '^$' -bench BenchmarkCatchUpBoundedCompaction -benchtime 1x
func BenchmarkCatchUpBoundedCompaction(b *testing.B) {
	for _, maxRows := range []int64{0, 1 << 22, 1 << 20} {
		b.Run("max_rows="+strconv.FormatInt(maxRows, 10), func(b *testing.B) {
			rows := envInt("CDC2DELTA_BENCH_ROWS", 4_000_000)
			store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
			require.NoError(b, err)
			s, err := Open(b.Context(), Options{Store: store, TableName: "items", Mode: ModeDV, IndexDir: b.TempDir()})
			require.NoError(b, err)
			defer s.Close()
			tbl := &benchTable{rng: rand.New(rand.NewPCG(7, 8))}
			const files = 16
			for f := range files {
				batch := Batch{}
				for id := f * rows / files; id < (f+1)*rows/files; id++ {
					batch.Records = append(batch.Records, tbl.record(opC, int32(id)))
				}
				_, err := s.Apply(b.Context(), batch)
				require.NoError(b, err)
			}
			tbl.nextID = int32(rows)
			dt, err := deltalog.Open(b.Context(), store)
			require.NoError(b, err)
			opts := tableops.OptimizeOptions{TargetSize: datafile.DefaultTargetFileSize, PurgeRatio: 0.1,
				MaxInputBytes: 1 << 30, TargetRows: maxRows, MaxInputRows: maxRows}
			var longest, total time.Duration
			var most, runs int64
			for b.Loop() {
				b.StopTimer()
				_, err := s.Apply(b.Context(), tbl.changes(10_000))
				require.NoError(b, err)
				b.StartTimer()
				for {
					b.StopTimer()
					snap, err := dt.Snapshot(b.Context())
					require.NoError(b, err)
					res, err := tableops.Optimize(b.Context(), dt, snap, opts)
					require.NoError(b, err)
					if res.NumRemovedFiles == 0 {
						b.StartTimer()
						break
					}
					runs++
					after, err := dt.Snapshot(b.Context())
					require.NoError(b, err)
					most = max(most, addedRows(b, snap, after))
					b.StartTimer()
					start := time.Now()
					require.NoError(b, s.catchUp(b.Context()))
					took := time.Since(start)
					longest, total = max(longest, took), total+took
					require.Equal(b, res.Version, s.Version())
				}
			}
			b.ReportMetric(float64(longest.Milliseconds()), "ms/longest-catchup")
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/catchups")
			b.ReportMetric(float64(most), "rows/largest-commit")
			b.ReportMetric(float64(runs)/float64(b.N), "commits")
		})
	}
}

// addedRows is the rows, by their statistics, of the files after has and
// before has not.
func addedRows(b *testing.B, before, after *deltalog.Snapshot) int64 {
	had := map[string]bool{}
	for _, a := range before.Files() {
		had[a.Path] = true
	}
	var n int64
	for _, a := range after.Files() {
		if !had[a.Path] {
			st, ok, err := deltalog.ParseStatsSummary(a.Stats)
			require.NoError(b, err)
			require.True(b, ok)
			n += st.NumRecords
		}
	}
	return n
}
