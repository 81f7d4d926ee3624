package keyrun_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cdc2delta/cdc2delta/processor/merge/keyrun"
)

// The index's entries: an 8-byte integer key (cdctable.AppendKey of a BIGINT is 9
// bytes; close enough) and a 36-byte value (file, row, position).
const benchWidth = 36

// writeRunFile writes n sequential keys to a file and returns its path.
func writeRunFile(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "run")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := keyrun.NewWriter(f, benchWidth, n, 10)
	v := make([]byte, benchWidth)
	for i := range n {
		binary.LittleEndian.PutUint64(v, uint64(i)*7)
		if err := w.Add(binary.BigEndian.AppendUint64(nil, uint64(i)*2), v); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

func openFile(b *testing.B, path string) *keyrun.Run {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	r, err := keyrun.Open(f, fi.Size())
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func BenchmarkWrite(b *testing.B) {
	const n = 1_000_000
	for b.Loop() {
		var buf bytes.Buffer
		w := keyrun.NewWriter(&buf, benchWidth, n, 10)
		v := make([]byte, benchWidth)
		var k []byte
		for i := range n {
			k = binary.BigEndian.AppendUint64(k[:0], uint64(i)*2)
			if err := w.Add(k, v); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(buf.Len())/n, "bytes/key")
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

// BenchmarkOpen is what opening costs: the summaries read and checked.
func BenchmarkOpen(b *testing.B) {
	const n = 1_000_000
	path := writeRunFile(b, n)
	var r *keyrun.Run
	for b.Loop() {
		r = openFile(b, path)
	}
	b.ReportMetric(float64(r.SummaryBytes())/n, "summary-bytes/key")
}

// BenchmarkLookup10k looks up a sorted batch of 10k uniform keys, as a
// 10k-change batch does, in a run whose file is in the page cache.
func BenchmarkLookup10k(b *testing.B) {
	for _, tt := range []struct {
		name string
		n    int
		hit  bool
	}{{"1M keys, hits", 1_000_000, true}, {"1M keys, misses", 1_000_000, false}, {"10M keys, hits", 10_000_000, true}} {
		b.Run(tt.name, func(b *testing.B) {
			r := openFile(b, writeRunFile(b, tt.n))
			rng := rand.New(rand.NewPCG(5, 5))
			keys := make([][]byte, 10_000)
			for i := range keys {
				k := uint64(rng.IntN(tt.n)) * 2
				if !tt.hit {
					k++
				}
				keys[i] = binary.BigEndian.AppendUint64(nil, k)
			}
			slices.SortFunc(keys, bytes.Compare)
			found := 0
			for b.Loop() {
				found = 0
				if err := r.Lookup(keys, func(int, []byte) { found++ }); err != nil {
					b.Fatal(err)
				}
			}
			if tt.hit && found < len(keys)*99/100 || !tt.hit && found != 0 {
				b.Fatalf("found %d of %d", found, len(keys))
			}
			b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		})
	}
}
