package datafile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// TestDeltaEncodings: with Options.DeltaEncodings every string and binary
// column is written DELTA_BYTE_ARRAY and every integer, date and timestamp
// column DELTA_BINARY_PACKED, and the files hold the rows, statistics and
// partition values of the default encodings (read back, compared), by Write
// and by WriteColumns: every primitive with extremes and nulls, rising
// positions and offsets over several row groups and files, a struct and a
// list, partitions and column mapping.
func TestDeltaEncodings(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	prims := allPrimitivesSchema()
	primRow := func(i int) []any {
		maybe := func(v any) any {
			if rng.IntN(6) == 0 {
				return nil
			}
			return v
		}
		ints := []int64{math.MinInt64, math.MaxInt64, 0, -1, int64(i) * 1_000_003, rng.Int64() - rng.Int64()}
		x := ints[rng.IntN(len(ints))]
		return []any{
			maybe(i%2 == 0), maybe(int8(x)), maybe(int16(x)), maybe(int32(x)), maybe(x), maybe(float32(i) / 3), maybe(float64(x) / 7),
			maybe(fmt.Sprintf("s%06d-%x", i, rng.Uint32())), maybe([]byte{byte(i), 0, 255, byte(rng.IntN(256))}),
			maybe(int32(rng.IntN(day9999-day0001) + day0001)), maybe(x / 1000), maybe(int64(i) * 1_000_000),
			maybe(decimal128.FromInt64(int64(i))), maybe(decimal128.FromInt64(-int64(i))), maybe(decimal128.FromInt64(x)), int64(i),
		}
	}
	log := &deltalog.StructType{Fields: []deltalog.StructField{
		field("pos", deltalog.TypeString, false),
		field("lsn", deltalog.TypeString, true),
		field("offset", deltalog.TypeLong, false),
		field("part", deltalog.TypeInteger, false),
		field("topic", deltalog.TypeString, false),
		field("day", deltalog.TypeDate, true),
	}}
	logRow := func(i int) []any {
		var lsn any
		if i%5 != 0 {
			lsn = fmt.Sprintf("%020x", 0x1000+i/3)
		}
		return []any{fmt.Sprintf("%020x%020x%016x", 0x1000+i/3, 0x2000+i, i%3), lsn, int64(1_000_000 + i), int32(i % 3), "db.dbo.items", int32(20_000 + i/4000)}
	}
	nested := &deltalog.StructType{Fields: []deltalog.StructField{
		field("id", deltalog.TypeLong, false),
		field("st", &deltalog.StructType{Fields: []deltalog.StructField{field("x", deltalog.TypeInteger, true), field("y", deltalog.TypeString, true)}}, true),
		field("tags", &deltalog.ArrayType{ElementType: deltalog.TypeString, ContainsNull: true}, true),
	}}
	nestedRow := func(i int) []any {
		var st, tags any
		if i%3 > 0 {
			st = []any{int32(i), fmt.Sprint("y", i)}
		}
		if i%4 > 0 {
			tags = []any{"a", nil, fmt.Sprint(i)}
		}
		return []any{int64(i), st, tags}
	}
	rows := func(n int, row func(int) []any) [][]any {
		out := make([][]any, n)
		for i := range out {
			out[i] = row(i)
		}
		return out
	}
	mappedLog := &deltalog.StructType{}
	for i, f := range log.Fields {
		m := mapped(f.Name+" (mapped)", f.Type, i+1, fmt.Sprintf("col-%d", i+1))
		m.Nullable = f.Nullable
		mappedLog.Fields = append(mappedLog.Fields, m)
	}
	cases := []struct {
		name  string
		opts  Options
		kinds string // WriteColumns' kinds (see columnsOf); "" for Write only
		rows  [][]any
	}{
		{"every primitive", Options{Schema: prims}, "viiiivvssiiivvvi", rows(3000, primRow)},
		{"rising positions, row groups and files", Options{Schema: log, RowGroupSize: 16 << 10, TargetFileSize: 40 << 10}, "ssiisi", rows(20_000, logRow)},
		{"partitioned, column mapping", Options{Schema: mappedLog, PartitionColumns: []string{"day (mapped)"}, Properties: map[string]string{propMappingMode: "name"}}, "ssiisi", rows(12_000, logRow)},
		{"struct and list", Options{Schema: nested}, "", rows(2000, nestedRow)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plainAdds, want, _ := writeRead(t, tc.opts, tc.rows)
			opts := tc.opts
			opts.DeltaEncodings = true
			type write struct {
				name string
				fn   func(*Writer, deltalog.Store) ([]deltalog.Add, error)
			}
			writes := []write{{"Write", func(w *Writer, s deltalog.Store) ([]deltalog.Add, error) { return w.Write(t.Context(), s, tc.rows) }}}
			if tc.kinds != "" {
				writes = append(writes, write{"WriteColumns", func(w *Writer, s deltalog.Store) ([]deltalog.Add, error) {
					return w.WriteColumns(t.Context(), s, columnsOf(tc.rows, tc.kinds))
				}})
			}
			for _, wr := range writes {
				s := newStore()
				w, err := NewWriter(opts)
				require.NoError(t, err)
				adds, err := wr.fn(w, s)
				require.NoError(t, err)
				require.Len(t, adds, len(plainAdds), wr.name)
				if tc.opts.TargetFileSize > 0 {
					require.Greater(t, len(adds), 2, "several files")
				}
				var got [][]any
				for i := range adds {
					require.Equal(t, plainAdds[i].PartitionValues, adds[i].PartitionValues, wr.name)
					require.Equal(t, plainAdds[i].Stats, adds[i].Stats, "%s: file %d's statistics", wr.name, i)
					r, err := Read(t.Context(), s, &adds[i], opts.Schema, ReadOptions{Properties: opts.Properties, PartitionColumns: opts.PartitionColumns})
					require.NoError(t, err)
					got = append(got, r...)
					requireEncodings(t, openFile(t, s, adds[i]).Metadata(), opts, true)
				}
				require.Equal(t, want, got, wr.name)
			}
		})
	}
	// Without the option, none of the delta encodings appears.
	s := newStore()
	w, err := NewWriter(Options{Schema: log})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), s, rows(100, logRow))
	require.NoError(t, err)
	requireEncodings(t, openFile(t, s, adds[0]).Metadata(), Options{Schema: log}, false)
}

