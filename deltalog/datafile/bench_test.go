package datafile

import (
	"context"
	"fmt"
	"io"
	"iter"
	"syscall"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/parquet-go/parquet-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// Benchmarks for the hot write path, on a 12-column CDC-shaped row: 2 longs, 3 strings,
// 5 optional columns, a decimal and a timestamp_ntz.
//
//	go test -run '^$' -bench 'Write|Read|Codec' -benchtime 5x -count 3 ./deltalog/datafile

func cdcSchema() *deltalog.StructType {
	return &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("lsn", deltalog.TypeLong, false),
		field("name", deltalog.TypeString, false),
		field("email", deltalog.TypeString, false),
		field("status", deltalog.TypeString, false),
		field("qty", deltalog.TypeInteger, true),
		field("price", deltalog.TypeDouble, true),
		field("note", deltalog.TypeString, true),
		field("active", deltalog.TypeBoolean, true),
		field("born", deltalog.TypeDate, true),
		field("amount", deltalog.DecimalType{Precision: 18, Scale: 2}, false),
		field("updated", deltalog.TypeTimestampNTZ, false),
	}}
}

func cdcRows(n int) [][]any {
	statuses := []string{"new", "paid", "shipped", "cancelled"}
	rows := make([][]any, n)
	for i := range rows {
		var qty, price, note, active, born any
		if i%3 != 0 {
			qty, price, active, born = int32(i%500), float64(i%10000)/100, i%2 == 0, int32(7000+i%20000)
		}
		if i%5 == 0 {
			note = fmt.Sprintf("note %d for customer", i*7919%100003)
		}
		rows[i] = []any{
			int64(i), int64(1_000_000_000 + i*3),
			fmt.Sprintf("Customer %08d", i*7919%1000003), fmt.Sprintf("user%d@example%d.com", i*31%99991, i%97),
			statuses[i%len(statuses)], qty, price, note, active, born,
			decimal128.FromInt64(int64(i*7919%10000000) - 5000000), int64(1_700_000_000_000_000 + int64(i)*1_234_567),
		}
	}
	return rows
}

// discardStore keeps only object sizes, so the benchmark measures encoding.
type discardStore struct{ bytes int64 }

func (d *discardStore) Get(context.Context, string) (io.ReadCloser, error) {
	return nil, deltalog.ErrNotExist
}
func (d *discardStore) Put(_ context.Context, _ string, b []byte) error {
	d.bytes += int64(len(b))
	return nil
}
func (d *discardStore) PutIfAbsent(ctx context.Context, p string, b []byte) error {
	return d.Put(ctx, p, b)
}
func (d *discardStore) List(context.Context, string, string) iter.Seq2[deltalog.ObjectInfo, error] {
	return func(func(deltalog.ObjectInfo, error) bool) {}
}
func (d *discardStore) Delete(context.Context, string) error { return nil }

func BenchmarkWriteCDC(b *testing.B) {
	const n = 200_000
	rows := cdcRows(n)
	for _, codec := range []string{"uncompressed", "snappy", "zstd", "gzip"} {
		b.Run("codec="+codec, func(b *testing.B) {
			w, err := NewWriter(Options{Schema: cdcSchema(), Properties: map[string]string{propCodec: codec}})
			if err != nil {
				b.Fatal(err)
			}
			s := &discardStore{}
			b.ReportAllocs()
			cpu0 := cpuSeconds()
			for b.Loop() {
				if _, err := w.Write(b.Context(), s, rows); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(n*b.N)/(cpuSeconds()-cpu0), "rows/cpu-s")
			b.ReportMetric(float64(s.bytes)/float64(n*b.N), "B/row")
		})
	}
}

func BenchmarkReadCDC(b *testing.B) {
	const n = 200_000
	s := newStore()
	w, err := NewWriter(Options{Schema: cdcSchema()})
	if err != nil {
		b.Fatal(err)
	}
	adds, err := w.Write(b.Context(), s, cdcRows(n))
	if err != nil {
		b.Fatal(err)
	}
	for name, cols := range map[string][]string{"all": nil, "keys": {"id", "lsn"}} {
		b.Run("columns="+name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuSeconds()
			for b.Loop() {
				if _, err := ReadColumns(b.Context(), s, &adds[0], cdcSchema(), cols, ReadOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(n*b.N)/(cpuSeconds()-cpu0), "rows/cpu-s")
		})
	}
}

// cpuSeconds is the process's user+system CPU time. On a shared, overloaded machine
// rows per CPU-second is steadier than rows per wall-clock second; GC work is included.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkCodecSnappy compares parquet-go's snappy encoder with the one the writer uses.
func BenchmarkCodecSnappy(b *testing.B) {
	// An uncompressed data file of CDC rows stands in for page contents.
	w, err := NewWriter(Options{Schema: cdcSchema(), Properties: map[string]string{propCodec: "uncompressed"}})
	if err != nil {
		b.Fatal(err)
	}
	s := newStore()
	adds, err := w.Write(b.Context(), s, cdcRows(20_000))
	if err != nil {
		b.Fatal(err)
	}
	page := fileBytes(b, s, adds[0].Path)
	for name, c := range map[string]interface {
		Encode(dst, src []byte) ([]byte, error)
	}{"parquet-go": &parquet.Snappy, "fast": &fastSnappy{}} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			var dst []byte
			for b.Loop() {
				dst, _ = c.Encode(dst[:0], page)
			}
		})
	}
}

// BenchmarkWriteSinkBatch writes 10,000-row batches with a new Writer each,
// as the sink does (one per batch and partition), so per-Writer set-up costs
// such as codec state show.
func BenchmarkWriteSinkBatch(b *testing.B) {
	const n = 10_000
	rows := cdcRows(n)
	s := &discardStore{}
	b.ReportAllocs()
	for b.Loop() {
		w, err := NewWriter(Options{Schema: cdcSchema()})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Write(b.Context(), s, rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(s.bytes)/float64(n*b.N), "B/row")
}

// BenchmarkAbsorbTail rewrites a 2,000-row file with 5 rows dropped and 5
// added, with a new Writer each time: the commit of a trickled table whose
// one file is its tail (ADR 0032), so per-Writer codec state shows.
func BenchmarkAbsorbTail(b *testing.B) {
	const n, k = 2_000, 5
	s := newStore()
	w, err := NewWriter(Options{Schema: cdcSchema()})
	if err != nil {
		b.Fatal(err)
	}
	adds, err := w.Write(b.Context(), s, cdcRows(n))
	if err != nil || len(adds) != 1 {
		b.Fatalf("%d files: %v", len(adds), err)
	}
	drop := roaring64.New()
	for i := range k {
		drop.Add(uint64(i * 400))
	}
	more := cdcRows(k)
	b.ReportAllocs()
	for b.Loop() {
		w, err := NewWriter(Options{Schema: cdcSchema()})
		if err != nil {
			b.Fatal(err)
		}
		res, ok, err := w.CopyLiveWith(b.Context(), s, []Source{{Add: &adds[0], Drop: drop}}, more, 2)
		if err != nil || !ok || res.SourceRows != n {
			b.Fatalf("ok %v, %d source rows: %v", ok, res.SourceRows, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}
