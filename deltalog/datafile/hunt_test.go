package datafile

import (
	"bytes"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"runtime"
	"testing"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestHunt(t *testing.T) {
	if os.Getenv("HUNT") == "" {
		t.Skip()
	}
	s := newStore()
	w, _ := NewWriter(Options{Schema: idSchema(), Properties: map[string]string{propCodec: "snappy"}})
	adds, _ := w.Write(t.Context(), s, idRows(20))
	seed := fileBytes(t, s, adds[0].Path)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		data := append([]byte{}, seed...)
		for k := 0; k < 1+r.IntN(4); k++ {
			data[r.IntN(len(data))] = byte(r.IntN(256))
		}
		if claimsTooMuch(data) {
			continue
		}
		var ms runtime.MemStats
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			s2 := newStore()
			s2.Put(t.Context(), "f.parquet", data)
			Read(t.Context(), s2, &deltalog.Add{Path: "f.parquet"}, idSchema(), ReadOptions{})
		}()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			os.WriteFile("/tmp/h7hang.bin", data, 0o644)
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
			t.Fatalf("hang at %d", i)
		}
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > 1<<30 || time.Since(start) > time.Second {
			os.WriteFile("/tmp/h7hang.bin", data, 0o644)
			t.Fatalf("big at %d: %d bytes %v", i, ms.HeapAlloc, time.Since(start))
		}
		_ = bytes.MinRead
	}
}
