package cdctable

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestStoredForms pins the bytes a table stores: a position in the
// ColPosition column (hex) and in key-index runs (binary), a tombstone line
// and the partition names. A change here is a change of the on-disk format.
func TestStoredForms(t *testing.T) {
	p := codecs.Position{
		Commit: codecs.LSN{0, 0, 0, 0x2b, 0, 0, 0x0e, 0x10, 0, 5},
		Change: codecs.LSN{0, 0, 0, 0x2b, 0, 0, 0x0e, 0x10, 0, 3},
		Serial: 1,
	}
	const wantHex = "0000002b00000e100005" + "0000002b00000e100003" + "0000000000000001"
	require.Equal(t, wantHex, p.Hex())
	require.Equal(t, wantHex, hex.EncodeToString(p.AppendBinary(nil)))
	back, err := codecs.PositionFromHex(wantHex)
	require.NoError(t, err)
	require.Equal(t, p, back)

	key, err := AppendKey(nil, []any{int64(7), "a"})
	require.NoError(t, err)
	require.Equal(t, `{"k":"AgAAAAAAAAAHBAFh","p":"`+wantHex+`","t":1700000000000}`+"\n",
		string(AppendTombstoneLine(nil, string(key), p, 1_700_000_000_000, false)))
	require.Equal(t, `{"p":"`+wantHex+`","t":0,"f":true}`+"\n", string(AppendTombstoneLine(nil, "", p, 0, true)))

	v, ok := TombstoneBatchVersion("00000000000000000042.5f0c.json")
	require.True(t, ok)
	require.EqualValues(t, 42, v)
	for _, name := range []string{TombstoneCompactedPrefix + "5f0c.json", TombstoneFloorPrefix + "5f0c.json"} {
		_, ok := TombstoneBatchVersion(name)
		require.False(t, ok, name)
	}
}

func TestLayoutOf(t *testing.T) {
	schema := `{"type":"struct","fields":[` +
		`{"name":"id","type":"long","nullable":false,"metadata":{}},` +
		`{"name":"_cdc_position","type":"string","nullable":false,"metadata":{}},` +
		`{"name":"_cdc_op","type":"string","nullable":false,"metadata":{}},` +
		`{"name":"_cdc_commit_time","type":"timestamp","nullable":true,"metadata":{}}]}`
	meta := func(props map[string]string) deltalog.Metadata {
		return deltalog.Metadata{SchemaString: schema, Configuration: props}
	}
	l, err := LayoutOf(meta(map[string]string{PropKeyColumns: `["id"]`}))
	require.NoError(t, err)
	require.Equal(t, []int{0}, l.KeyFields)
	require.Equal(t, []int{1, 2, 3, -1}, []int{l.PosField, l.OpField, l.TimeField, l.DeletedField})
	key, err := l.AppendRowKey(nil, []any{int64(7), "pos", "c", int64(0)})
	require.NoError(t, err)
	require.Equal(t, "020000000000000007", hex.EncodeToString(key))

	for name, props := range map[string]map[string]string{
		"no key property":  nil,
		"bad key property": {PropKeyColumns: `[]`},
		"missing key":      {PropKeyColumns: `["nope"]`},
	} {
		_, err := LayoutOf(meta(props))
		require.ErrorIs(t, err, ErrNotCDCTable, name)
	}
}

func TestChangeLogMetaCount(t *testing.T) {
	require.Len(t, ChangeLogMetaFields(), ChangeLogMetaCount)
	for _, soft := range []bool{false, true} {
		for _, f := range MetaFields(soft) {
			require.True(t, IsMetaColumn(f.Name), f.Name)
		}
	}
}
