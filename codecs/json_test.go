package codecs_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

func newJSONDecoder(t testing.TB, opts codecs.Options) *codecs.Decoder {
	t.Helper()
	opts.Converter = codecs.ConverterJSON
	d, err := codecs.NewDecoder(nil, opts)
	require.NoError(t, err)
	return d
}

// sameChange compares two decodings of one event; the layouts' schema ids
// are the registry's for Avro and decoder-local for JSON, so only what a
// table sees (columns, types, names, comments) must agree.
func sameChange(t *testing.T, want, got codecs.Change, msg string) {
	t.Helper()
	require.Equal(t, want.Op, got.Op, msg)
	require.Equal(t, want.Table, got.Table, msg)
	require.Equal(t, want.Pos, got.Pos, msg)
	require.Equal(t, want.CommitMillis, got.CommitMillis, msg)
	require.Equal(t, want.Snapshot, got.Snapshot, msg)
	require.Equal(t, want.TxID, got.TxID, msg)
	require.Equal(t, want.TxOrder, got.TxOrder, msg)
	require.Equal(t, want.Row, got.Row, msg)
	require.Equal(t, want.Unavailable, got.Unavailable, msg)
	require.Equal(t, want.Key, got.Key, msg)
	require.Equal(t, want.KeyIndex, got.KeyIndex, msg)
	for _, l := range [][2]*codecs.Layout{{want.Layout, got.Layout}, {want.KeyLayout, got.KeyLayout}} {
		require.Equal(t, l[0] == nil, l[1] == nil, msg)
		if l[0] != nil {
			require.Equal(t, l[0].Name, l[1].Name, msg)
			require.Equal(t, l[0].Columns, l[1].Columns, msg)
		}
	}
}

// TestJSONMatchesAvro encodes one generated stream both ways, through the
// AvroConverter and through the JsonConverter (dbzgen.EncodeJSON, written
// from Kafka's rules, not from this decoder), and requires the same
// changes, layouts and transaction events from both decoders.
func TestJSONMatchesAvro(t *testing.T) {
	tests := []struct {
		name   string
		gopts  dbzgen.Options
		copts  codecs.Options
		format dbzgen.DecimalFormat
	}{
		{name: "defaults", gopts: dbzgen.Options{PropagateSourceTypes: true}},
		{name: "decimal numeric", gopts: dbzgen.Options{PropagateSourceTypes: true}, format: dbzgen.DecimalNumeric},
		{name: "layout 2.5", gopts: dbzgen.Options{Layout: dbzgen.Layout25}},
		{name: "connect time", gopts: dbzgen.Options{TimePrecision: dbzgen.TimeConnect, PropagateSourceTypes: true}},
		{name: "micro time", gopts: dbzgen.Options{TimePrecision: dbzgen.TimeAdaptiveMicroseconds}},
		{name: "decimal string", gopts: dbzgen.Options{DecimalHandling: dbzgen.DecimalString, PropagateSourceTypes: true}},
		{name: "decimal double", gopts: dbzgen.Options{DecimalHandling: dbzgen.DecimalDouble, PropagateSourceTypes: true}},
		{name: "binary base64", gopts: dbzgen.Options{BinaryHandling: dbzgen.BinaryBase64, PropagateSourceTypes: true}, copts: codecs.Options{BinaryHandling: codecs.BinaryBase64}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newGenHarness(t, tc.gopts, tc.copts)
			jd := newJSONDecoder(t, tc.copts)
			every, err := h.gen.Table(dbzgen.EveryType())
			require.NoError(t, err)
			orders, err := h.gen.Table(dbzgen.Orders())
			require.NoError(t, err)
			w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 7, Keys: 15, Snapshot: true, MaxTxEvents: 3,
				TransactionTopic: true, KeyChangeRatio: 0.1, Placeholders: 0.3, Redeliver: 0.05}, every, orders)
			require.NoError(t, err)
			events := []dbzgen.Event{{Table: every, Op: dbzgen.OpCreate, After: dbzgen.EveryTypeRow(),
				Source: dbzgen.Source{Time: time.UnixMilli(1710498645130), CommitLSN: dbzgen.MakeLSN(0x2b, 0xe10, 5)}}}
			for range 300 {
				events = append(events, w.Next())
			}
			ops := map[codecs.Op]int{}
			for i, ev := range events {
				key, value, err := h.gen.Encode(t.Context(), ev)
				require.NoError(t, err)
				jkey, jvalue, err := h.gen.EncodeJSON(ev, tc.format)
				require.NoError(t, err)
				msg := fmt.Sprintf("event %d: %.300s", i, jvalue)
				if ev.Marker != nil {
					want, err := h.dec.DecodeTransaction(t.Context(), "tx", 0, int64(i), value)
					require.NoError(t, err)
					got, err := jd.DecodeTransaction(t.Context(), "tx", 0, int64(i), jvalue)
					require.NoError(t, err, msg)
					require.Equal(t, want, got, msg)
					continue
				}
				want, err := h.dec.Decode(t.Context(), key, value)
				require.NoError(t, err)
				got, err := jd.Decode(t.Context(), jkey, jvalue)
				require.NoError(t, err, msg)
				sameChange(t, want, got, msg)
				ops[got.Op]++
			}
			for _, op := range []codecs.Op{codecs.OpCreate, codecs.OpRead, codecs.OpUpdate, codecs.OpDelete, codecs.OpTombstone} {
				require.Positive(t, ops[op], "op %s", op)
			}
		})
	}
}

