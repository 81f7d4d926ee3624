package localstore

import (
	"fmt"
	"testing"
)

// BenchmarkPutIfAbsent measures the store's share of a local commit: temp file, fsync,
// link, directory fsync. The sync=false variant shows the cost of durability.
//
//	go test ./deltalog/localstore -run '^$' -bench PutIfAbsent -count 6
func BenchmarkPutIfAbsent(b *testing.B) {
	commit := make([]byte, 2048) // a typical small commit: commitInfo, txns, a few adds
	for _, noSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%t", !noSync), func(b *testing.B) {
			s, err := New(Options{Dir: b.TempDir(), NoSync: noSync})
			if err != nil {
				b.Fatal(err)
			}
			ctx := b.Context()
			v := 0
			for b.Loop() {
				if err := s.PutIfAbsent(ctx, fmt.Sprintf("_delta_log/%020d.json", v), commit); err != nil {
					b.Fatal(err)
				}
				v++
			}
			b.ReportMetric(float64(v)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}
