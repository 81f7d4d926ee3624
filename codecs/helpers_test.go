package codecs

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/linkedin/goavro/v2"
	"github.com/stretchr/testify/require"
)

// mapSource is an in-memory SchemaSource counting lookups.
type mapSource struct {
	mu      sync.Mutex
	schemas map[int]string
	calls   atomic.Int64
}

func newMapSource() *mapSource { return &mapSource{schemas: map[int]string{}} }

func (m *mapSource) add(id int, schema string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.schemas[id] = schema
}

func (m *mapSource) SchemaByID(_ context.Context, id int) (string, error) {
	m.calls.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.schemas[id]
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrUnknownSchema, id)
	}
	return s, nil
}

// tcol is one column of a test table.
type tcol struct {
	name     string
	typ      any // Avro type of the non-null branch, as JSON-able Go value
	nullable bool
	// nullLast puts null second ([T,"null"]), as Connect does for columns
	// with a default; def is then that default.
	nullLast bool
	def      any
}

const testNS = "shop.sales.dbo.orders"

// layoutVersion selects the Debezium envelope layout.
type layoutVersion int

const (
	layoutV2 layoutVersion = iota // Debezium 2.0–2.5: op, ts_ms, transaction last
	layoutV3                      // Debezium 2.7+/3.x: transaction before op, ts_us/ts_ns
)

func fieldSchema(c tcol) map[string]any {
	f := map[string]any{"name": c.name}
	switch {
	case !c.nullable:
		f["type"] = c.typ
	case c.nullLast:
		f["type"] = []any{c.typ, "null"}
		f["default"] = c.def
	default:
		f["type"] = []any{"null", c.typ}
		f["default"] = nil
	}
	return f
}

func rowSchema(cols []tcol) map[string]any {
	fields := make([]any, len(cols))
	for i, c := range cols {
		fields[i] = fieldSchema(c)
	}
	return map[string]any{"type": "record", "name": "Value", "fields": fields, "connect.name": testNS + ".Value"}
}

func optLong(name string) map[string]any {
	return map[string]any{"name": name, "type": []any{"null", "long"}, "default": nil}
}

func optString(name string) map[string]any {
	return map[string]any{"name": name, "type": []any{"null", "string"}, "default": nil}
}

func sourceSchema(v layoutVersion) map[string]any {
	fields := []any{
		map[string]any{"name": "version", "type": "string"},
		map[string]any{"name": "connector", "type": "string"},
		map[string]any{"name": "name", "type": "string"},
		map[string]any{"name": "ts_ms", "type": "long"},
		map[string]any{"name": "snapshot", "type": []any{map[string]any{"type": "string", "connect.version": 1,
			"connect.parameters": map[string]any{"allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},
			"connect.default":    "false", "connect.name": "io.debezium.data.Enum"}, "null"}, "default": "false"},
		map[string]any{"name": "db", "type": "string"},
		optString("sequence"),
	}
	if v == layoutV3 {
		fields = append(fields, optLong("ts_us"), optLong("ts_ns"))
	}
	fields = append(fields,
		map[string]any{"name": "schema", "type": "string"},
		map[string]any{"name": "table", "type": "string"},
		optString("change_lsn"), optString("commit_lsn"), optLong("event_serial_no"))
	s := map[string]any{"type": "record", "name": "Source", "namespace": "io.debezium.connector.sqlserver", "fields": fields,
		"connect.name": "io.debezium.connector.sqlserver.Source"}
	if v == layoutV3 {
		s["connect.version"] = 1
	}
	return s
}

func envelopeSchema(v layoutVersion, cols []tcol) string {
	tx := map[string]any{"name": "transaction", "type": []any{"null", map[string]any{
		"type": "record", "name": "block", "namespace": "event", "fields": []any{
			map[string]any{"name": "id", "type": "string"},
			map[string]any{"name": "total_order", "type": "long"},
			map[string]any{"name": "data_collection_order", "type": "long"},
		}, "connect.version": 1, "connect.name": "event.block"}}, "default": nil}
	fields := []any{
		map[string]any{"name": "before", "type": []any{"null", rowSchema(cols)}, "default": nil},
		map[string]any{"name": "after", "type": []any{"null", "Value"}, "default": nil},
		map[string]any{"name": "source", "type": sourceSchema(v)},
	}
	op := map[string]any{"name": "op", "type": "string"}
	if v == layoutV3 {
		fields = append(fields, tx, op, optLong("ts_ms"), optLong("ts_us"), optLong("ts_ns"))
	} else {
		fields = append(fields, op, optLong("ts_ms"), tx)
	}
	env := map[string]any{"type": "record", "name": "Envelope", "namespace": testNS, "fields": fields,
		"connect.version": 2, "connect.name": testNS + ".Envelope"}
	b, err := json.Marshal(env)
	if err != nil {
		panic(err) // test schemas are static; a failure is a bug in this file
	}
	return string(b)
}

func keySchema(cols []tcol) string {
	fields := make([]any, len(cols))
	for i, c := range cols {
		fields[i] = fieldSchema(c)
	}
	b, err := json.Marshal(map[string]any{"type": "record", "name": "Key", "namespace": testNS, "fields": fields,
		"connect.name": testNS + ".Key"})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// encode writes datum with the schema as a Confluent-framed message. The
// binary encoding of a logical type is its underlying type's, so the datum
// carries raw values (bytes for decimals, longs for timestamps).
func encode(t testing.TB, id int, schema string, datum any) []byte {
	t.Helper()
	var root any
	require.NoError(t, json.Unmarshal([]byte(schema), &root))
	stripLogicalTypes(root)
	plain, err := json.Marshal(root)
	require.NoError(t, err)
	codec, err := goavro.NewCodec(string(plain))
	require.NoError(t, err)
	out, err := codec.BinaryFromNative(AppendHeader(nil, id), datum)
	require.NoError(t, err)
	return out
}

// srcBlock is the source block of a test event.
type srcBlock struct {
	snapshot       any // string or nil
	commit, change any // LSN strings or nil
	serial         any // int64 or nil
	tsMS           int64
}

func (s srcBlock) native(v layoutVersion) map[string]any {
	m := map[string]any{
		"version": "3.4.0.Final", "connector": "sqlserver", "name": "shop", "ts_ms": s.tsMS,
		"db": "sales", "sequence": nil, "schema": "dbo", "table": "orders",
		"snapshot":        union("string", s.snapshot),
		"change_lsn":      union("string", s.change),
		"commit_lsn":      union("string", s.commit),
		"event_serial_no": union("long", s.serial),
	}
	if v == layoutV3 {
		m["ts_us"] = union("long", s.tsMS*1000)
		m["ts_ns"] = nil
	}
	return m
}

func union(branch string, v any) any {
	if v == nil {
		return nil
	}
	return goavro.Union(branch, v)
}

// envelope builds a native envelope datum for the stripped codec.
func envelope(v layoutVersion, op string, before, after map[string]any, src srcBlock, txID string) map[string]any {
	m := map[string]any{
		"before": union(testNS+".Value", nilMap(before)),
		"after":  union(testNS+".Value", nilMap(after)),
		"source": src.native(v),
		"op":     op,
		"ts_ms":  union("long", int64(1710498650002)),
	}
	if txID != "" {
		m["transaction"] = goavro.Union("event.block", map[string]any{"id": txID, "total_order": int64(1), "data_collection_order": int64(1)})
	} else {
		m["transaction"] = nil
	}
	if v == layoutV3 {
		m["ts_us"] = nil
		m["ts_ns"] = nil
	}
	return m
}

func nilMap(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}