func readJSONPair(t *testing.T, name string) (key, value []byte) {
	t.Helper()
	key, err := os.ReadFile(filepath.Join("testdata", "json", name+".key.json"))
	require.NoError(t, err)
	value, err = os.ReadFile(filepath.Join("testdata", "json", name+".value.json"))
	require.NoError(t, err)
	return key, value
}

// TestJSONTestdata decodes the hand-edited records: pretty-printed with
// payload first and a decimal in exponent form; escapes, non-ASCII and the
// unavailable-value placeholder. One schema in two spellings is one layout.
func TestJSONTestdata(t *testing.T) {
	d := newJSONDecoder(t, codecs.Options{})
	key, value := readJSONPair(t, "snapshot_pretty")
	snap, err := d.Decode(t.Context(), key, value)
	require.NoError(t, err)
	require.Equal(t, codecs.OpRead, snap.Op)
	require.Equal(t, "first", snap.Snapshot)
	require.Equal(t, dec(t, "-89628570.63", 2), byName(snap)["amount"])
	require.Equal(t, []any{int32(1)}, snap.Key)

	key, value = readJSONPair(t, "update_escapes")
	upd, err := d.Decode(t.Context(), key, value)
	require.NoError(t, err)
	require.Equal(t, codecs.OpUpdate, upd.Op)
	require.Equal(t, "café 😀 \"quoted\" \\ tab\t", byName(upd)["customer_id"])
	require.Equal(t, "<unavailable>", byName(upd)["status"])
	require.Equal(t, int64(1), upd.Pos.Serial)
	require.Same(t, snap.Layout, upd.Layout, "one schema, one layout")
	require.Same(t, snap.KeyLayout, upd.KeyLayout)
}

