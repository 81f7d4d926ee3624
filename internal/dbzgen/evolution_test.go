package dbzgen_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

func TestSQLDefaultsFlipTheUnion(t *testing.T) {
	def := dbzgen.TableDef{Database: "d", Schema: "dbo", Name: "t", Key: []string{"id"}, Columns: []dbzgen.Column{
		{Name: "id", Type: "int"},
		{Name: "qty", Type: "int", Nullable: true, Default: 0},
		{Name: "state", Type: "varchar(10)", Nullable: true, Default: "new"},
		{Name: "level", Type: "smallint", Default: 3},
	}}
	for _, ignore := range []bool{false, true} {
		opts := dbzgen.DefaultOptions()
		opts.IgnoreDefaultForNullables = ignore
		h := newHarness(t, opts)
		tab, err := h.gen.Table(def)
		require.NoError(t, err)
		require.Contains(t, tab.ValueSchema(), `{"name":"qty","type":[{"type":"int","connect.default":0},"null"],"default":0}`)
		require.Contains(t, tab.ValueSchema(), `{"name":"level","type":{"type":"int","connect.type":"int16","connect.default":3},"default":3}`)

		_, value, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: tab, Op: dbzgen.OpCreate, After: dbzgen.Row{"id": 1, "qty": nil, "state": "x", "level": nil}})
		require.NoError(t, err)
		after := image(t, h.decode(t, value), "after")
		require.Equal(t, "x", after["state"])
		require.Equal(t, int32(3), after["level"], "NOT NULL with a default")
		if ignore {
			require.Nil(t, after["qty"], "ignore.default.for.nullables keeps NULL")
		} else {
			require.Equal(t, int32(0), after["qty"], "the converter writes the default for NULL")
		}
	}
	bad := def
	bad.Columns = append(slices.Clone(def.Columns), dbzgen.Column{Name: "b", Type: "varbinary(4)", Nullable: true, Default: []byte{1}})
	_, err := dbzgen.New(nil, dbzgen.DefaultOptions()).Table(bad)
	require.ErrorIs(t, err, dbzgen.ErrBadTable)
}

// A new capture instance with an added column: a second value schema under
// the same subject, a new id, and old and new records both decodable.
func TestSchemaEvolutionRegistersANewVersion(t *testing.T) {
	h := newHarness(t, dbzgen.DefaultOptions())
	v1, err := h.gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	def := dbzgen.Orders()
	def.Columns = append(def.Columns, dbzgen.Column{Name: "note", Type: "nvarchar(100)", Nullable: true})
	v2, err := h.gen.Table(def)
	require.NoError(t, err)
	require.Equal(t, v1.Topic(), v2.Topic())

	k1, id1, err := h.gen.Register(t.Context(), v1)
	require.NoError(t, err)
	k2, id2, err := h.gen.Register(t.Context(), v2)
	require.NoError(t, err)
	require.Equal(t, k1, k2, "the key schema did not change")
	require.NotEqual(t, id1, id2)
	versions, err := h.cl.SubjectVersions(t.Context(), v1.ValueSubject())
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, versions)

	row := orderRow("NEW", "1")
	_, old, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: v1, Op: dbzgen.OpCreate, After: row})
	require.NoError(t, err)
	row2 := orderRow("NEW", "1")
	row2["note"] = "gift"
	_, cur, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: v2, Op: dbzgen.OpCreate, After: row2})
	require.NoError(t, err)
	require.NotContains(t, image(t, h.decode(t, old), "after"), "note")
	require.Equal(t, "gift", image(t, h.decode(t, cur), "after")["note"])

	_, _, err = dbzgen.New(nil, dbzgen.DefaultOptions()).Encode(t.Context(), dbzgen.Event{Table: v1, Op: dbzgen.OpCreate, After: row})
	require.ErrorIs(t, err, dbzgen.ErrNoRegistry)
}
