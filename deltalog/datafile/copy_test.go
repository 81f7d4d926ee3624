package datafile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// randomPrimitiveRow is a row of allPrimitivesSchema with some nulls.
func randomPrimitiveRow(rng *rand.Rand, i int) []any {
	row := []any{
		rng.IntN(2) == 0, int8(rng.IntN(256) - 128), int16(rng.IntN(1 << 16)), rng.Int32(), rng.Int64() - math.MaxInt64/2,
		float32(rng.NormFloat64()), rng.NormFloat64(), fmt.Sprintf("s-%d-%s", rng.IntN(1000), strings.Repeat("x", rng.IntN(40))), []byte{byte(i), 1},
		int32(rng.IntN(30000)), rng.Int64N(1 << 50), rng.Int64N(1 << 50),
		decimal128.FromInt64(rng.Int64N(1e9) - 5e8), decimal128.FromInt64(rng.Int64N(1e18) - 5e17), decimal128.FromInt64(rng.Int64() - math.MaxInt64/2),
		int64(i),
	}
	for j := 0; j < len(row)-1; j++ {
		if rng.IntN(7) == 0 {
			row[j] = nil
		}
	}
	return row
}

// TestCopyLive checks that CopyLive keeps exactly the rows not dropped, in order, and
// writes the statistics that writing those rows anew would, for every primitive type,
// with partitions, column mapping, several row groups and deletion-vector tables.
func TestCopyLive(t *testing.T) {
	mapped, _ := deltalog.AssignColumnMapping(allPrimitivesSchema(), 0)
	cases := []struct {
		name  string
		opts  Options
		drop  func(n int) []uint64
		nrows int
	}{
		{name: "plain", opts: Options{Schema: allPrimitivesSchema()}, nrows: 3000, drop: every(7)},
		{name: "row groups", opts: Options{Schema: allPrimitivesSchema(), RowGroupSize: 16 << 10}, nrows: 5000, drop: every(3)},
		{name: "tight bounds off", opts: Options{Schema: allPrimitivesSchema(), Properties: map[string]string{propDeletionVectors: "true"}}, nrows: 500, drop: every(2)},
		{name: "column mapping", opts: Options{Schema: mapped, Properties: map[string]string{"delta.columnMapping.mode": "name"}}, nrows: 800, drop: every(5)},
		{name: "partitioned", opts: Options{Schema: allPrimitivesSchema(), PartitionColumns: []string{"i8"}}, nrows: 400, drop: every(4)},
		{name: "gzip, one column at a time", opts: Options{Schema: allPrimitivesSchema(), Properties: map[string]string{propCodec: "gzip"}}, nrows: 600, drop: every(3)},
		{name: "snappy", opts: Options{Schema: allPrimitivesSchema(), Properties: map[string]string{propCodec: "snappy"}}, nrows: 600, drop: every(3)},
		{name: "nothing dropped", opts: Options{Schema: allPrimitivesSchema()}, nrows: 100, drop: func(int) []uint64 { return nil }},
		{name: "all but one dropped", opts: Options{Schema: allPrimitivesSchema()}, nrows: 100, drop: func(n int) []uint64 {
			var out []uint64
			for i := 1; i < n; i++ {
				out = append(out, uint64(i))
			}
			return out
		}},
	}
	cases = append(cases, struct {
		name  string
		opts  Options
		drop  func(n int) []uint64
		nrows int
	}{name: "all dropped", opts: Options{Schema: allPrimitivesSchema()}, nrows: 50, drop: every(1)})
	for _, tc := range cases {
		// CopyLiveWith appends new rows after the copied ones.
		for _, extra := range []int{0, 7} {
			if extra == 0 && tc.name == "all dropped" {
				continue // nothing to write: no file (TestCopyLiveRefuses)
			}
			t.Run(fmt.Sprintf("%s/extra=%d", tc.name, extra), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, uint64(tc.nrows)))
				gen := func(n, from int) [][]any {
					rows := make([][]any, n)
					for i := range rows {
						rows[i] = randomPrimitiveRow(rng, from+i)
						if len(tc.opts.PartitionColumns) > 0 {
							rows[i][1] = int8(3) // one partition
						}
					}
					return rows
				}
				rows := gen(tc.nrows, 0)
				adds, stored, s := writeRead(t, tc.opts, rows)
				require.Len(t, adds, 1)
				drop := roaring64.New()
				drop.AddMany(tc.drop(len(rows)))
				more := gen(extra, tc.nrows)

				w, err := NewWriter(tc.opts)
				require.NoError(t, err)
				res, ok, err := w.CopyLiveWith(t.Context(), s, []Source{{Add: &adds[0], Drop: drop}}, more, 4)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, int64(len(rows)), res.SourceRows)
				var keep [][]any
				for i, r := range stored {
					if !drop.Contains(uint64(i)) {
						keep = append(keep, r)
					}
				}
				require.Equal(t, int64(len(keep)), res.Rows)
				require.NotNil(t, res.Add)
				require.Equal(t, adds[0].PartitionValues, res.Add.PartitionValues)
				got, err := Read(t.Context(), s, res.Add, tc.opts.Schema, ReadOptions{Properties: tc.opts.Properties, PartitionColumns: tc.opts.PartitionColumns})
				require.NoError(t, err)
				// The appended rows read back as written do.
				_, moreStored, _ := writeRead(t, tc.opts, append(keep[:len(keep):len(keep)], more...))
				requireRowsEqual(t, moreStored, got)

				// The statistics are those of writing the rows anew.
				fresh, _, _ := writeRead(t, tc.opts, append(keep[:len(keep):len(keep)], more...))
				require.Len(t, fresh, 1)
				require.JSONEq(t, fresh[0].Stats, res.Add.Stats)
			})
		}
	}
}

