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
	w, _ := NewWriter(Options{Schema: idSchema(), Properties: map[string]string{propCodec: "snappy"}})
	adds, _ := w.Write(t.Context(), s, idRows(20))
	seed := fileBytes(t, s, adds[0].Path)
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 50000; i++ {
		data := append([]byte{}, seed...)
		for k := 0; k < 1+r.IntN(3); k++ {
			pos := r.IntN(len(data) - 4)
			switch r.IntN(4) {
			case 0:
				data[pos] = byte(r.IntN(256))
			case 1:
				binary.LittleEndian.PutUint32(data[pos:], []uint32{0xffffffff, 0x7fffffff, 0x80000000, 0xfffffffe, 1 << 20}[r.IntN(5)])
			case 2:
				data[pos] = []byte{0xff, 0x7f, 0x80, 0x00, 0x01}[r.IntN(5)]
			case 3:
				binary.LittleEndian.PutUint16(data[pos:], 0xffff)
			}
		}
		if claimsTooMuch(data) {
			continue
		}
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
	}
}
