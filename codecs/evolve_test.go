package codecs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func col(name string, t Type, nullable bool) Column {
	return Column{Name: name, AvroName: name, Type: t, Nullable: nullable}
}

func TestEvolve(t *testing.T) {
	id := col("id", Type{Kind: KindInteger}, false)
	name := col("name", Type{Kind: KindString}, true)
	amount := col("amount", DecimalType(10, 2), true)
	qty := col("qty", Type{Kind: KindShort}, false)
	current := []Column{id, name, amount, qty}
	key := []string{"id"}

	tests := []struct {
		name        string
		next        []Column
		nextKey     []string
		want        Evolution
		wantErr     bool
		wantProblem string
	}{
		{name: "same", next: current, nextKey: key},
		{name: "added nullable column", next: append(append([]Column{}, current...), col("note", Type{Kind: KindString}, true)), nextKey: key,
			want: Evolution{Added: []Column{col("note", Type{Kind: KindString}, true)}}},
		{name: "added required column", next: []Column{id, name, col("created", Type{Kind: KindTimestampNTZ}, false), amount, qty}, nextKey: key,
			want: Evolution{Added: []Column{col("created", Type{Kind: KindTimestampNTZ}, false)}}},
		{name: "dropped non-key column", next: []Column{id, amount, qty}, nextKey: key, want: Evolution{Dropped: []Column{name}}},
		{name: "relaxed nullability", next: []Column{id, name, amount, col("qty", Type{Kind: KindShort}, true)}, nextKey: key,
			want: Evolution{Relaxed: []Column{col("qty", Type{Kind: KindShort}, true)}}},
		{name: "widened short to integer", next: []Column{id, name, amount, col("qty", Type{Kind: KindInteger}, false)}, nextKey: key,
			want: Evolution{Widened: []Column{col("qty", Type{Kind: KindInteger}, false)}}},
		{name: "widened decimal", next: []Column{id, name, col("amount", DecimalType(12, 2), true), qty}, nextKey: key,
			want: Evolution{Widened: []Column{col("amount", DecimalType(12, 2), true)}}},
		{name: "narrowed decimal", next: []Column{id, name, col("amount", DecimalType(8, 2), true), qty}, nextKey: key,
			wantErr: true, wantProblem: `column "amount" changes type from decimal(10,2) to decimal(8,2)`},
		{name: "decimal scale up loses integer digits", next: []Column{id, name, col("amount", DecimalType(10, 4), true), qty}, nextKey: key,
			wantErr: true, wantProblem: `column "amount" changes type from decimal(10,2) to decimal(10,4)`},
		{name: "changed type", next: []Column{id, col("name", Type{Kind: KindInteger}, true), amount, qty}, nextKey: key,
			wantErr: true, wantProblem: `column "name" changes type from string to integer`},
		{name: "nullable to required", next: []Column{id, col("name", Type{Kind: KindString}, false), amount, qty}, nextKey: key,
			wantErr: true, wantProblem: `column "name" changes from nullable to required`},
		{name: "removed key column", next: []Column{name, amount, qty}, nextKey: nil,
			wantErr: true, wantProblem: `key column "id" removed`},
		{name: "key changed", next: current, nextKey: []string{"id", "name"},
			wantErr: true, wantProblem: `primary key changed from ["id"] to ["id" "name"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Evolve(current, key, tc.next, tc.nextKey)
			if tc.wantErr {
				var sce *SchemaChangeError
				require.ErrorAs(t, err, &sce)
				require.ErrorIs(t, err, ErrSchemaChange)
				require.Contains(t, sce.Problems, tc.wantProblem)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.name == "same", got.Unchanged())
		})
	}
}

func TestEvolveBetweenSchemaIDs(t *testing.T) {
	// A new capture instance adds a nullable column: new schema id, same table.
	cols := ordersCols()
	src := newMapSource()
	src.add(1, envelopeSchema(layoutV3, cols))
	src.add(2, envelopeSchema(layoutV3, append(cols, tcol{name: "region", typ: "string", nullable: true})))
	d, err := NewDecoder(src, Options{})
	require.NoError(t, err)
	oldL, err := d.Layout(t.Context(), 1)
	require.NoError(t, err)
	newL, err := d.Layout(t.Context(), 2)
	require.NoError(t, err)
	ev, err := Evolve(oldL.Columns, []string{"order_id"}, newL.Columns, []string{"order_id"})
	require.NoError(t, err)
	require.Len(t, ev.Added, 1)
	require.Equal(t, "region", ev.Added[0].Name)
	require.Empty(t, ev.Dropped)
}

func TestEvolveTimeReadBackAsLong(t *testing.T) {
	// The table was created with a time column (stored as long); the
	// processor rebuilt its columns from the Delta schema.
	stored, err := ParseDeltaType(Type{Kind: KindTime}.DeltaName())
	require.NoError(t, err)
	ev, err := Evolve([]Column{col("t", stored, true)}, nil, []Column{col("t", Type{Kind: KindTime}, true)}, nil)
	require.NoError(t, err)
	require.True(t, ev.Unchanged())
}

func TestParseDeltaType(t *testing.T) {
	for _, tc := range []Type{
		{Kind: KindBoolean}, {Kind: KindByte}, {Kind: KindShort}, {Kind: KindInteger}, {Kind: KindLong},
		{Kind: KindFloat}, {Kind: KindDouble}, DecimalType(38, 10), DecimalType(1, 0), {Kind: KindString},
		{Kind: KindBinary}, {Kind: KindDate}, {Kind: KindTimestamp}, {Kind: KindTimestampNTZ},
	} {
		got, err := ParseDeltaType(tc.DeltaName())
		require.NoError(t, err)
		require.Equal(t, tc, got)
	}
	got, err := ParseDeltaType("decimal( 5 , 2 )")
	require.NoError(t, err)
	require.Equal(t, DecimalType(5, 2), got)
	got, err = ParseDeltaType("decimal")
	require.NoError(t, err)
	require.Equal(t, DecimalType(10, 0), got)
	for _, bad := range []string{"", "time", "decimal(39,0)", "decimal(5,6)", "decimal(5)", "decimal(a,b)", "struct", "invalid"} {
		_, err := ParseDeltaType(bad)
		require.Error(t, err, bad)
	}
}

func TestTypeDeltaName(t *testing.T) {
	tests := []struct {
		t    Type
		want string
	}{
		{Type{Kind: KindBoolean}, "boolean"},
		{Type{Kind: KindByte}, "byte"},
		{Type{Kind: KindShort}, "short"},
		{Type{Kind: KindInteger}, "integer"},
		{Type{Kind: KindLong}, "long"},
		{Type{Kind: KindFloat}, "float"},
		{Type{Kind: KindDouble}, "double"},
		{DecimalType(38, 10), "decimal(38,10)"},
		{Type{Kind: KindString}, "string"},
		{Type{Kind: KindBinary}, "binary"},
		{Type{Kind: KindDate}, "date"},
		{Type{Kind: KindTimestamp}, "timestamp"},
		{Type{Kind: KindTimestampNTZ}, "timestamp_ntz"},
		{Type{Kind: KindTime}, "long"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, tc.t.DeltaName())
	}
}

func TestSuspectedRename(t *testing.T) {
	id := col("id", Type{Kind: KindInteger}, false)
	qty := col("qty", Type{Kind: KindInteger}, true)
	quantity := col("quantity", Type{Kind: KindInteger}, true)
	note := col("note", Type{Kind: KindString}, true)
	current := []Column{id, qty}
	for _, tc := range []struct {
		name string
		next []Column
		want bool
	}{
		{"renamed", []Column{id, quantity}, true},
		{"renamed and moved", []Column{quantity, id}, true},
		{"dropped and added another type", []Column{id, note}, false},
		{"added only", []Column{id, qty, quantity}, false},
		{"dropped only", []Column{id}, false},
		{"two added", []Column{id, quantity, col("amount", Type{Kind: KindInteger}, true)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := Evolve(current, []string{"id"}, tc.next, []string{"id"})
			require.NoError(t, err)
			dropped, added, ok := ev.SuspectedRename()
			require.Equal(t, tc.want, ok)
			if ok {
				require.Equal(t, "qty", dropped.Name)
				require.Equal(t, "quantity", added.Name)
			}
		})
	}
}
