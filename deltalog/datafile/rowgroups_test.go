package datafile

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// noRowCap is a RowGroupRows no test reaches: the files of a writer without
// the row cap, to compare with.
const noRowCap = 1 << 40

// groupRowCounts is the rows of each row group of add's file.
func groupRowCounts(t *testing.T, s deltalog.Store, add deltalog.Add) []int64 {
	t.Helper()
	var n []int64
	for _, rg := range openFile(t, s, add).RowGroups() {
		n = append(n, rg.NumRows())
	}
	return n
}

// capped is n rows cut into row groups of limit rows.
func capped(n, limit int64) []int64 {
	var out []int64
	for ; n > 0; n -= limit {
		out = append(out, min(n, limit))
	}
	return out
}

// TestRowGroupRows: Write and WriteColumns close a row group at exactly
// RowGroupRows rows, on the column-wise path (flat schemas), the row-wise one
// (a list column) and per partition, while the byte rule still closes groups
// earlier. The rows read back as written, and the statistics are those of the
// same rows in one row group.
func TestRowGroupRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	prim := make([][]any, 2500)
	for i := range prim {
		prim[i] = randomPrimitiveRow(rng, i)
		prim[i][1] = int8(i % 3) // three partitions when partitioned by i8
	}
	list := &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("tags", &deltalog.ArrayType{ElementType: deltalog.TypeString, ContainsNull: true}, true),
	}}
	lists := make([][]any, 3000)
	for i := range lists {
		lists[i] = []any{int64(i), []any{fmt.Sprint(i), nil}}
	}
	cases := []struct {
		name  string
		opts  Options
		kinds string // WriteColumns's column kinds (columnsOf); "" writes rows
		rows  [][]any
		bytes bool // the byte rule closes groups first: sizes are not exact
	}{
		{name: "rows, cap below a batch", opts: Options{Schema: allPrimitivesSchema(), RowGroupRows: 300}, rows: prim},
		{name: "rows, cap above a batch", opts: Options{Schema: allPrimitivesSchema(), RowGroupRows: 1500}, rows: prim},
		{name: "columns, cap not a multiple of a batch", opts: Options{Schema: allPrimitivesSchema(), RowGroupRows: 1100}, kinds: "viiiivvssiiivvvi", rows: prim},
		{name: "columns, cap of one row", opts: Options{Schema: allPrimitivesSchema(), RowGroupRows: 1}, kinds: "viiiivvssiiivvvi", rows: prim[:20]},
		{name: "partitioned, a cap per file", opts: Options{Schema: allPrimitivesSchema(), PartitionColumns: []string{"i8"}, RowGroupRows: 250}, rows: prim},
		{name: "nested rows, row-wise path", opts: Options{Schema: list, RowGroupRows: 700}, rows: lists},
		{name: "the largest cap", opts: Options{Schema: allPrimitivesSchema(), RowGroupRows: math.MaxInt64, RowGroupSize: 16 << 10}, kinds: "viiiivvssiiivvvi", rows: prim, bytes: true},
		{name: "bytes before rows", opts: Options{Schema: allPrimitivesSchema(), RowGroupRows: 2000, RowGroupSize: 16 << 10}, rows: prim, bytes: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore()
			w, err := NewWriter(tc.opts)
			require.NoError(t, err)
			var adds []deltalog.Add
			if tc.kinds != "" {
				adds, err = w.WriteColumns(t.Context(), s, columnsOf(tc.rows, tc.kinds))
			} else {
				adds, err = w.Write(t.Context(), s, tc.rows)
			}
			require.NoError(t, err)

			one := tc.opts
			one.RowGroupRows, one.RowGroupSize = noRowCap, 1<<40
			want, wantRows, ws := writeRead(t, one, tc.rows)
			require.Len(t, adds, len(want))
			var got [][]any
			for i := range adds {
				require.Equal(t, want[i].PartitionValues, adds[i].PartitionValues)
				require.Len(t, groupRowCounts(t, ws, want[i]), 1, "the reference has one row group")
				groups := groupRowCounts(t, s, adds[i])
				rows := int64(0)
				for _, n := range groups {
					require.LessOrEqual(t, n, tc.opts.RowGroupRows)
					rows += n
				}
				if tc.bytes {
					require.Greater(t, len(groups), len(capped(rows, tc.opts.RowGroupRows)), "the byte rule cut more groups")
				} else {
					require.Equal(t, capped(rows, tc.opts.RowGroupRows), groups)
				}
				require.JSONEq(t, want[i].Stats, adds[i].Stats, "file %d", i)
				r, err := Read(t.Context(), s, &adds[i], tc.opts.Schema, ReadOptions{PartitionColumns: tc.opts.PartitionColumns})
				require.NoError(t, err)
				got = append(got, r...)
			}
			requireRowsEqual(t, wantRows, got)
		})
	}
}