// TestJSONErrors: a malformed record is a *DecodeError naming the record
// around a *JSONError naming the JSON path of the bad value.
func TestJSONErrors(t *testing.T) {
	key, value := readJSONPair(t, "update_escapes")
	edit := func(b []byte, f func(m map[string]any)) []byte {
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		f(m)
		out, err := json.Marshal(m)
		require.NoError(t, err)
		return out
	}
	after := func(m map[string]any) map[string]any {
		return m["payload"].(map[string]any)["after"].(map[string]any)
	}
	tests := []struct {
		name       string
		key, value []byte
		path       string
		reason     string
	}{
		{name: "truncated", key: key, value: value[:40], path: "$.schema.fields[0]", reason: "unterminated string"},
		{name: "not an object", key: key, value: []byte(`[1]`), path: "$", reason: "unexpected '['"},
		{name: "extra member", key: key, value: edit(value, func(m map[string]any) { m["extra"] = 1 }), path: "$.extra", reason: "only schema and payload"},
		{name: "schemaless", key: key, value: edit(value, func(m map[string]any) { m["schema"] = nil }), path: "$.schema", reason: "schemas.enable=false"},
		{name: "string for int32", key: key, value: edit(value, func(m map[string]any) { after(m)["order_id"] = "7" }), path: "$.payload.after.order_id", reason: "want an integer"},
		{name: "int32 overflow", key: key, value: edit(value, func(m map[string]any) { after(m)["order_id"] = 1 << 40 }), path: "$.payload.after.order_id", reason: "overflows int32"},
		{name: "fraction for int32", key: key, value: edit(value, func(m map[string]any) { after(m)["order_id"] = 1.5 }), path: "$.payload.after.order_id", reason: "not an integer"},
		{name: "required missing", key: key, value: edit(value, func(m map[string]any) { delete(after(m), "order_id") }), path: "$.payload.after.order_id", reason: "required field missing"},
		{name: "required null", key: key, value: edit(value, func(m map[string]any) { after(m)["order_id"] = nil }), path: "$.payload.after.order_id", reason: "null for a required int32"},
		{name: "bad base64", key: key, value: edit(value, func(m map[string]any) { after(m)["amount"] = "%%" }), path: "$.payload.after.amount", reason: "bad base64"},
		{name: "decimal past its scale", key: key, value: edit(value, func(m map[string]any) { after(m)["amount"] = 1.234 }), path: "$.payload.after.amount", reason: "does not fit scale 2"},
		{name: "bad source field", key: key, value: edit(value, func(m map[string]any) { m["payload"].(map[string]any)["source"].(map[string]any)["ts_ms"] = "x" }), path: "$.payload.source.ts_ms", reason: "want an integer"},
		{name: "op not a string", key: key, value: edit(value, func(m map[string]any) { m["payload"].(map[string]any)["op"] = 1 }), path: "$.payload.op", reason: "want a string"},
		{name: "bad key", key: edit(key, func(m map[string]any) { m["payload"].(map[string]any)["order_id"] = true }), value: value, path: "$.payload.order_id", reason: "want an integer"},
	}
	d := newJSONDecoder(t, codecs.Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.DecodeRecord(t.Context(), "shop.sales.dbo.orders", 3, 42, tc.key, tc.value)
			var de *codecs.DecodeError
			require.ErrorAs(t, err, &de)
			require.Equal(t, "shop.sales.dbo.orders", de.Topic)
			require.Equal(t, int32(3), de.Partition)
			require.Equal(t, int64(42), de.Offset)
			var je *codecs.JSONError
			require.ErrorAs(t, err, &je, err.Error())
			require.Equal(t, tc.path, je.Path, err.Error())
			require.Contains(t, je.Reason, tc.reason)
			require.ErrorIs(t, err, codecs.ErrBadBody)
			require.Contains(t, err.Error(), "shop.sales.dbo.orders[3]@42")
		})
	}
}

