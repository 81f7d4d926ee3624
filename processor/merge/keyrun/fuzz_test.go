package keyrun_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/cdc2delta/cdc2delta/processor/merge/keyrun"
)

// Whatever bytes a run file holds, opening and reading it returns entries
// or an error, never a panic; the only errors are ErrCorrupt and short reads.
func FuzzOpen(f *testing.F) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{0, 1, 200} {
		f.Add(write(f, genEntries(rng, n, 12, "random strings"), 12))
	}
	f.Add([]byte("C2DKRUN1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		run, err := keyrun.Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			expected(t, err)
			return
		}
		var keys [][]byte
		it := run.Iter()
		for it.Next() {
			keys = append(keys, bytes.Clone(it.Key()))
		}
		if it.Err() != nil {
			expected(t, it.Err())
		}
		if err := run.Lookup(keys, func(int, []byte) {}); err != nil {
			expected(t, err)
		}
	})
}

func expected(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, keyrun.ErrCorrupt) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("unexpected error %v", err)
	}
}

// Any set of keys read back from its run is the set written.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("a\x00b\x00abc\x00"), uint8(3))
	f.Add(bytes.Repeat([]byte("key\x00"), 2000), uint8(0))
	f.Fuzz(func(t *testing.T, raw []byte, width uint8) {
		want := entries{}
		for i, k := range bytes.Split(raw, []byte{0}) {
			want[string(k)] = value(int(width%40), uint64(i))
		}
		got := entries{}
		run := open(t, write(t, want, int(width%40)))
		it := run.Iter()
		for it.Next() {
			got[string(it.Key())] = bytes.Clone(it.Value())
		}
		if it.Err() != nil || len(got) != len(want) || run.Len() != len(want) {
			t.Fatalf("read %d of %d keys: %v", len(got), len(want), it.Err())
		}
		for k, v := range want {
			if g, ok, err := run.Get([]byte(k)); err != nil || !ok || !bytes.Equal(g, v) || !bytes.Equal(got[k], v) {
				t.Fatalf("key %q: got %x (found %v, %v), want %x", k, g, ok, err, v)
			}
		}
	})
}
