package deltalog

import (
	"testing"
)

// BenchmarkCheckpoint measures reading and writing a classic checkpoint of 100k adds with
// stats, partition values and some DVs and tags.
//
//	go test -run '^$' -bench BenchmarkCheckpoint -benchmem -count 6 ./deltalog/
func BenchmarkCheckpoint(b *testing.B) {
	const numAdds = 100_000
	state := ckptSampleState(numAdds)
	data, _, err := encodeCheckpoint(1, state)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("read/adds=100k", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			acts, err := decodeParquetCheckpoint(b.Context(), "cp", data)
			if err != nil {
				b.Fatal(err)
			}
			if len(acts) != len(state) {
				b.Fatalf("read %d actions, want %d", len(acts), len(state))
			}
		}
		b.ReportMetric(float64(len(state)*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("write/adds=100k", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := encodeCheckpoint(1, state); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(state)*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
