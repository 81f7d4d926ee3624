package merge

import (
	"io"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// histRowOneByOne is a version as a history table row, as it was built
// before the rows were kept column by column: the reference hRows must
// equal.
func histRowOneByOne(ts *hSchema, v *hVersion) []any {
	row := make([]any, len(ts.schema.Fields))
	copy(row, v.vals)
	m := row[ts.nsrc:]
	m[0], m[1], m[2], m[4], m[5] = v.startAt, v.endAt, v.start.Hex(), v.last.Hex(), v.lastAt
	if v.end != nil {
		m[3] = v.end.Hex()
	}
	return row
}

// TestHistoryRowsSameFilesAsRows: the rows a batch writes, kept column by
// column, make the same files (bytes, statistics, sizes) as the same rows
// given one by one to datafile.Write, on rows that mix closed and open
// versions, absent commit times, a version's last position at its start or
// after it, successive rows sharing a position, null and absent source
// values (a version older than a column), a source column of values of
// another Go type than its typed column takes, and stored rows kept when
// their file is rewritten (timestamps as datafile.Read returns them).
func TestHistoryRowsSameFilesAsRows(t *testing.T) {
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeInteger},
		{Name: "name", Type: deltalog.TypeString, Nullable: true},
		{Name: "price", Type: deltalog.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "qty", Type: deltalog.TypeLong, Nullable: true},
		{Name: "added", Type: deltalog.TypeString, Nullable: true},
	}}
	schema.Fields = append(schema.Fields, cdctable.HistoryMetaFields()...)
	ts := &hSchema{schema: schema, nsrc: len(schema.Fields) - cdctable.HistoryMetaCount}
	pos := func(n int) codecs.Position {
		var l codecs.LSN
		l[8], l[9] = byte(n>>8), byte(n)
		return codecs.Position{Commit: l, Change: l, Serial: int64(n % 3)}
	}
	for _, tc := range []struct {
		name   string
		stored bool // some rows are stored rows
		qtyInt bool // qty values of another Go type: the column stays values
	}{
		{name: "versions"},
		{name: "versions and stored rows", stored: true},
		{name: "a source column of another Go type", qtyInt: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			maybe := func(v any) any {
				if rng.IntN(5) == 0 {
					return nil
				}
				return v
			}
			rows := newHRows(ts.nsrc, 16)
			var want [][]any
			n := 0
			for range 3000 {
				n += 1 + rng.IntN(2)
				var qty any = int64(rng.IntN(100))
				if tc.qtyInt {
					qty = rng.IntN(100)
				}
				vals := []any{int32(rng.IntN(500)), maybe("n" + string(rune('a'+rng.IntN(26)))), maybe(decimal128.FromInt64(rng.Int64N(1e6))), maybe(qty), maybe("x")}
				if rng.IntN(6) == 0 {
					vals = vals[:ts.nsrc-1] // older than the column added
				}
				at := func() any { return maybe(int64(1_700_000_000_000_000 + rng.Int64N(1e9))) }
				v := &hVersion{vals: vals, start: pos(n), startAt: at(), last: pos(n), lastAt: at()}
				if rng.IntN(3) == 0 {
					v.last = pos(n + 1)
				}
				if rng.IntN(2) == 0 {
					// Closed: its end is the next row's start.
					end := pos(n + 2)
					v.end, v.endAt = &end, at()
				}
				if tc.stored && rng.IntN(4) == 0 {
					row := histRowOneByOne(ts, v)
					m := row[ts.nsrc:]
					for _, c := range []int{hStartAt, hEndAt, hLastAt} {
						if x, ok := m[c].(int64); ok && rng.IntN(2) == 0 {
							m[c] = time.UnixMicro(x).UTC()
						}
					}
					rows.addStored(row, ts.nsrc)
					for _, c := range []int{hStartAt, hEndAt, hLastAt} {
						m[c] = micros(m[c])
					}
					want = append(want, row)
					continue
				}
				rows.addVersion(v)
				want = append(want, histRowOneByOne(ts, v))
			}
			require.Equal(t, len(want), rows.n)

			store := memstore.New(memstore.Options{})
			now := func() time.Time { return time.Unix(1_750_000_000, 0) }
			w, err := datafile.NewWriter(datafile.Options{Schema: schema, Now: now})
			require.NoError(t, err)
			wantAdds, err := w.Write(t.Context(), store, want)
			require.NoError(t, err)
			cols := rows.columns(ts)
			if !tc.qtyInt {
				require.NotNil(t, cols[3].Ints, "qty typed")
			} else {
				require.NotNil(t, cols[3].Values, "qty left as values")
			}
			require.NotNil(t, cols[ts.nsrc+hStartPos].Strs, "positions typed")
			gotAdds, err := w.WriteColumns(t.Context(), store, cols)
			require.NoError(t, err)
			require.Len(t, gotAdds, len(wantAdds))
			for i := range wantAdds {
				require.Equal(t, wantAdds[i].Stats, gotAdds[i].Stats)
				require.Equal(t, wantAdds[i].Size, gotAdds[i].Size)
				require.Equal(t, histFileBytes(t, store, wantAdds[i]), histFileBytes(t, store, gotAdds[i]), "file %d", i)
			}
		})
	}
}

func histFileBytes(t *testing.T, s deltalog.Store, add deltalog.Add) []byte {
	t.Helper()
	key, err := url.PathUnescape(add.Path)
	require.NoError(t, err)
	rc, err := s.Get(t.Context(), key)
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return b
}
