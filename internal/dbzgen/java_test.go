package dbzgen_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// javaGoldens is where Debezium's own classes wrote SQL Server events for
// EveryType (codecs/testdata/debezium/java/README.md).
const javaGoldens = "../../codecs/testdata/debezium/java"

// javaOptions are the generator options matching each golden directory's
// connector settings.
var javaOptions = map[string]dbzgen.Options{
	"default":        {},
	"propagate":      {PropagateSourceTypes: true},
	"decimal_string": {DecimalHandling: dbzgen.DecimalString, PropagateSourceTypes: true},
	"decimal_double": {DecimalHandling: dbzgen.DecimalDouble},
	"time_micro":     {TimePrecision: dbzgen.TimeAdaptiveMicroseconds},
	"time_connect":   {TimePrecision: dbzgen.TimeConnect},
	"binary_base64":  {BinaryHandling: dbzgen.BinaryBase64, PropagateSourceTypes: true},
	"binary_hex":     {BinaryHandling: dbzgen.BinaryHex, PropagateSourceTypes: true},
}

func readAvsc(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

func parseSchema(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}

// rowFields returns the envelope's row record's fields by name, in order.
func rowFields(t *testing.T, env map[string]any) ([]string, map[string]any) {
	t.Helper()
	before := env["fields"].([]any)[0].(map[string]any)
	row := before["type"].([]any)[1].(map[string]any)
	var names []string
	out := map[string]any{}
	for _, f := range row["fields"].([]any) {
		m := f.(map[string]any)
		names = append(names, m["name"].(string))
		out[m["name"].(string)] = m
	}
	return names, out
}

// TestJavaSchemas requires the generator to write, for EveryType under each
// connector setting, the Avro schemas Debezium's classes and AvroData wrote:
// the same row fields in the same order, each with the same type, connect.*
// properties and parameters; the same key schema; the same Source block and
// envelope.
func TestJavaSchemas(t *testing.T) {
	for name, opts := range javaOptions {
		t.Run(name, func(t *testing.T) {
			opts.Prefix = "shop"
			tbl, err := dbzgen.New(nil, opts).Table(dbzgen.EveryType())
			require.NoError(t, err)
			dir := filepath.Join(javaGoldens, name)

			wantEnv := readAvsc(t, filepath.Join(dir, "value.avsc"))
			gotEnv := parseSchema(t, tbl.ValueSchema())
			wantNames, want := rowFields(t, wantEnv)
			gotNames, got := rowFields(t, gotEnv)
			require.Equal(t, wantNames, gotNames, "row fields")
			for _, n := range wantNames {
				require.Equal(t, want[n], got[n], "field %s", n)
			}
			require.Equal(t, readAvsc(t, filepath.Join(dir, "key.avsc")), parseSchema(t, tbl.KeySchema()), "key schema")

			// The rest of the envelope: every field after before/after.
			require.Equal(t, wantEnv["fields"].([]any)[2:], gotEnv["fields"].([]any)[2:], "envelope fields")
			for _, k := range []string{"name", "namespace", "connect.version", "connect.name"} {
				require.Equal(t, wantEnv[k], gotEnv[k], "envelope %s", k)
			}
		})
	}
}

// capture is a Registrar that keeps each subject's schema.
type capture map[string]string

func (c capture) RegisterSchema(_ context.Context, subject string, s sr.Schema, _, _ int) (int, error) {
	c[subject] = s.Schema
	return len(c), nil
}

// TestJavaTransactionSchemas requires the transaction topic's key and value
// schemas to be those Debezium's TransactionMonitor and AvroData wrote.
func TestJavaTransactionSchemas(t *testing.T) {
	reg := capture{}
	g := dbzgen.New(reg, dbzgen.Options{Prefix: "shop"})
	_, _, err := g.Encode(t.Context(), dbzgen.Event{Marker: &dbzgen.TxMarker{Status: "BEGIN", ID: "0000002b:00000010:0003"}})
	require.NoError(t, err)
	dir := filepath.Join(javaGoldens, "default")
	require.Equal(t, readAvsc(t, filepath.Join(dir, "tx-key.avsc")), parseSchema(t, reg["shop.transaction-key"]))
	require.Equal(t, readAvsc(t, filepath.Join(dir, "tx-value.avsc")), parseSchema(t, reg["shop.transaction-value"]))
}
