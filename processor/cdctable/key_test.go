package cdctable

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// TestAppendKeyBytes pins the key encoding: keys are stored in tombstone
// files and the key index's runs, so a change of any byte here is a change
// of the on-disk format.
func TestAppendKeyBytes(t *testing.T) {
	tests := []struct {
		name string
		vals []any
		want string
	}{
		{"null", []any{nil}, "00"},
		{"bools", []any{false, true}, "01000101"},
		{"ints of every width alike", []any{int8(-1), int16(2), int32(3), int64(-4)},
			"02ffffffffffffffff" + "020000000000000002" + "020000000000000003" + "02fffffffffffffffc"},
		{"floats widen", []any{float32(1.5), float64(-2)}, "033ff8000000000000" + "03c000000000000000"},
		{"string", []any{"ab"}, "04026162"},
		{"binary", []any{[]byte{0xff}}, "0501ff"},
		{"empty string", []any{""}, "0400"},
		{"decimal", []any{decimal128.Num{Hi: -1, Lo: 2}}, "06ffffffffffffffff0000000000000002"},
		{"composite", []any{int32(7), "x", nil}, "020000000000000007" + "040178" + "00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendKey([]byte{0xaa}, tc.vals)
			require.NoError(t, err)
			require.Equal(t, "aa"+tc.want, hex.EncodeToString(got))
		})
	}
	_, err := AppendKey(nil, []any{struct{}{}})
	require.ErrorContains(t, err, "unsupported key value type struct {}")
}

// TestAppendFlatKeyMatchesAppendKey checks that a key read flat from a data
// file encodes as the value Read returns for it does.
func TestAppendFlatKeyMatchesAppendKey(t *testing.T) {
	tests := []struct {
		name string
		col  datafile.FlatColumn
		vals []any // per row, as Read returns them
	}{
		{"int", datafile.FlatColumn{Kind: datafile.FlatInt, Ints: []int64{-4, 9}}, []any{int64(-4), int32(9)}},
		{"string", datafile.FlatColumn{Kind: datafile.FlatString, Bytes: [][]byte{[]byte("ab"), {}}}, []any{"ab", ""}},
		{"binary", datafile.FlatColumn{Kind: datafile.FlatBinary, Bytes: [][]byte{{0xff}, nil}, Null: []bool{false, true}}, []any{[]byte{0xff}, nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for row, v := range tc.vals {
				want, err := AppendKey(nil, []any{v})
				require.NoError(t, err)
				require.Equal(t, want, AppendFlatKey(nil, tc.col, row), "row %d", row)
			}
		})
	}
}