// requireEncodings checks the data encodings of every top-level primitive
// column of a file: the delta ones where the options ask for them and the
// type allows, none elsewhere.
func requireEncodings(t *testing.T, md *format.FileMetaData, opts Options, delta bool) {
	t.Helper()
	mode, err := parseMappingMode(opts.Properties)
	require.NoError(t, err)
	byName := map[string]deltalog.Type{}
	for i := range opts.Schema.Fields {
		f := &opts.Schema.Fields[i]
		byName[physicalName(f, mode)] = f.Type
	}
	checked := 0
	for _, rg := range md.RowGroups {
		for _, c := range rg.Columns {
			typ, ok := byName[c.MetaData.PathInSchema[0]]
			if !ok || len(c.MetaData.PathInSchema) > 1 {
				continue
			}
			checked++
			var want format.Encoding = -1
			switch typ {
			case deltalog.TypeString, deltalog.TypeBinary:
				want = format.DeltaByteArray
			case deltalog.TypeByte, deltalog.TypeShort, deltalog.TypeInteger, deltalog.TypeLong, deltalog.TypeDate, deltalog.TypeTimestamp, deltalog.TypeTimestampNTZ:
				want = format.DeltaBinaryPacked
			}
			has := slices.ContainsFunc(c.MetaData.Encoding, func(e format.Encoding) bool {
				return e == format.DeltaByteArray || e == format.DeltaBinaryPacked
			})
			if !delta || want < 0 {
				require.False(t, has, "column %s (%s): %v", c.MetaData.PathInSchema, typ, c.MetaData.Encoding)
				continue
			}
			require.Contains(t, c.MetaData.Encoding, want, "column %s (%s)", c.MetaData.PathInSchema, typ)
		}
	}
	require.Positive(t, checked, "top-level columns found by name")
}
