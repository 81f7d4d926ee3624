package merge

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// BenchmarkMergeChangeDataFeed shows what the change data feed costs: the
// batches of BenchmarkMerge on a table of CDC2DELTA_CDF_BENCH_ROWS rows
// (default 200,000), with the feed off and on.
func BenchmarkMergeChangeDataFeed(b *testing.B) {
	rows := envInt("CDC2DELTA_CDF_BENCH_ROWS", 200_000)
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		for _, cdf := range []bool{false, true} {
			name := string(mode) + "/cdf=off"
			if cdf {
				name = string(mode) + "/cdf=on"
			}
			b.Run(name, func(b *testing.B) {
				store, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
				require.NoError(b, err)
				s, err := Open(b.Context(), Options{Store: store, TableName: "items", Mode: mode, EnableChangeDataFeed: cdf})
				require.NoError(b, err)
				tbl := &benchTable{rng: rand.New(rand.NewPCG(7, 8))}
				tbl.load(b, s, rows)
				const changes = 10_000
				for b.Loop() {
					_, err := s.Apply(b.Context(), tbl.changes(changes))
					require.NoError(b, err)
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/batch")
				b.ReportMetric(float64(changes*b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
