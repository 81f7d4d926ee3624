package dbzgen_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

func compactFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, b))
	return buf.String()
}

// The brief's §9 worked example, written by hand there; the generator must
// produce it byte for byte (property order included).
func TestOrdersSchemasMatchBrief(t *testing.T) {
	gen := dbzgen.New(nil, dbzgen.DefaultOptions())
	orders, err := gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	require.Equal(t, "shop.sales.dbo.orders", orders.Topic())
	require.Equal(t, "shop.sales.dbo.orders-key", orders.KeySubject())
	require.Equal(t, "shop.sales.dbo.orders-value", orders.ValueSubject())
	require.Equal(t, compactFile(t, "testdata/orders_key.golden.json"), orders.KeySchema())
	require.Equal(t, compactFile(t, "testdata/orders_value.golden.json"), orders.ValueSchema())
	f, ok := orders.FieldName("Unit Price")
	require.True(t, ok)
	require.Equal(t, "Unit_Price", f)
}

// fieldType digs the non-null type of a Value field out of an envelope schema.
func fieldType(t *testing.T, envelope, name string) map[string]any {
	t.Helper()
	var env struct {
		Fields []struct {
			Name string `json:"name"`
			Type any    `json:"type"`
		} `json:"fields"`
	}
	require.NoError(t, json.Unmarshal([]byte(envelope), &env))
	before := env.Fields[0].Type.([]any)[1].(map[string]any)
	for _, f := range before["fields"].([]any) {
		f := f.(map[string]any)
		if f["name"] != name {
			continue
		}
		typ := f["type"]
		if u, ok := typ.([]any); ok {
			typ = u[1]
		}
		if s, ok := typ.(string); ok {
			return map[string]any{"type": s}
		}
		return typ.(map[string]any)
	}
	t.Fatalf("no field %q", name)
	return nil
}

func TestPropagatedSourceTypeParameters(t *testing.T) {
	opts := dbzgen.DefaultOptions()
	opts.PropagateSourceTypes = true
	orders, err := dbzgen.New(nil, opts).Table(dbzgen.Orders())
	require.NoError(t, err)
	// The brief §9.2 lists exactly these for [Unit Price] MONEY.
	require.Equal(t, map[string]any{
		"scale":                           "4",
		"connect.decimal.precision":       "19",
		"__debezium.source.column.type":   "MONEY",
		"__debezium.source.column.length": "19",
		"__debezium.source.column.scale":  "4",
		"__debezium.source.column.name":   "Unit Price",
	}, fieldType(t, orders.ValueSchema(), "Unit_Price")["connect.parameters"])
	// A plain string column becomes an object carrying the parameters.
	require.Equal(t, map[string]any{
		"type": "string",
		"connect.parameters": map[string]any{
			"__debezium.source.column.type":   "VARCHAR",
			"__debezium.source.column.length": "20",
			"__debezium.source.column.name":   "status",
		},
	}, fieldType(t, orders.ValueSchema(), "status"))
}

