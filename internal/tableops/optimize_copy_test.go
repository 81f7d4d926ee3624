package tableops

import (
	"bytes"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// TestCompactedCopyMatchesRewrite compacts the same inputs, some with
// deletion vectors, by copying and by rewriting: the files must hold the same
// rows in the same order, with the same row counts per input and the same
// statistics. An input written with another schema makes the copy step
// aside, and the rewrite reads it with the table's schema.
func TestCompactedCopyMatchesRewrite(t *testing.T) {
	ctx := t.Context()
	store := memstore.New(memstore.Options{})
	long := func(names ...string) *deltalog.StructType {
		s := &deltalog.StructType{}
		for _, n := range names {
			s.Fields = append(s.Fields, deltalog.StructField{Name: n, Type: deltalog.TypeLong, Nullable: true})
		}
		return s
	}
	schema, older := long("id", "v"), long("id")
	write := func(s *deltalog.StructType, rows ...[]any) deltalog.Add {
		t.Helper()
		w, err := datafile.NewWriter(datafile.Options{Schema: s})
		require.NoError(t, err)
		adds, err := w.Write(ctx, store, rows)
		require.NoError(t, err)
		require.Len(t, adds, 1)
		return adds[0]
	}
	withDV := func(add deltalog.Add, rows ...uint64) deltalog.Add {
		t.Helper()
		descs, err := deltalog.WriteDeletionVectors(ctx, store, "", []*roaring64.Bitmap{roaring64.BitmapOf(rows...)})
		require.NoError(t, err)
		add.DeletionVector = &descs[0]
		return add
	}
	a := withDV(write(schema, []any{int64(3), int64(30)}, []any{int64(1), nil}, []any{int64(2), int64(20)}), 2)
	b := write(schema, []any{int64(5), int64(50)}, []any{int64(4), int64(40)})
	c := withDV(write(schema, []any{int64(7), int64(70)}, []any{int64(6), int64(60)}), 0, 1)
	d := write(older, []any{int64(8)})

	compact := func(inputs []deltalog.Add, copy bool) (*compacted, bool) {
		t.Helper()
		w, err := datafile.NewWriter(datafile.Options{Schema: schema, TargetFileSize: 1 << 20, NoDataChange: true})
		require.NoError(t, err)
		c := &compacted{inputs: inputs}
		if copy {
			ok, err := c.copy(ctx, store, w, deltalog.NewDVReader(store))
			require.NoError(t, err)
			return c, ok
		}
		snap := snapshotOf(t, schema)
		require.NoError(t, c.rewrite(ctx, store, w, snap, nil))
		return c, true
	}
	read := func(c *compacted) [][]any {
		t.Helper()
		var rows [][]any
		for i := range c.outputs {
			require.False(t, c.outputs[i].DataChange)
			r, err := datafile.Read(ctx, store, &c.outputs[i], schema, datafile.ReadOptions{})
			require.NoError(t, err)
			rows = append(rows, r...)
		}
		return rows
	}
	stats := func(c *compacted) []deltalog.Stats {
		t.Helper()
		var out []deltalog.Stats
		for _, o := range c.outputs {
			st, ok, err := deltalog.ParseStats(o.Stats)
			require.NoError(t, err)
			require.True(t, ok)
			out = append(out, st)
		}
		return out
	}

	inputs := []deltalog.Add{a, b, c}
	copied, ok := compact(inputs, true)
	require.True(t, ok, "inputs of the table's schema are copied")
	rewritten, _ := compact(inputs, false)
	want := [][]any{{int64(3), int64(30)}, {int64(1), nil}, {int64(5), int64(50)}, {int64(4), int64(40)}}
	require.Equal(t, want, read(rewritten))
	require.Equal(t, want, read(copied))
	require.Equal(t, []int64{2, 2, 0}, copied.live)
	require.Equal(t, rewritten.live, copied.live)
	require.Equal(t, stats(rewritten), stats(copied))

	copied, ok = compact([]deltalog.Add{c}, true)
	require.True(t, ok)
	require.Empty(t, copied.outputs, "no file for an input with no live row")
	require.Equal(t, []int64{0}, copied.live)

	_, ok = compact([]deltalog.Add{a, d}, true)
	require.False(t, ok, "an input of another schema is not copied")
	rewritten, _ = compact([]deltalog.Add{a, d}, false)
	require.Equal(t, [][]any{{int64(3), int64(30)}, {int64(1), nil}, {int64(8), nil}}, read(rewritten))
}

// snapshotOf is a snapshot of a new table of schema, for the rewrite's
// metadata and schema.
func snapshotOf(t testing.TB, schema *deltalog.StructType) *deltalog.Snapshot {
	t.Helper()
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), memstore.New(memstore.Options{}))
	require.NoError(t, err)
	_, err = tbl.Commit(t.Context(), nil, []deltalog.Action{
		{Protocol: new(deltalog.MinimalProtocol(schema, nil))},
		{Metadata: &deltalog.Metadata{ID: "11111111-2222-3333-4444-555555555555", Format: deltalog.Format{Provider: "parquet"}, SchemaString: ss}},
	}, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	return snap
}

