package merge

import (
	"encoding/binary"
	"maps"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// testLoc makes a distinct location from n, using every field.
func testLoc(n uint64) rowLoc {
	var commit, change codecs.LSN
	binary.BigEndian.PutUint64(commit[2:], n*7)
	binary.BigEndian.PutUint64(change[:8], n*13)
	return rowLoc{file: uint32(n), row: uint32(n >> 3), pos: codecs.Position{Commit: commit, Change: change, Serial: -int64(n) << 20}}
}

// requireTableEqual checks t against the model through every method that
// reads it.
func requireTableEqual(tb testing.TB, model map[string]rowLoc, t *keyTable) {
	tb.Helper()
	require.Equal(tb, len(model), t.len())
	got := maps.Collect(t.all())
	require.Equal(tb, model, got)
	for k, want := range model {
		// require per key would dominate the model test's time.
		if loc, ok := t.get(k); !ok || loc != want {
			require.FailNow(tb, "get disagrees with the model", "key %q: got %v, %v; want %v", k, loc, ok, want)
		}
	}
}

func TestKeyRecordSize(t *testing.T) {
	require.Equal(t, uintptr(keyRecordSize), unsafe.Sizeof(keyRecord{}))
}

func TestKeyTable(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name string
		ops  func(tb testing.TB, t *keyTable)
		want map[string]rowLoc
	}{
		{"empty", func(testing.TB, *keyTable) {}, map[string]rowLoc{}},
		{"empty key", func(_ testing.TB, t *keyTable) { t.put("", testLoc(1)) }, map[string]rowLoc{"": testLoc(1)}},
		{"inline and arena boundary", func(_ testing.TB, t *keyTable) {
			t.put(strings.Repeat("a", inlineKeyMax), testLoc(1))
			t.put(strings.Repeat("a", inlineKeyMax+1), testLoc(2))
		}, map[string]rowLoc{strings.Repeat("a", inlineKeyMax): testLoc(1), strings.Repeat("a", inlineKeyMax+1): testLoc(2)}},
		{"prefixes", func(_ testing.TB, t *keyTable) {
			for i := range 20 {
				t.put(long[:i*15], testLoc(uint64(i)))
			}
			t.delete(long[:15])
			t.delete(long[:30])
			t.delete(long[:31]) // absent
		}, func() map[string]rowLoc {
			m := map[string]rowLoc{}
			for i := range 20 {
				m[long[:i*15]] = testLoc(uint64(i))
			}
			delete(m, long[:15])
			delete(m, long[:30])
			return m
		}()},
		{"overwrite", func(_ testing.TB, t *keyTable) {
			t.put(long, testLoc(1))
			t.put("k", testLoc(2))
			t.put(long, testLoc(3))
			t.put("k", testLoc(4))
		}, map[string]rowLoc{long: testLoc(3), "k": testLoc(4)}},
		{"delete and reuse", func(_ testing.TB, t *keyTable) {
			t.put("a", testLoc(1))
			t.put(long, testLoc(2))
			t.delete("a")
			t.delete(long)
			t.put("b", testLoc(3))
			t.put(long+"y", testLoc(4))
		}, map[string]rowLoc{"b": testLoc(3), long + "y": testLoc(4)}},
		{"delete func", func(tb testing.TB, t *keyTable) {
			for i := range 1000 {
				t.put(strconv.Itoa(i)+long[:i%40], testLoc(uint64(i)))
			}
			require.Equal(tb, 500, t.deleteFunc(func(l rowLoc) bool { return l.file%2 == 1 }))
		}, func() map[string]rowLoc {
			m := map[string]rowLoc{}
			for i := 0; i < 1000; i += 2 {
				m[strconv.Itoa(i)+long[:i%40]] = testLoc(uint64(i))
			}
			return m
		}()},
		{"negative serial and zero position", func(_ testing.TB, t *keyTable) {
			t.put("z", rowLoc{pos: codecs.Position{Serial: -1}})
			t.put("w", rowLoc{})
		}, map[string]rowLoc{"z": {pos: codecs.Position{Serial: -1}}, "w": {}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl := newKeyTable()
			tc.ops(t, tbl)
			requireTableEqual(t, tc.want, tbl)
			_, ok := tbl.get("absent key")
			require.False(t, ok)
		})
	}
}