// declare reads a declaration out of a JsonConverter envelope schema, as
// a user would write it from the connector's documentation.
func declare(t *testing.T, value, key []byte) codecs.DeclaredTable {
	var msg struct {
		Schema struct {
			Fields []struct {
				Field  string
				Fields []struct {
					Field, Type, Name string
					Optional          bool
					Parameters        map[string]string
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal(value, &msg))
	var out codecs.DeclaredTable
	for _, f := range msg.Schema.Fields[1].Fields {
		c := codecs.DeclaredColumn{Name: f.Field, Type: f.Type, Logical: f.Name, Optional: f.Optional}
		c.Scale, _ = strconv.Atoi(f.Parameters["scale"])
		c.Precision, _ = strconv.Atoi(f.Parameters["connect.decimal.precision"])
		out.Columns = append(out.Columns, c)
	}
	var k struct{ Payload map[string]any }
	require.NoError(t, json.Unmarshal(key, &k))
	for name := range k.Payload {
		out.Key = append(out.Key, name)
	}
	return out
}

// payloadOf strips a JsonConverter record to what schemas.enable=false writes.
// TestJSONSourceUndeclared reads the table's name from the source block as
// Kafka's JsonConverter gives it: a member the block's schema does not
// declare is dropped, so a record whose schema renames "db" has no
// database, whatever its payload holds.
func TestJSONSourceUndeclared(t *testing.T) {
	key, value := readJSONPair(t, "update_escapes")
	var m map[string]any
	require.NoError(t, json.Unmarshal(value, &m))
	for _, f := range m["schema"].(map[string]any)["fields"].([]any) {
		if fm := f.(map[string]any); fm["field"] == "source" {
			for _, sf := range fm["fields"].([]any) {
				if sfm := sf.(map[string]any); sfm["field"] == "db" {
					sfm["field"], sfm["optional"] = "dc", true
				}
			}
		}
	}
	renamed, err := json.Marshal(m)
	require.NoError(t, err)

	d, err := codecs.NewDecoder(nil, codecs.Options{Converter: codecs.ConverterJSON})
	require.NoError(t, err)
	ch, err := d.Decode(t.Context(), key, value)
	require.NoError(t, err)
	require.NotEmpty(t, ch.Table.Database, "the unchanged record names its database")
	ch, err = d.Decode(t.Context(), key, renamed)
	require.NoError(t, err)
	require.Empty(t, ch.Table.Database)
	require.Equal(t, "orders", ch.Table.Table)
}

func payloadOf(t *testing.T, b []byte) []byte {
	if b == nil {
		return nil
	}
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	return m["payload"]
}

// TestJSONDeclared decodes schemas.enable=false records of a topic whose
// columns are declared: the same changes as with the schema in every
// record; a field not declared, or a topic not declared, is refused by
// name.
func TestJSONDeclared(t *testing.T) {
	g := dbzgen.New(nil, dbzgen.Options{})
	orders, err := g.Table(dbzgen.Orders())
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 5, Keys: 10, Snapshot: true, MaxTxEvents: 2, TransactionMetadata: true}, orders)
	require.NoError(t, err)
	ev := w.Next()
	key, value, err := g.EncodeJSON(ev, dbzgen.DecimalNumeric)
	require.NoError(t, err)
	topic := orders.Topic()
	withSchema := newJSONDecoder(t, codecs.Options{})
	declared := newJSONDecoder(t, codecs.Options{Declared: map[string]codecs.DeclaredTable{topic: declare(t, value, key)}})

	ops := map[codecs.Op]int{}
	for i := range 200 {
		if i > 0 {
			ev = w.Next()
			key, value, err = g.EncodeJSON(ev, dbzgen.DecimalNumeric)
			require.NoError(t, err)
		}
		want, err := withSchema.DecodeRecord(t.Context(), topic, 0, int64(i), key, value)
		require.NoError(t, err)
		got, err := declared.DecodeRecord(t.Context(), topic, 0, int64(i), payloadOf(t, key), payloadOf(t, value))
		require.NoError(t, err, "event %d", i)
		msg := fmt.Sprintf("event %d", i)
		require.Equal(t, want.Op, got.Op, msg)
		require.Equal(t, want.Table, got.Table, msg)
		require.Equal(t, want.Pos, got.Pos, msg)
		require.Equal(t, want.TxID, got.TxID, msg)
		require.Equal(t, want.Row, got.Row, msg)
		require.Equal(t, want.Key, got.Key, msg)
		require.Equal(t, want.KeyIndex, got.KeyIndex, msg)
		if got.Layout != nil {
			for j, c := range got.Layout.Columns {
				require.Equal(t, want.Layout.Columns[j].Type, c.Type, c.Name)
				require.Equal(t, want.Layout.Columns[j].Nullable, c.Nullable, c.Name)
			}
		}
		ops[got.Op]++
	}
	require.Positive(t, ops[codecs.OpTombstone])
	require.Positive(t, ops[codecs.OpUpdate])

	bad := []byte(`{"before":null,"after":{"order_id":1,"surprise":2},"source":{"db":"sales","schema":"dbo","table":"orders"},"op":"c"}`)
	_, err = declared.DecodeRecord(t.Context(), topic, 1, 9, []byte(`{"order_id":1}`), bad)
	var je *codecs.JSONError
	require.ErrorAs(t, err, &je)
	require.Equal(t, "$.after.surprise", je.Path)
	require.Contains(t, err.Error(), "field is not declared")
	require.Contains(t, err.Error(), topic+"[1]@9")

	_, err = declared.DecodeRecord(t.Context(), "other.topic", 0, 3, nil, bad)
	require.ErrorAs(t, err, &je)
	require.Equal(t, "$.before", je.Path)
	require.Contains(t, je.Reason, "declare its topic's columns")

	_, err = codecs.NewDecoder(nil, codecs.Options{Converter: codecs.ConverterJSON, Declared: map[string]codecs.DeclaredTable{
		topic: {Key: []string{"id"}, Columns: []codecs.DeclaredColumn{{Name: "id", Type: "int128"}}}}})
	require.ErrorIs(t, err, codecs.ErrUnsupportedSchema)
	require.ErrorContains(t, err, `column "id": codecs: unsupported schema: type "int128"`)
}