// BenchmarkCompactBin compacts one bin of 20 files of 10,000 rows (a long
// key, a string, an integer and a timestamp), a tenth of each file's rows
// deleted by its vector, by copying and by rewriting.
//
//	go test ./internal/tableops -run '^$' -bench CompactBin -benchmem
func BenchmarkCompactBin(b *testing.B) {
	ctx := b.Context()
	store := memstore.New(memstore.Options{})
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong},
		{Name: "name", Type: deltalog.TypeString, Nullable: true},
		{Name: "qty", Type: deltalog.TypeInteger, Nullable: true},
		{Name: "at", Type: deltalog.TypeTimestampNTZ, Nullable: true},
	}}
	w, err := datafile.NewWriter(datafile.Options{Schema: schema})
	require.NoError(b, err)
	const files, perFile = 20, 10_000
	var inputs []deltalog.Add
	for f := range files {
		rows := make([][]any, perFile)
		gone := roaring64.New()
		for r := range rows {
			id := int64(f*perFile + r)
			rows[r] = []any{id, "customer name " + strconv.FormatInt(id, 10), int32(r % 100), time.UnixMicro(1_700_000_000_000_000 + id).UTC()}
			if r%10 == 0 {
				gone.Add(uint64(r))
			}
		}
		adds, err := w.Write(ctx, store, rows)
		require.NoError(b, err)
		descs, err := deltalog.WriteDeletionVectors(ctx, store, "", []*roaring64.Bitmap{gone})
		require.NoError(b, err)
		adds[0].DeletionVector = &descs[0]
		inputs = append(inputs, adds[0])
	}
	snap := snapshotOf(b, schema)
	for _, bc := range []struct {
		name string
		run  func(c *compacted, w *datafile.Writer) error
	}{
		{"copy", func(c *compacted, w *datafile.Writer) error {
			ok, err := c.copy(ctx, store, w, deltalog.NewDVReader(store))
			if err == nil && !ok {
				b.Fatal("not copied")
			}
			return err
		}},
		{"rewrite", func(c *compacted, w *datafile.Writer) error { return c.rewrite(ctx, store, w, snap, nil) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w, err := datafile.NewWriter(datafile.Options{Schema: schema, TargetFileSize: 1 << 30, NoDataChange: true})
			require.NoError(b, err)
			rows := 0
			for b.Loop() {
				c := &compacted{inputs: inputs}
				require.NoError(b, bc.run(c, w))
				for _, n := range c.live {
					rows += int(n)
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// smallFiles writes files files of perFile narrow rows (a long key and a
// small integer), as a bulk load leaves them, and returns their adds.
func smallFiles(tb testing.TB, store deltalog.Store, files, perFile int) (*deltalog.StructType, []deltalog.Add) {
	tb.Helper()
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong},
		{Name: "qty", Type: deltalog.TypeInteger, Nullable: true},
	}}
	w, err := datafile.NewWriter(datafile.Options{Schema: schema})
	require.NoError(tb, err)
	var inputs []deltalog.Add
	ids, qty := make([]int64, perFile), make([]int64, perFile)
	for f := range files {
		for r := range ids {
			ids[r] = int64(f*perFile + r)
			qty[r] = int64(r % 100)
		}
		adds, err := w.WriteColumns(tb.Context(), store, []datafile.Column{{Ints: ids}, {Ints: qty}})
		require.NoError(tb, err)
		require.Len(tb, adds, 1)
		inputs = append(inputs, adds[0])
	}
	return schema, inputs
}

// TestCompactedCopyRowGroups: a compaction of small files past the default
// row group bound (1,048,576 rows) closes row groups between its inputs, each
// within the bound, the rows in input order.
func TestCompactedCopyRowGroups(t *testing.T) {
	store := memstore.New(memstore.Options{})
	schema, inputs := smallFiles(t, store, 6, 250_000)
	w, err := datafile.NewWriter(datafile.Options{Schema: schema, TargetFileSize: 1 << 30, NoDataChange: true})
	require.NoError(t, err)
	c := &compacted{inputs: inputs}
	ok, err := c.copy(t.Context(), store, w, deltalog.NewDVReader(store))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []int64{250_000, 250_000, 250_000, 250_000, 250_000, 250_000}, c.live)
	require.Len(t, c.outputs, 1)
	f := parquetFooter(t, store, c.outputs[0])
	var groups []int64
	next := int64(0)
	for _, rg := range f.RowGroups() {
		groups = append(groups, rg.NumRows())
		pages := rg.ColumnChunks()[0].Pages()
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			ids := make([]int64, p.NumValues())
			_, err = p.Values().(parquet.Int64Reader).ReadInt64s(ids)
			if err != io.EOF {
				require.NoError(t, err)
			}
			for _, id := range ids {
				if id != next {
					require.Equal(t, next, id, "row %d", next)
				}
				next++
			}
		}
		require.NoError(t, pages.Close())
	}
	require.Equal(t, int64(1_500_000), next)
	require.Equal(t, []int64{1_000_000, 500_000}, groups)
}