// TestKeyTableReserve checks that a reserved table takes its keys without
// rehashing (the slots stay the same array).
func TestKeyTableReserve(t *testing.T) {
	tbl := newKeyTable()
	tbl.reserve(10_000)
	slots := &tbl.slots[0]
	size := len(tbl.slots)
	for i := range 10_000 {
		tbl.put(strconv.Itoa(i), testLoc(uint64(i)))
	}
	require.Same(t, slots, &tbl.slots[0])
	require.Equal(t, size, len(tbl.slots))
	tbl.put("one more", testLoc(1))
	require.Equal(t, 10_001, tbl.len())
}

// TestKeyTableBytes checks the memory per key of a table sized by reserve
// (int keys, as in the benchmark), that bytes reports what the heap holds,
// and that churn with long keys does not grow the table.
func TestKeyTableBytes(t *testing.T) {
	const n = 200_000
	keys := make([]string, n)
	for i := range keys {
		k, err := cdctable.AppendKey(nil, []any{int64(i)})
		require.NoError(t, err)
		keys[i] = string(k)
	}
	before := heapInUse()
	tbl := newKeyTable()
	tbl.reserve(n)
	for i, k := range keys {
		tbl.put(k, testLoc(uint64(i)))
	}
	heap := float64(heapInUse() - before)
	runtime.KeepAlive(keys) // else collected after before was measured
	held := float64(tbl.bytes())
	require.LessOrEqual(t, held/n, 60.0, "bytes per key")
	require.InDelta(t, heap, held, heap*0.1, "bytes() against the heap")
	require.Equal(t, n, tbl.len())

	// Churn: replace 1,000 long keys by new ones, many times over.
	churn := newKeyTable()
	long := strings.Repeat("k", 200)
	for i := range 1_000 {
		churn.put(long+strconv.Itoa(i), testLoc(uint64(i)))
	}
	first := churn.bytes()
	for i := 1_000; i < 200_000; i++ {
		churn.delete(long + strconv.Itoa(i-1_000))
		churn.put(long+strconv.Itoa(i), testLoc(uint64(i)))
	}
	require.Equal(t, 1_000, churn.len())
	require.Positive(t, churn.compactions)
	require.LessOrEqual(t, churn.bytes(), 3*first+2*arenaPage, "churn must not grow the table")
}

// TestKeyTableModel runs random puts, overwrites and deletes against a map,
// with key lengths around the inline limit and beyond 255 bytes, and keys
// that are prefixes of each other; it grows the table, shrinks it to few
// keys (so arena garbage forces compaction) and grows it again.
func TestKeyTableModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := strings.Repeat("0123456789abcdef", 40)
	// Each id has one key; its length depends on the id, around the inline
	// limit, short, or beyond 255 bytes, and ids share prefixes (the base
	// suffix makes "1"+base[:3] a prefix of "1"+base[:9]).
	key := func(space int) string {
		n := rng.IntN(space)
		var l int
		switch n % 4 {
		case 0:
			l = n / 4 % (inlineKeyMax + 2)
		case 1:
			l = 9
		case 2:
			l = 256 + n/4%300
		default:
			l = n / 4 % 64
		}
		return strconv.Itoa(n) + base[:l]
	}
	tbl := newKeyTable()
	model := map[string]rowLoc{}
	ops := 0
	phase := func(n, space, putPct int) {
		for range n {
			ops++
			k := key(space)
			if rng.IntN(100) < putPct {
				loc := testLoc(rng.Uint64())
				tbl.put(k, loc)
				model[k] = loc
			} else {
				tbl.delete(k)
				delete(model, k)
			}
			if ops%100_000 == 0 {
				requireTableEqual(t, model, tbl)
			}
		}
		requireTableEqual(t, model, tbl)
	}
	phase(150_000, 100_000, 80) // grow
	grown := len(tbl.slots)
	phase(100_000, 100_000, 50) // churn
	phase(250_000, 100_000, 2)  // shrink
	require.Less(t, tbl.len(), 20_000)
	require.Positive(t, tbl.compactions, "deleting most long keys compacts the arena")
	// Deleting by location while walking the records.
	n := tbl.deleteFunc(func(l rowLoc) bool { return l.row%3 == 0 })
	before := len(model)
	maps.DeleteFunc(model, func(_ string, l rowLoc) bool { return l.row%3 == 0 })
	require.Equal(t, before-len(model), n)
	requireTableEqual(t, model, tbl)
	phase(150_000, 100_000, 80) // grow again, reusing free records
	require.Equal(t, grown, len(tbl.slots), "freed records are reused, so the table does not grow past its peak")
}

