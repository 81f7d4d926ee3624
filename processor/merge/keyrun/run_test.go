package keyrun_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/merge/keyrun"
)

// entries is the oracle: a plain map, sorted by the test itself.
type entries map[string][]byte

func (e entries) sorted() []string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func write(t testing.TB, e entries, width int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := keyrun.NewWriter(&buf, width, len(e), 10)
	for _, k := range e.sorted() {
		require.NoError(t, w.Add([]byte(k), e[k]))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func open(t testing.TB, b []byte) *keyrun.Run {
	t.Helper()
	r, err := keyrun.Open(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	return r
}

func value(width int, i uint64) []byte {
	v := make([]byte, 0, width+8)
	for j := 0; len(v) < width; j++ {
		v = binary.LittleEndian.AppendUint64(v, i*0x9e3779b97f4a7c15+uint64(j))
	}
	return v[:width]
}

// genEntries makes n keys of the kind given, with distinct values.
func genEntries(rng *rand.Rand, n, width int, kind string) entries {
	e := entries{}
	for i := 0; len(e) < n; i++ {
		var k []byte
		switch kind {
		case "sequential ints":
			k = binary.BigEndian.AppendUint64(nil, uint64(i))
		case "random strings":
			k = make([]byte, 1+rng.IntN(40))
			for j := range k {
				k[j] = byte(rng.IntN(256))
			}
		case "keys over a block":
			k = bytes.Repeat([]byte{byte(i)}, keyrun.BlockSize+rng.IntN(100))
			k = append(k, byte(i>>8))
		}
		e[string(k)] = value(width, uint64(i))
	}
	return e
}

func TestRunRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		width int
		kind  string
	}{
		{"empty", 0, 36, "sequential ints"},
		{"one key", 1, 36, "sequential ints"},
		{"sequential ints over many blocks", 20000, 36, "sequential ints"},
		{"random strings", 5000, 36, "random strings"},
		{"zero-width values", 3000, 0, "random strings"},
		{"keys larger than a block", 40, 8, "keys over a block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tt.n)))
			want := genEntries(rng, tt.n, tt.width, tt.kind)
			run := open(t, write(t, want, tt.width))
			require.Equal(t, tt.n, run.Len())
			require.Equal(t, tt.width, run.Width())

			keys := want.sorted()
			it := run.Iter()
			i := 0
			for it.Next() {
				require.Less(t, i, len(keys))
				require.Equal(t, keys[i], string(it.Key()))
				require.Equal(t, want[keys[i]], it.Value())
				i++
			}
			require.NoError(t, it.Err())
			require.Equal(t, len(keys), i)

			// Every key is found with its value, and keys not in the
			// run are not, whether looked up one by one or sorted together.
			var probe [][]byte
			for _, k := range keys {
				probe = append(probe, []byte(k), append([]byte(k), 0))
				v, ok, err := run.Get([]byte(k))
				require.NoError(t, err)
				require.True(t, ok, "key %q", k)
				require.Equal(t, want[k], v)
			}
			probe = append(probe, []byte{})
			sort.Slice(probe, func(a, b int) bool { return bytes.Compare(probe[a], probe[b]) < 0 })
			got := entries{}
			require.NoError(t, run.Lookup(probe, func(i int, v []byte) {
				_, dup := got[string(probe[i])]
				require.False(t, dup)
				got[string(probe[i])] = bytes.Clone(v)
			}))
			if tt.n == 0 {
				require.Empty(t, got)
			} else {
				require.Equal(t, want, got)
			}
		})
	}
}

func TestWriterRejects(t *testing.T) {
	v := make([]byte, 4)
	tests := []struct {
		name string
		keys []string
		val  []byte
		want error
	}{
		{"a key out of order", []string{"b", "a"}, v, keyrun.ErrOrder},
		{"a key twice", []string{"a", "a"}, v, keyrun.ErrOrder},
		{"a value of the wrong width", []string{"a"}, make([]byte, 5), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := keyrun.NewWriter(&bytes.Buffer{}, 4, 2, 10)
			var err error
			for _, k := range tt.keys {
				if err = w.Add([]byte(k), tt.val); err != nil {
					break
				}
			}
			require.Error(t, err)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			}
		})
	}
}

