package datafile

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestHunt(t *testing.T) {
	if os.Getenv("HUNT") == "" {
		t.Skip()
	}
	s := newStore()
	w, _ := NewWriter(Options{Schema: nestedSchema(), Properties: map[string]string{propCodec: "snappy"}})
	adds, _ := w.Write(t.Context(), s, [][]any{
		{int64(1), []any{int64(5), []any{"a", nil}}, []any{int32(1), nil}, []any{"x"}, []KV{{"k", int64(1)}}, []any{[]any{nil}}, []any{nil}},
		{int64(2), nil, []any{}, []any{"y", "z"}, nil, []any{[]any{[]any{int64(3), []any{"q"}}}}, []any{DecimalFromInt64(5)}},
	})
	seed := fileBytes(t, s, adds[0].Path)
	w2, _ := NewWriter(Options{Schema: idSchema(), Properties: map[string]string{propCodec: "uncompressed"}})
	adds2, _ := w2.Write(t.Context(), s, idRows(20))
	seed2 := fileBytes(t, s, adds2[0].Path)
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 40000; i++ {
		base := seed
		if i%2 == 1 {
			base = seed2
		}
		data := append([]byte{}, base...)
		for k := 0; k < 1+r.IntN(3); k++ {
			pos := r.IntN(len(data) - 8)
			switch r.IntN(6) {
			case 0:
				data[pos] = byte(r.IntN(256))
			case 1:
				binary.LittleEndian.PutUint32(data[pos:], []uint32{0xffffffff, 0x7fffffff, 0x80000000, 0xfffffffe, 1 << 20, 0}[r.IntN(6)])
			case 2:
				data[pos] ^= 1 << r.IntN(8)
			case 3:
				data = append(data[:pos], data[pos+1+r.IntN(4):]...)
			case 4:
				data = append(data[:pos], append([]byte{byte(r.IntN(256)), 0}, data[pos:]...)...)
			case 5:
				data[pos] = 0
			}
		}
		if claimsTooMuch(data) {
			continue
		}
		done := make(chan struct{})
		schema := nestedSchema()
		if i%2 == 1 {
			schema = idSchema()
		}
		go func() {
			defer close(done)
			s2 := newStore()
			s2.Put(t.Context(), "f.parquet", data)
			Read(t.Context(), s2, &deltalog.Add{Path: "f.parquet"}, schema, ReadOptions{})
		}()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			os.WriteFile("/tmp/h7hang.bin", data, 0o644)
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
			t.Fatalf("hang at %d", i)
		}
	}
}