// FuzzKeyTable drives puts, deletes and deleteFuncs from the input against a
// map model.
func FuzzKeyTable(f *testing.F) {
	f.Add([]byte{0, 1, 'a', 0, 2, 'a', 'b', 1, 1, 'a', 2, 3})
	f.Add([]byte{0, 20, 'k', 'e', 'y', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 'k', 'e', 'y'})
	f.Add([]byte{0, 0, 0, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 2, 0, 1, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		tbl := newKeyTable()
		model := map[string]rowLoc{}
		long := strings.Repeat("L", 300)
		for i := 0; len(in) >= 2; i++ {
			op, n := in[0]%4, int(in[1])
			in = in[2:]
			k := string(in[:min(n, len(in))])
			in = in[len(k):]
			if n%7 == 6 {
				k += long // some keys far into the arena
			}
			switch op {
			case 0, 1:
				loc := testLoc(uint64(i)*977 + uint64(n))
				tbl.put(k, loc)
				model[k] = loc
			case 2:
				tbl.delete(k)
				delete(model, k)
			case 3:
				del := func(_ string, l rowLoc) bool { return l.file%uint32(n+2) == 0 }
				got := tbl.deleteFunc(func(l rowLoc) bool { return del("", l) })
				before := len(model)
				maps.DeleteFunc(model, del)
				require.Equal(t, before-len(model), got)
			}
			w, wok := model[k]
			g, gok := tbl.get(k)
			require.Equal(t, wok, gok)
			require.Equal(t, w, g)
		}
		requireTableEqual(t, model, tbl)
	})
}

// BenchmarkKeyTable compares the table with map[string]rowLoc on int keys
// (cdctable.AppendKey encodings, 9 bytes): get of present keys, put of new keys
// (growing, from empty), and the memory each holds per key.
func BenchmarkKeyTable(b *testing.B) {
	const n = 1_000_000
	keys := make([]string, n)
	for i := range keys {
		k, err := cdctable.AppendKey(nil, []any{int64(i)})
		require.NoError(b, err)
		keys[i] = string(k)
	}
	order := rand.New(rand.NewPCG(5, 6)).Perm(n)
	type index struct {
		put func(string, rowLoc)
		get func(string) (rowLoc, bool)
	}
	kinds := []struct {
		name string
		make func() index
	}{
		{"table", func() index { t := newKeyTable(); return index{t.put, t.get} }},
		{"map", func() index {
			m := map[string]rowLoc{}
			return index{func(k string, l rowLoc) { m[k] = l }, func(k string) (rowLoc, bool) { l, ok := m[k]; return l, ok }}
		}},
	}
	for _, kind := range kinds {
		b.Run(kind.name+"/put", func(b *testing.B) {
			var bytesPerKey float64
			for b.Loop() {
				b.StopTimer()
				before := heapInUse()
				b.StartTimer()
				x := kind.make()
				for i, k := range keys {
					x.put(k, testLoc(uint64(i)))
				}
				b.StopTimer()
				bytesPerKey = float64(heapInUse()-before) / n
				_, ok := x.get(keys[0])
				require.True(b, ok)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*b.N), "ns/key")
			b.ReportMetric(bytesPerKey, "bytes/key")
		})
		b.Run(kind.name+"/get", func(b *testing.B) {
			x := kind.make()
			for i, k := range keys {
				// The map keeps the string it was given: a copy, as in the
				// sink, where keys are looked up with strings of other events.
				x.put(strings.Clone(k), testLoc(uint64(i)))
			}
			i := 0
			for b.Loop() {
				if _, ok := x.get(keys[order[i]]); !ok {
					b.Fatal("missing key")
				}
				i++
				if i == n {
					i = 0
				}
			}
		})
	}
}

func TestLiveRows(t *testing.T) {
	dv := func(n int64) *deltalog.DeletionVector { return &deltalog.DeletionVector{Cardinality: n} }
	tests := []struct {
		name  string
		files []*deltalog.Add
		want  int
	}{
		{"none", nil, 0},
		{"stats and deletion vectors", []*deltalog.Add{
			{Stats: `{"numRecords":100}`},
			{Stats: `{"numRecords":50}`, DeletionVector: dv(20)},
		}, 130},
		{"missing or bad stats count for none", []*deltalog.Add{
			{Stats: `{"numRecords":7}`}, {}, {Stats: `{"numRecords":-3}`}, {Stats: `not json`},
		}, 7},
		{"capped", []*deltalog.Add{{Stats: `{"numRecords":99999999999999}`}}, maxReserveHint},
		{"never negative", []*deltalog.Add{{Stats: `{"numRecords":1}`, DeletionVector: dv(5)}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, liveRows(tc.files))
		})
	}
}