// Any byte changed anywhere in a run is caught: Open or the read of the
// block it is in fails with ErrCorrupt; no lookup returns a wrong answer.
func TestRunCorruptionIsCaught(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	want := genEntries(rng, 300, 12, "random strings") // a few blocks
	good := write(t, want, 12)
	require.Greater(t, open(t, good).Blocks(), 2)
	keys := want.sorted()
	for at := range good {
		bad := bytes.Clone(good)
		bad[at] ^= 1 << (at % 8)
		err := readAll(bad, keys, want)
		require.ErrorIs(t, err, keyrun.ErrCorrupt, "byte %d of %d flipped", at, len(good))
		var ce *keyrun.CorruptError
		require.True(t, errors.As(err, &ce))
	}
	for n := range len(good) {
		require.ErrorIs(t, readAll(good[:n], keys, want), keyrun.ErrCorrupt, "cut to %d of %d bytes", n, len(good))
	}
	require.NoError(t, readAll(good, keys, want))
}

// readAll opens b and checks every entry against want; it returns the first
// error, or one of its own when a read disagrees with want.
func readAll(b []byte, keys []string, want entries) error {
	run, err := keyrun.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	it := run.Iter()
	i := 0
	for ; it.Next(); i++ {
		if i >= len(keys) || string(it.Key()) != keys[i] || !bytes.Equal(it.Value(), want[keys[i]]) {
			return fmt.Errorf("entry %d read wrong", i)
		}
	}
	if it.Err() != nil {
		return it.Err()
	}
	if i != len(keys) {
		return fmt.Errorf("%d entries read, want %d", i, len(keys))
	}
	return nil
}

func TestMergeNewestWins(t *testing.T) {
	const width = 8
	rng := rand.New(rand.NewPCG(3, 3))
	// Three generations over a shared key space; the newest is runs[0].
	gens := make([]entries, 3)
	for g := range gens {
		gens[g] = entries{}
		for range 3000 {
			k := binary.BigEndian.AppendUint32(nil, uint32(rng.IntN(5000)))
			gens[g][string(k)] = value(width, uint64(g)<<32|uint64(rng.Uint32()))
		}
		gens[g][""] = value(width, uint64(g)+1) // the empty key sorts first
	}
	deleted := func(v []byte) bool { return v[0]&7 == 0 }
	// keep drops deleted values and rewrites the others, as a full merge
	// follows redirects.
	rewrite := func(v []byte) []byte {
		out := bytes.Clone(v)
		out[width-1] ^= 0xff
		return out
	}
	keep := func(v []byte) ([]byte, bool) {
		if deleted(v) {
			return nil, false
		}
		return rewrite(v), true
	}

	want := entries{}
	for g := len(gens) - 1; g >= 0; g-- {
		for k, v := range gens[g] {
			want[k] = v
		}
	}
	for k, v := range want {
		if deleted(v) {
			delete(want, k)
		} else {
			want[k] = rewrite(v)
		}
	}

	runs := make([]*keyrun.Run, len(gens))
	for g := range gens {
		runs[g] = open(t, write(t, gens[g], width))
	}
	var buf bytes.Buffer
	w := keyrun.NewWriter(&buf, width, 9000, 10)
	require.NoError(t, keyrun.Merge(w, keep, runs...))
	require.NoError(t, w.Close())
	merged := open(t, buf.Bytes())
	require.NoError(t, readAll(buf.Bytes(), want.sorted(), want))
	require.Equal(t, len(want), merged.Len())

	w = keyrun.NewWriter(&bytes.Buffer{}, width+1, 1, 10)
	require.Error(t, keyrun.Merge(w, nil, runs...), "runs of another width")
}
