//go:build integration

package unity

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// specCheck runs scripts/py/ucspec_check.py, which checks recorded requests
// against Unity Catalog's official Python SDK (unitycatalog-client, generated
// from UC's OpenAPI spec), and returns its output and exit code.
func specCheck(t *testing.T, xs []exchange) (string, int) {
	t.Helper()
	file := writeExchanges(t, t.TempDir(), xs)
	cmd := exec.CommandContext(t.Context(), fulltier.PythonPath(t), filepath.Join(fulltier.ScriptsDir(t), "ucspec_check.py"), file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running ucspec_check.py: %v\n%s", err, stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
		t.Fatalf("ucspec_check.py exited %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "\nchecked ") {
		t.Fatalf("ucspec_check.py stopped before its verdict:\n%s\n%s", stdout.String(), stderr.String())
	}
	return stdout.String(), cmd.ProcessState.ExitCode()
}

// specSchema has a column of every type the client maps to a type_name,
// comments, a decimal and a partition column.
func specSchema() *deltalog.StructType {
	elem := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "sku", Type: deltalog.TypeString, Nullable: true},
		{Name: "qty", Type: deltalog.TypeInteger, Nullable: true},
	}}
	return &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong, Metadata: map[string]any{"comment": "order id"}},
		{Name: "qty", Type: deltalog.TypeInteger, Nullable: true},
		{Name: "small", Type: deltalog.TypeShort, Nullable: true},
		{Name: "tiny", Type: deltalog.TypeByte, Nullable: true},
		{Name: "ratio", Type: deltalog.TypeFloat, Nullable: true},
		{Name: "score", Type: deltalog.TypeDouble, Nullable: true},
		{Name: "paid", Type: deltalog.TypeBoolean, Nullable: true},
		{Name: "blob", Type: deltalog.TypeBinary, Nullable: true},
		{Name: "day", Type: deltalog.TypeDate, Nullable: true},
		{Name: "at", Type: deltalog.TypeTimestamp, Nullable: true},
		{Name: "placed", Type: deltalog.TypeTimestampNTZ, Nullable: true},
		{Name: "Unit Price", Type: deltalog.DecimalType{Precision: 19, Scale: 4}, Nullable: true},
		{Name: "tags", Type: &deltalog.ArrayType{ElementType: deltalog.TypeString, ContainsNull: true}, Nullable: true},
		{Name: "attrs", Type: &deltalog.MapType{KeyType: deltalog.TypeString, ValueType: deltalog.TypeLong, ValueContainsNull: true}, Nullable: true},
		{Name: "lines", Type: &deltalog.ArrayType{ElementType: elem, ContainsNull: true}, Nullable: true},
		{Name: "region", Type: deltalog.TypeString, Nullable: true},
	}}
}

// TestUnityRequestsMatchPublishedAPI drives the client through what the
// registrar does (create, look up, nothing to do, a schema change, a
// conflict, a lost race, a missing schema) against a fake that answers as
// UC does, then checks every request against UC's published API.
func TestUnityRequestsMatchPublishedAPI(t *testing.T) {
	uc := newFakeUC(t, "unity.sales")
	c, err := New(Options{Endpoint: uc.srv.URL, Token: "tok"})
	require.NoError(t, err)
	ctx := t.Context()
	register := func(e catalog.Entry) (catalog.Outcome, error) {
		out, _, err := catalog.Register(ctx, c, e, 5*time.Second, c.Name())
		return out, err
	}
	src := catalog.Source{Name: catalog.Name{Catalog: "unity", Schema: "sales", Table: "orders"},
		Location: "s3://lake/sales/orders", Role: catalog.RoleTable}
	e := catalog.Entry{Name: src.Name, Location: src.Location, Schema: specSchema(), PartitionColumns: []string{"region"},
		Description: "orders from sales.dbo.orders", Format: catalog.FormatDelta,
		Properties: map[string]string{catalog.RoleProperty: catalog.RoleTable, "cdc2delta.keyColumns": "id"}}

	out, err := register(e)
	require.NoError(t, err)
	require.Equal(t, catalog.Created, out)
	out, err = register(e)
	require.NoError(t, err)
	require.Equal(t, catalog.Unchanged, out)

	// A new column: the entry is dropped and created again.
	e.Schema = specSchema()
	e.Schema.Fields = append(e.Schema.Fields, deltalog.StructField{Name: "note", Type: deltalog.TypeString, Nullable: true,
		Metadata: map[string]any{"comment": "added later"}})
	out, err = register(e)
	require.NoError(t, err)
	require.Equal(t, catalog.Updated, out)
	got, err := c.Lookup(ctx, e.Name)
	require.NoError(t, err)
	require.Empty(t, catalog.Differences(e, got))

	// The name held for another directory.
	other := e
	other.Location = "s3://lake/elsewhere"
	out, err = register(other)
	require.Equal(t, catalog.Conflict, out)
	var ce *catalog.ConflictError
	require.ErrorAs(t, err, &ce)

	// Another writer created it first; a schema that does not exist.
	require.ErrorIs(t, c.Create(ctx, e), catalog.ErrExists)
	missing := e
	missing.Name.Schema = "nosuch"
	require.ErrorIs(t, c.Create(ctx, missing), catalog.ErrNotFound)

	// A table with no columns yet, and no comment or properties.
	bare := catalog.Entry{Name: catalog.Name{Catalog: "unity", Schema: "sales", Table: "bare"}, Location: "s3://lake/sales/bare"}
	require.NoError(t, c.Create(ctx, bare))

	xs := uc.recorded()
	var ops []string
	for _, x := range xs {
		ops = append(ops, x.Method+" "+strings.TrimPrefix(x.Path, apiPath)+" "+strconv.Itoa(x.Status))
	}
	require.Equal(t, []string{
		"GET /tables/unity.sales.orders 404", "POST /tables 200", // created
		"GET /tables/unity.sales.orders 200",                                                              // unchanged
		"GET /tables/unity.sales.orders 200", "DELETE /tables/unity.sales.orders 200", "POST /tables 200", // updated
		"GET /tables/unity.sales.orders 200", // Lookup
		"GET /tables/unity.sales.orders 200", // conflict
		"POST /tables 400",                   // exists
		"POST /tables 404",                   // no schema
		"POST /tables 200",                   // bare
	}, ops)

	report, code := specCheck(t, xs)
	t.Log("\n" + report)
	require.Equal(t, 0, code, report)
	require.Contains(t, report, "checked 11 requests against unitycatalog-client: 11 ok, 0 failed")
	for _, op := range []string{"TablesApi.get_table", "TablesApi.create_table", "TablesApi.delete_table"} {
		require.Contains(t, report, op)
	}
}