func TestLayouts(t *testing.T) {
	names := func(t *testing.T, schema string, path ...string) []string {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(schema), &rec))
		for _, p := range path {
			for _, f := range rec["fields"].([]any) {
				f := f.(map[string]any)
				if f["name"] == p {
					rec = f["type"].(map[string]any)
				}
			}
		}
		var out []string
		for _, f := range rec["fields"].([]any) {
			out = append(out, f.(map[string]any)["name"].(string))
		}
		return out
	}
	source := []string{"version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns", "schema", "table", "change_lsn", "commit_lsn", "event_serial_no"}
	source25 := []string{"version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "schema", "table", "change_lsn", "commit_lsn", "event_serial_no"}
	tests := []struct {
		layout       dbzgen.Layout
		envelope     []string
		source       []string
		envVersion   float64
		sourceHasVer bool
		allowed      string
	}{
		{dbzgen.Layout31, []string{"before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"}, source, 2, true, "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},
		{dbzgen.Layout27, []string{"before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"}, source, 2, false, "true,last,false,incremental"},
		{dbzgen.Layout26, []string{"before", "after", "source", "op", "ts_ms", "ts_us", "ts_ns", "transaction"}, source, 2, false, "true,last,false,incremental"},
		{dbzgen.Layout25, []string{"before", "after", "source", "op", "ts_ms", "transaction"}, source25, 1, false, "true,last,false,incremental"},
	}
	for _, tc := range tests {
		t.Run(tc.layout.String(), func(t *testing.T) {
			opts := dbzgen.DefaultOptions()
			opts.Layout = tc.layout
			orders, err := dbzgen.New(nil, opts).Table(dbzgen.Orders())
			require.NoError(t, err)
			require.Equal(t, tc.envelope, names(t, orders.ValueSchema()))
			require.Equal(t, tc.source, names(t, orders.ValueSchema(), "source"))
			var env map[string]any
			require.NoError(t, json.Unmarshal([]byte(orders.ValueSchema()), &env))
			require.Equal(t, tc.envVersion, env["connect.version"])
			require.Contains(t, orders.ValueSchema(), `"allowed":"`+tc.allowed+`"`)
			_, hasVer := sourceRecord(t, env)["connect.version"]
			require.Equal(t, tc.sourceHasVer, hasVer)
			if tc.layout == dbzgen.Layout26 {
				require.Contains(t, orders.ValueSchema(), `{"name":"ts_us","type":"long"}`, "2.6 source ts_us is required")
			}
		})
	}
}

func sourceRecord(t *testing.T, env map[string]any) map[string]any {
	t.Helper()
	for _, f := range env["fields"].([]any) {
		f := f.(map[string]any)
		if f["name"] == "source" {
			return f["type"].(map[string]any)
		}
	}
	t.Fatal("no source field")
	return nil
}

func TestNameAdjustment(t *testing.T) {
	def := dbzgen.TableDef{Database: "db", Schema: "dbo", Name: "t", Key: []string{"order_id"}, Columns: []dbzgen.Column{
		{Name: "order_id", Type: "int"},
		{Name: "Unit Price", Type: "money", Nullable: true},
		{Name: "Qty (kg)", Type: "int", Nullable: true},
		{Name: "1col", Type: "int", Nullable: true},
	}}
	tests := []struct {
		mode    dbzgen.NameAdjustment
		want    map[string]string
		wantErr bool
	}{
		{dbzgen.NameAdjustAvro, map[string]string{"order_id": "order_id", "Unit Price": "Unit_Price", "Qty (kg)": "Qty__kg_", "1col": "_1col"}, false},
		{dbzgen.NameAdjustAvroUnicode, map[string]string{"order_id": "order_u005fid", "Unit Price": "Unit_u0020Price", "Qty (kg)": "Qty_u0020_u0028kg_u0029", "1col": "_u0031col"}, false},
		{dbzgen.NameAdjustNone, nil, true},
	}
	for _, tc := range tests {
		opts := dbzgen.DefaultOptions()
		opts.NameAdjustment = tc.mode
		tab, err := dbzgen.New(nil, opts).Table(def)
		if tc.wantErr {
			require.ErrorIs(t, err, dbzgen.ErrBadTable)
			continue
		}
		require.NoError(t, err)
		for col, want := range tc.want {
			got, ok := tab.FieldName(col)
			require.True(t, ok)
			require.Equal(t, want, got, col)
		}
	}
}

func TestBadTables(t *testing.T) {
	base := func(cols ...dbzgen.Column) dbzgen.TableDef {
		return dbzgen.TableDef{Database: "db", Schema: "dbo", Name: "t", Columns: cols}
	}
	tests := []struct {
		name string
		def  dbzgen.TableDef
	}{
		{"unknown type", base(dbzgen.Column{Name: "a", Type: "money2"})},
		{"precision too large", base(dbzgen.Column{Name: "a", Type: "decimal(39,2)"})},
		{"scale above precision", base(dbzgen.Column{Name: "a", Type: "decimal(5,6)"})},
		{"datetime2(8)", base(dbzgen.Column{Name: "a", Type: "datetime2(8)"})},
		{"unclosed", base(dbzgen.Column{Name: "a", Type: "varchar(10"})},
		{"too many args", base(dbzgen.Column{Name: "a", Type: "int(4)"})},
		{"collision", base(dbzgen.Column{Name: "a b", Type: "int"}, dbzgen.Column{Name: "a_b", Type: "int"})},
		{"missing key", dbzgen.TableDef{Database: "db", Schema: "dbo", Name: "t", Columns: []dbzgen.Column{{Name: "a", Type: "int"}}, Key: []string{"b"}}},
		{"dropped key", dbzgen.TableDef{Database: "db", Schema: "dbo", Name: "t", Columns: []dbzgen.Column{{Name: "a", Type: "sql_variant"}}, Key: []string{"a"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dbzgen.New(nil, dbzgen.DefaultOptions()).Table(tc.def)
			require.ErrorIs(t, err, dbzgen.ErrBadTable)
		})
	}
}