// TestCopyLiveWithSeveralFiles copies three files, each less its dropped
// rows, and new rows into one file of one row group: the rows read back in
// source order, each source's share is reported, and the statistics are
// those of writing the rows anew. Files of other partitions are refused.
func TestCopyLiveWithSeveralFiles(t *testing.T) {
	opts := Options{Schema: allPrimitivesSchema()}
	rng := rand.New(rand.NewPCG(7, 7))
	s := newStore()
	var srcs []Source
	var keep [][]any
	var want []SourceCopied
	next := 0
	for i, n := range []int{40, 25, 60} {
		rows := make([][]any, n)
		for j := range rows {
			rows[j] = randomPrimitiveRow(rng, next)
			next++
		}
		w, err := NewWriter(opts)
		require.NoError(t, err)
		adds, err := w.Write(t.Context(), s, rows)
		require.NoError(t, err)
		require.Len(t, adds, 1)
		stored, err := Read(t.Context(), s, &adds[0], opts.Schema, ReadOptions{})
		require.NoError(t, err)
		drop := roaring64.New()
		drop.AddMany(every(i + 2)(n))
		kept := 0
		for j, r := range stored {
			if !drop.Contains(uint64(j)) {
				keep = append(keep, r)
				kept++
			}
		}
		srcs = append(srcs, Source{Add: &adds[0], Drop: drop})
		want = append(want, SourceCopied{SourceRows: int64(n), Rows: int64(kept)})
	}
	more := [][]any{randomPrimitiveRow(rng, next), randomPrimitiveRow(rng, next+1)}

	w, err := NewWriter(opts)
	require.NoError(t, err)
	res, ok, err := w.CopyLiveWith(t.Context(), s, srcs, more, 2)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, want, res.Sources)
	require.Equal(t, int64(125), res.SourceRows)
	require.Equal(t, int64(len(keep)), res.Rows)
	got, err := Read(t.Context(), s, res.Add, opts.Schema, ReadOptions{})
	require.NoError(t, err)
	fresh, wantRows, _ := writeRead(t, opts, append(keep[:len(keep):len(keep)], more...))
	requireRowsEqual(t, wantRows, got)
	require.JSONEq(t, fresh[0].Stats, res.Add.Stats)
	require.Len(t, openFile(t, s, *res.Add).RowGroups(), 1)

	popts := Options{Schema: allPrimitivesSchema(), PartitionColumns: []string{"i8"}}
	pw, err := NewWriter(popts)
	require.NoError(t, err)
	var parts []Source
	for _, v := range []int8{3, 4} {
		row := randomPrimitiveRow(rng, 0)
		row[1] = v
		adds, err := pw.Write(t.Context(), s, [][]any{row})
		require.NoError(t, err)
		parts = append(parts, Source{Add: &adds[0]})
	}
	_, ok, err = pw.CopyLiveWith(t.Context(), s, parts, nil, 2)
	require.NoError(t, err)
	require.False(t, ok, "files of another partition are not copied together")
}

func every(k int) func(n int) []uint64 {
	return func(n int) []uint64 {
		var out []uint64
		for i := 0; i < n; i += k {
			out = append(out, uint64(i))
		}
		return out
	}
}

func requireRowsEqual(t *testing.T, want, got [][]any) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		for j := range want[i] {
			if f, ok := want[i][j].(float64); ok && math.IsNaN(f) {
				require.True(t, math.IsNaN(got[i][j].(float64)), "row %d col %d", i, j)
				continue
			}
			require.Equal(t, want[i][j], got[i][j], "row %d col %d", i, j)
		}
	}
}

// TestCopyLiveRefuses checks that CopyLive leaves files it cannot copy value for value
// to the caller: one of an older schema, and tables with nested columns. Every row
// dropped writes no file.
func TestCopyLiveRefuses(t *testing.T) {
	old := &deltalog.StructType{Fields: []deltalog.StructField{field("id", deltalog.TypeLong, false), field("s", deltalog.TypeString, true)}}
	adds, _, s := writeRead(t, Options{Schema: old}, [][]any{{int64(1), "a"}, {int64(2), nil}})
	evolved := &deltalog.StructType{Fields: append(append([]deltalog.StructField(nil), old.Fields...), field("n", deltalog.TypeLong, true))}
	w, err := NewWriter(Options{Schema: evolved})
	require.NoError(t, err)
	_, ok, err := w.CopyLive(t.Context(), s, &adds[0], roaring64.New(), 1)
	require.NoError(t, err)
	require.False(t, ok, "a file of an older schema")

	nested := &deltalog.StructType{Fields: []deltalog.StructField{field("id", deltalog.TypeLong, false),
		field("a", &deltalog.ArrayType{ElementType: deltalog.TypeLong, ContainsNull: true}, true)}}
	nadds, _, ns := writeRead(t, Options{Schema: nested}, [][]any{{int64(1), []any{int64(1)}}})
	nw, err := NewWriter(Options{Schema: nested})
	require.NoError(t, err)
	_, ok, err = nw.CopyLive(t.Context(), ns, &nadds[0], roaring64.New(), 1)
	require.NoError(t, err)
	require.False(t, ok, "nested columns")

	w, err = NewWriter(Options{Schema: old})
	require.NoError(t, err)
	drop := roaring64.New()
	drop.AddMany([]uint64{0, 1})
	res, ok, err := w.CopyLive(t.Context(), s, &adds[0], drop, 4)
	require.NoError(t, err)
	require.True(t, ok)
	require.Nil(t, res.Add)
	require.Equal(t, int64(2), res.SourceRows)
}