// TestUnitySpecCheckRejectsWrongRequests proves the check bites: one valid
// recorded request and mutations of it that UC's API does not allow, each
// failing with the reason that names what is wrong.
func TestUnitySpecCheckRejectsWrongRequests(t *testing.T) {
	uc := newFakeUC(t, "unity.sales")
	c, err := New(Options{Endpoint: uc.srv.URL})
	require.NoError(t, err)
	e := catalog.Entry{Name: catalog.Name{Catalog: "unity", Schema: "sales", Table: "orders"}, Location: "s3://lake/orders",
		Schema: specSchema(), PartitionColumns: []string{"region"}}
	require.NoError(t, c.Create(t.Context(), e))
	_, err = c.Lookup(t.Context(), e.Name)
	require.NoError(t, err)
	xs := uc.recorded()
	require.Len(t, xs, 2)
	create, get := xs[0], xs[1]

	body := func(edit func(m map[string]any)) exchange {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(create.Body), &m))
		edit(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		x := create
		x.Body = string(b)
		return x
	}
	column0 := func(m map[string]any) map[string]any { return m["columns"].([]any)[0].(map[string]any) }
	cases := []struct {
		x    exchange
		want string // in the FAIL line; "" means it passes
	}{
		{create, ""},
		{get, ""},
		{body(func(m map[string]any) { m["table_type"] = "EXTERNAL_DELTA" }), `$.table_type: Input should be 'MANAGED', 'EXTERNAL'`},
		{body(func(m map[string]any) { m["data_source_format"] = "delta" }), `$.data_source_format: Input should be 'DELTA'`},
		{body(func(m map[string]any) { delete(m, "columns") }), `$.columns: Field required`},
		{body(func(m map[string]any) { delete(m, "schema_name") }), `$.schema_name: Field required`},
		{body(func(m map[string]any) { column0(m)["type_name"] = "INTEGER" }), `$.columns.0.type_name: Input should be 'BOOLEAN'`},
		{body(func(m map[string]any) { column0(m)["position"] = "0" }), `$.columns.0.position: Input should be a valid integer`},
		{body(func(m map[string]any) { column0(m)["nullable"] = "false" }), `$.columns.0.nullable: Input should be a valid boolean`},
		{body(func(m map[string]any) { m["location"] = "s3://lake/orders" }), `$.location: not a field of CreateTable`},
		{body(func(m map[string]any) { column0(m)["type_nullable"] = true }), `$.columns[0].type_nullable: not a field of ColumnInfo`},
		{body(func(m map[string]any) { m["properties"] = map[string]any{"n": 1} }), `$.properties.n: Input should be a valid string`},
		{withPath(create, apiPath+"/table"), "no operation of the API has the path /table"},
		{withPath(create, "/api/2.0/unity-catalog/tables"), "is not under the API root /api/2.1/unity-catalog"},
		{withMethod(create, "PUT"), "PUT is not an operation on /tables; the API has"},
		{withMethod(get, "PATCH"), "PATCH is not an operation on /tables/unity.sales.orders"},
		{withBody(get, `{"name":"orders"}`), "get_table takes no body"},
		{withBody(create, ""), "create_table takes a CreateTable body, got none"},
		{withQuery(get, "include_browse=true"), "query parameter include_browse is not one get_table takes"},
		{withContentType(create, "text/plain"), "body content type is 'text/plain', not application/json"},
	}
	xs = nil
	for _, c := range cases {
		xs = append(xs, c.x)
	}
	report, code := specCheck(t, xs)
	t.Log("\n" + report)
	require.Equal(t, 1, code)
	failed := 0
	for i, c := range cases {
		lines := regexp.MustCompile(`(?m)^(ok  |FAIL) #`+strconv.Itoa(i)+` .*$`).FindAllString(report, -1)
		require.NotEmpty(t, lines, "case %d has no verdict", i)
		if c.want == "" {
			require.Equal(t, []string{lines[0]}, lines, "case %d", i)
			require.True(t, strings.HasPrefix(lines[0], "ok"), "case %d: %s", i, lines[0])
			continue
		}
		failed++
		require.True(t, strings.HasPrefix(lines[0], "FAIL"), "case %d should fail: %s", i, lines[0])
		require.Contains(t, strings.Join(lines, "\n"), c.want, "case %d", i)
	}
	require.Contains(t, report, "checked 20 requests against unitycatalog-client: 2 ok, 18 failed")
	require.Equal(t, 18, failed)
}

func withPath(x exchange, p string) exchange        { x.Path = p; return x }
func withMethod(x exchange, m string) exchange      { x.Method = m; return x }
func withBody(x exchange, b string) exchange        { x.Body = b; return x }
func withQuery(x exchange, q string) exchange       { x.Query = q; return x }
func withContentType(x exchange, c string) exchange { x.ContentType = c; return x }