// BenchmarkCompactSmallFiles compacts one bin of 40 files of 250,000 narrow
// rows (smallFiles) by copying: 10 million rows into one file. row_groups and
// file_bytes are the output's row groups and size.
//
//	go test ./internal/tableops -run '^$' -bench CompactSmallFiles -benchtime 3x
func BenchmarkCompactSmallFiles(b *testing.B) {
	ctx := b.Context()
	store := memstore.New(memstore.Options{})
	schema, inputs := smallFiles(b, store, 40, 250_000)
	w, err := datafile.NewWriter(datafile.Options{Schema: schema, TargetFileSize: 1 << 30, NoDataChange: true})
	require.NoError(b, err)
	rows, groups, size := 0, 0, int64(0)
	for b.Loop() {
		c := &compacted{inputs: inputs}
		ok, err := c.copy(ctx, store, w, deltalog.NewDVReader(store))
		require.NoError(b, err)
		require.True(b, ok, "copied")
		require.Len(b, c.outputs, 1)
		for _, n := range c.live {
			rows += int(n)
		}
		groups, size = len(parquetFooter(b, store, c.outputs[0]).RowGroups()), c.outputs[0].Size
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(groups), "row_groups")
	b.ReportMetric(float64(size), "file_bytes")
}

// parquetFooter opens the data file of add.
func parquetFooter(tb testing.TB, store deltalog.Store, add deltalog.Add) *parquet.File {
	tb.Helper()
	rc, err := store.Get(tb.Context(), add.Path)
	require.NoError(tb, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(tb, err)
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(tb, err)
	return f
}