// TestRowGroupRowsDefault: at the default cap a file of 2.1 million one-column
// rows has three row groups, 1Mi, 1Mi and the rest, whose values are the rows
// in order, with the statistics of the whole file.
func TestRowGroupRowsDefault(t *testing.T) {
	const n = 2_100_000
	schema := &deltalog.StructType{Fields: []deltalog.StructField{field("id", deltalog.TypeLong, false)}}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	s := newStore()
	w, err := NewWriter(Options{Schema: schema})
	require.NoError(t, err)
	adds, err := w.WriteColumns(t.Context(), s, []Column{{Ints: ids}})
	require.NoError(t, err)
	require.Len(t, adds, 1)
	require.JSONEq(t, fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":0},"maxValues":{"id":%d},"nullCount":{"id":0}}`, n, n-1), adds[0].Stats)

	f := openFile(t, s, adds[0])
	var groups []int64
	next := int64(0)
	buf := make([]parquet.Value, 4096)
	for _, rg := range f.RowGroups() {
		groups = append(groups, rg.NumRows())
		pages := rg.ColumnChunks()[0].Pages()
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			require.NoError(t, pageValues(p, buf, func(vals []parquet.Value) error {
				for _, v := range vals {
					if v.Int64() != next {
						return fmt.Errorf("row %d holds %d", next, v.Int64())
					}
					next++
				}
				return nil
			}))
			parquet.Release(p)
		}
		require.NoError(t, pages.Close())
	}
	require.Equal(t, int64(n), next)
	require.Equal(t, []int64{DefaultRowGroupRows, DefaultRowGroupRows, n - 2*DefaultRowGroupRows}, groups)
}

