package merge

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestReadKeyEntriesFlat compares readKeyEntries, which reads keys through
// datafile.ReadFlat where it can, with the path through Read's rows, on
// composite keys of every type ReadFlat reads (nulls, extremes, empty
// strings and bytes), a deletion vector, a bad position, and a key of a type
// ReadFlat leaves to Read.
func TestReadKeyEntriesFlat(t *testing.T) {
	ctx := t.Context()
	store := memstore.New(memstore.Options{})
	pos := func(i int) string { return fmt.Sprintf("%0*x", codecs.PositionHexLen, i) }
	for _, tc := range []struct {
		name    string
		types   []deltalog.Type
		rows    [][]any // key values; a position is appended
		badPos  string  // the position of every row, when set
		flat    bool
		deleted []uint64
	}{
		{"integers of every width", []deltalog.Type{deltalog.TypeByte, deltalog.TypeShort, deltalog.TypeInteger, deltalog.TypeDate, deltalog.TypeLong},
			[][]any{{int8(-1), int16(-300), int32(math.MinInt32), int32(19000), int64(math.MaxInt64)}, {int8(7), nil, int32(0), nil, int64(math.MinInt64)}},
			"", true, nil},
		{"strings and bytes", []deltalog.Type{deltalog.TypeString, deltalog.TypeBinary},
			[][]any{{"order-1", []byte{0, 1}}, {"", []byte{}}, {nil, nil}, {"é\x00", []byte("x")}},
			"", true, []uint64{1}},
		{"a short position", []deltalog.Type{deltalog.TypeLong}, [][]any{{int64(1)}}, "not hex", true, nil},
		{"a position of no hex", []deltalog.Type{deltalog.TypeLong}, [][]any{{int64(1)}}, strings.Repeat("z", codecs.PositionHexLen), true, nil},
		{"a decimal key", []deltalog.Type{deltalog.DecimalType{Precision: 10, Scale: 2}}, [][]any{{nil}}, "", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := &deltalog.StructType{}
			var keys []string
			for i, ty := range tc.types {
				keys = append(keys, fmt.Sprintf("k%d", i))
				schema.Fields = append(schema.Fields, deltalog.StructField{Name: keys[i], Type: ty, Nullable: true})
			}
			schema.Fields = append(schema.Fields, deltalog.StructField{Name: cdctable.ColPosition, Type: deltalog.TypeString, Nullable: true})
			var rows [][]any
			for i, r := range tc.rows {
				p := pos(i + 1)
				if tc.badPos != "" {
					p = tc.badPos
				}
				rows = append(rows, append(append([]any(nil), r...), p))
			}
			w, err := datafile.NewWriter(datafile.Options{Schema: schema})
			require.NoError(t, err)
			adds, err := w.Write(ctx, store, rows)
			require.NoError(t, err)
			add := adds[0]
			if tc.deleted != nil {
				descs, err := deltalog.WriteDeletionVectors(ctx, store, "", []*roaring64.Bitmap{roaring64.BitmapOf(tc.deleted...)})
				require.NoError(t, err)
				add.DeletionVector = &descs[0]
			}
			st := &tableState{Layout: cdctable.Layout{Schema: schema, KeyNames: keys}}
			cols := append(append([]string(nil), keys...), cdctable.ColPosition)
			_, _, flat, err := datafile.ReadFlat(ctx, store, &add, schema, cols, datafile.ReadOptions{})
			require.NoError(t, err)
			require.Equal(t, tc.flat, flat, "read by ReadFlat")
			dvs := deltalog.NewDVReader(store)
			got, err := readKeyEntries(ctx, store, dvs, st, &add)
			want, wantErr := readKeyEntriesRows(ctx, store, dvs, st, &add, cols)
			if tc.badPos != "" {
				require.EqualError(t, err, wantErr.Error())
				return
			}
			require.NoError(t, wantErr)
			require.NoError(t, err)
			require.Len(t, want, len(tc.rows)-len(tc.deleted))
			require.Equal(t, want, got)
		})
	}
}
