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

// BenchmarkListLogTail lists the commits after the latest but one of a log
// of n entries, as every Table.Update after a commit does: the directory is
// read whole, so the cost grows with the log a table keeps (30 days by
// default); what is not listed is not sorted or allocated for.
func BenchmarkListLogTail(b *testing.B) {
	for _, n := range []int{360, 8640} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			s, err := New(Options{Dir: b.TempDir(), NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			ctx := b.Context()
			for v := range n {
				if err := s.Put(ctx, fmt.Sprintf("_delta_log/%020d.json", v), nil); err != nil {
					b.Fatal(err)
				}
			}
			after := fmt.Sprintf("_delta_log/%020d.json", n-2)
			for b.Loop() {
				got := 0
				for _, err := range s.List(ctx, "_delta_log/", after) {
					if err != nil {
						b.Fatal(err)
					}
					got++
				}
				if got != 1 {
					b.Fatalf("listed %d, want 1", got)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lists/s")
		})
	}
}