// TestCopyLiveWithRowGroupRows: a copy of many small files (a compaction, an
// absorb) closes a row group between input row groups, before one that would
// take it past RowGroupRows and after one that brings it there, so groups
// hold at most the cap unless one input group alone holds more; appended rows
// are cut at the cap exactly. Rows, their order, what each
// source gave and the statistics are those of the same copy in one row group;
// a copy under the cap stays one row group, and a single file copied alone
// keeps its row groups.
func TestCopyLiveWithRowGroupRows(t *testing.T) {
	schema := allPrimitivesSchema()
	rng := rand.New(rand.NewPCG(9, 9))
	s := newStore()
	type input struct {
		src  Source
		keep [][]any
		kept []int64 // kept rows of each of the file's row groups
	}
	next := 0
	// file writes n rows in row groups of at most inCap rows, dropping every
	// dropEvery-th (none when 0).
	file := func(n int, inCap int64, dropEvery int) input {
		rows := make([][]any, n)
		for j := range rows {
			rows[j] = randomPrimitiveRow(rng, next)
			next++
		}
		w, err := NewWriter(Options{Schema: schema, RowGroupRows: inCap})
		require.NoError(t, err)
		adds, err := w.Write(t.Context(), s, rows)
		require.NoError(t, err)
		require.Len(t, adds, 1)
		stored, err := Read(t.Context(), s, &adds[0], schema, ReadOptions{})
		require.NoError(t, err)
		drop := roaring64.New()
		if dropEvery > 0 {
			drop.AddMany(every(dropEvery)(n))
		}
		in := input{src: Source{Add: &adds[0], Drop: drop}}
		r := 0
		for _, g := range groupRowCounts(t, s, adds[0]) {
			k := int64(0)
			for ; g > 0; g-- {
				if !drop.Contains(uint64(r)) {
					in.keep = append(in.keep, stored[r])
					k++
				}
				r++
			}
			in.kept = append(in.kept, k)
		}
		return in
	}
	many := func() []input {
		var ins []input
		for i := range 12 {
			ins = append(ins, file(150+37*i, []int64{noRowCap, 100, 64}[i%3], i%4))
		}
		return ins
	}
	cases := []struct {
		name   string
		inputs []input
		more   int
		cap    int64
		one    bool // a single source copied alone: its row groups are kept
	}{
		{name: "many files above the cap", inputs: many(), cap: 500},
		{name: "many files and appended rows past the cap", inputs: many(), more: 1300, cap: 500},
		{name: "under the cap: one row group", inputs: many(), more: 20, cap: 1 << 20},
		{name: "an input group above the cap stays whole", inputs: []input{file(300, 100, 0), file(700, noRowCap, 5), file(200, noRowCap, 0)}, cap: 400},
		{name: "a file alone keeps its row groups", inputs: []input{file(900, 100, 3)}, cap: 250, one: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			more := make([][]any, tc.more)
			for i := range more {
				more[i] = randomPrimitiveRow(rng, next+i)
			}
			var srcs []Source
			var keep [][]any
			var want []SourceCopied
			for _, in := range tc.inputs {
				srcs = append(srcs, in.src)
				keep = append(keep, in.keep...)
				want = append(want, SourceCopied{SourceRows: openFile(t, s, *in.src.Add).NumRows(), Rows: int64(len(in.keep))})
			}
			copyWith := func(limit int64) (Copied, []int64) {
				w, err := NewWriter(Options{Schema: schema, RowGroupRows: limit})
				require.NoError(t, err)
				res, ok, err := w.CopyLiveWith(t.Context(), s, srcs, more, 3)
				require.NoError(t, err)
				require.True(t, ok)
				return res, groupRowCounts(t, s, *res.Add)
			}
			res, groups := copyWith(tc.cap)
			ref, refGroups := copyWith(noRowCap)

			require.Equal(t, want, res.Sources)
			require.Equal(t, ref.Sources, res.Sources)
			require.Equal(t, ref.Rows, res.Rows)
			require.Equal(t, ref.SourceRows, res.SourceRows)
			all := append(keep[:len(keep):len(keep)], more...)
			got, err := Read(t.Context(), s, res.Add, schema, ReadOptions{})
			require.NoError(t, err)
			fresh, wantRows, _ := writeRead(t, Options{Schema: schema, RowGroupRows: noRowCap}, all)
			requireRowsEqual(t, wantRows, got)
			require.JSONEq(t, fresh[0].Stats, res.Add.Stats)
			require.JSONEq(t, ref.Add.Stats, res.Add.Stats)

			// The row groups the rule gives: a group closes before an input
			// row group that would take it past the cap and after one that
			// brings it there; appended rows fill it to the cap exactly.
			var rule []int64
			open := int64(0)
			for _, in := range tc.inputs {
				for _, k := range in.kept {
					if open > 0 && open+k > tc.cap {
						rule = append(rule, open)
						open = 0
					}
					open += k
					if open >= tc.cap || tc.one && open > 0 {
						rule = append(rule, open)
						open = 0
					}
				}
			}
			for m := int64(tc.more); m > 0; {
				take := min(m, tc.cap-open)
				open += take
				m -= take
				if open >= tc.cap {
					rule = append(rule, open)
					open = 0
				}
			}
			if open > 0 {
				rule = append(rule, open)
			}
			require.Equal(t, rule, groups)
			if !tc.one {
				require.Len(t, refGroups, 1, "without the cap a copy of several files is one row group")
			}
			biggest := int64(0)
			for _, in := range tc.inputs {
				biggest = max(biggest, slices.Max(in.kept))
			}
			for _, n := range groups {
				require.LessOrEqual(t, n, max(tc.cap, biggest))
			}
			if int64(len(all)) > 2*tc.cap && !tc.one {
				require.Greater(t, len(groups), 2)
			}
		})
	}
}
