package codecs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// The files of testdata/debezium/java are SQL Server change events that
// Debezium's own SQL Server connector classes built and Kafka Connect's
// JsonConverter and AvroData serialised (internal/harness/dbzjava; the
// README beside them says how). Each directory is one connector setting.

// javaDir is where the Java harness writes.
const javaDir = "testdata/debezium/java"

// javaColumn is one field of a Connect struct schema as Debezium built it.
type javaColumn struct {
	Field      string            `json:"field"`
	Type       string            `json:"type"`
	Name       string            `json:"name"`
	Version    int               `json:"version"`
	Parameters map[string]string `json:"parameters"`
	Optional   bool              `json:"optional"`
}

type javaSchema struct {
	Topic  string       `json:"topic"`
	Key    []javaColumn `json:"key"`
	Value  []javaColumn `json:"value"`
	Source []javaColumn `json:"source"`
}

// javaWant is the envelope's Connect value in Java, as JSON: bytes in
// base64, decimals as plain text, java.util.Date as epoch milliseconds.
type javaWant struct {
	Op          string                     `json:"op"`
	Before      map[string]json.RawMessage `json:"before"`
	After       map[string]json.RawMessage `json:"after"`
	Source      map[string]json.RawMessage `json:"source"`
	TsMS        int64                      `json:"ts_ms"`
	Transaction *struct {
		ID                  string `json:"id"`
		TotalOrder          int64  `json:"total_order"`
		DataCollectionOrder int64  `json:"data_collection_order"`
	} `json:"transaction"`
}

type javaEvent struct {
	Event     string    `json:"event"`
	Op        string    `json:"op"`
	KeyAvro   []byte    `json:"key_avro"`
	ValueAvro []byte    `json:"value_avro"`
	KeyJSON   string    `json:"key_json"`
	ValueJSON *string   `json:"value_json"`
	Want      *javaWant `json:"want"`
	// Input is the row the JDBC driver handed the converters (by column
	// name): internal/harness/dbzjava's AllTypes.input.
	Input json.RawMessage `json:"input"`
}

// javaVariant is one directory: its schemas and events.
type javaVariant struct {
	name      string
	schema    javaSchema
	keyAvsc   string
	valueAvsc string
	events    []javaEvent
}

func readJavaVariants(t *testing.T) []javaVariant {
	t.Helper()
	dirs, err := os.ReadDir(javaDir)
	require.NoError(t, err)
	var out []javaVariant
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		v := javaVariant{name: d.Name()}
		dir := filepath.Join(javaDir, d.Name())
		raw, err := os.ReadFile(filepath.Join(dir, "schema.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &v.schema))
		k, err := os.ReadFile(filepath.Join(dir, "key.avsc"))
		require.NoError(t, err)
		val, err := os.ReadFile(filepath.Join(dir, "value.avsc"))
		require.NoError(t, err)
		v.keyAvsc, v.valueAvsc = string(k), string(val)
		f, err := os.Open(filepath.Join(dir, "events.jsonl"))
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var e javaEvent
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&e), "%s: %s", dir, sc.Text()[:min(80, len(sc.Text()))])
			v.events = append(v.events, e)
		}
		require.NoError(t, sc.Err())
		require.NoError(t, f.Close())
		out = append(out, v)
	}
	require.GreaterOrEqual(t, len(out), 8, "variants in %s", javaDir)
	return out
}

// javaSchemas serves the two schemas of a variant under the ids the
// harness framed them with (1 key, 2 value).
type javaSchemas map[int]string

func (s javaSchemas) SchemaByID(_ context.Context, id int) (string, error) {
	if v, ok := s[id]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%w: %d", codecs.ErrUnknownSchema, id)
}

// options are the codecs options a user sets for the variant's connector
// settings.
func (v javaVariant) options() codecs.Options {
	switch v.name {
	case "binary_base64":
		return codecs.Options{BinaryHandling: codecs.BinaryBase64}
	case "binary_hex":
		return codecs.Options{BinaryHandling: codecs.BinaryHex}
	}
	return codecs.Options{}
}

// TestJavaGoldens decodes every event Debezium's classes built, through the
// Avro path and the JSON path, and compares both with what the Java side
// meant: the op, position, snapshot marker, transaction block, every column's
// Delta type and every value.
func TestJavaGoldens(t *testing.T) {
	for _, v := range readJavaVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			opts := v.options()
			avro, err := codecs.NewDecoder(javaSchemas{1: v.keyAvsc, 2: v.valueAvsc}, opts)
			require.NoError(t, err)
			jsonDec := newJSONDecoder(t, opts)
			cols := map[string]javaColumn{}
			for _, c := range v.schema.Value {
				cols[c.Field] = c
			}
			for _, e := range v.events {
				var value []byte
				if e.ValueJSON != nil {
					value = []byte(*e.ValueJSON)
				}
				fromAvro, err := avro.Decode(t.Context(), e.KeyAvro, e.ValueAvro)
				require.NoError(t, err, "%s (avro)", e.Event)
				fromJSON, err := jsonDec.Decode(t.Context(), []byte(e.KeyJSON), value)
				require.NoError(t, err, "%s (json)", e.Event)
				sameChange(t, fromAvro, fromJSON, e.Event+": avro and json differ")
				checkJavaEvent(t, v, cols, e, fromAvro)
			}
		})
	}
}

func checkJavaEvent(t *testing.T, v javaVariant, cols map[string]javaColumn, e javaEvent, ch codecs.Change) {
	t.Helper()
	if e.Op == "tombstone" {
		require.Equal(t, codecs.OpTombstone, ch.Op, e.Event)
		require.Len(t, ch.Key, 1, e.Event)
		return
	}
	w := e.Want
	require.Equal(t, codecs.Op(w.Op[0]), ch.Op, e.Event)
	require.Equal(t, codecs.TableID{Database: "sales", Schema: "dbo", Table: "all_types"}, ch.Table, e.Event)

	src := func(k string) string {
		var s string
		if raw := w.Source[k]; string(raw) != "null" {
			s = strings.Trim(string(raw), `"`)
		}
		return s
	}
	pos, err := codecs.ParsePosition(src("commit_lsn") + "/" + src("change_lsn") + "/" + src("event_serial_no"))
	require.NoError(t, err)
	require.Equal(t, pos, ch.Pos, e.Event)
	ts, err := strconv.ParseInt(src("ts_ms"), 10, 64)
	require.NoError(t, err)
	require.Equal(t, ts, ch.CommitMillis, e.Event)
	snap := src("snapshot")
	if snap == "false" {
		snap = ""
	}
	require.Equal(t, snap, ch.Snapshot, e.Event)
	if w.Transaction != nil {
		require.Equal(t, w.Transaction.ID, ch.TxID, e.Event)
		require.Equal(t, w.Transaction.DataCollectionOrder, ch.TxOrder, e.Event)
	} else {
		require.Empty(t, ch.TxID, e.Event)
	}

	row := w.After
	if ch.Op == codecs.OpDelete {
		row = w.Before
	}
	require.Len(t, ch.Layout.Columns, len(v.schema.Value), e.Event)
	var unavailable []int
	for i, c := range ch.Layout.Columns {
		jc, ok := cols[c.AvroName]
		require.True(t, ok, "%s: column %s not in Debezium's schema", e.Event, c.AvroName)
		msg := fmt.Sprintf("%s: column %s", e.Event, c.AvroName)
		require.Equal(t, javaDeltaType(jc), c.Type.String(), msg)
		require.Equal(t, jc.Optional, c.Nullable, msg)
		wantName := jc.Field
		if n, ok := jc.Parameters["__debezium.source.column.name"]; ok {
			wantName = n
		}
		require.Equal(t, wantName, c.Name, msg)
		want, unavail := javaValue(t, jc, v.options().BinaryHandling, row[c.AvroName], msg)
		if unavail {
			unavailable = append(unavailable, i)
		}
		require.Equal(t, want, ch.Row[i], msg)
	}
	require.Equal(t, unavailable, ch.Unavailable, e.Event)
	id, err := strconv.ParseInt(string(row["id"]), 10, 32)
	require.NoError(t, err)
	require.Equal(t, []any{int32(id)}, ch.Key, e.Event)
}

// decimalSource reports whether a propagated source type is a decimal one,
// and its precision and scale.
func decimalSource(c javaColumn) (p, s int, ok bool) {
	switch c.Parameters["__debezium.source.column.type"] {
	case "DECIMAL", "NUMERIC", "MONEY", "SMALLMONEY":
		p, _ = strconv.Atoi(c.Parameters["__debezium.source.column.length"])
		s, _ = strconv.Atoi(c.Parameters["__debezium.source.column.scale"])
		return p, s, true
	}
	return 0, 0, false
}

// binarySource reports whether a propagated source type is a binary one.
func binarySource(c javaColumn) bool {
	switch c.Parameters["__debezium.source.column.type"] {
	case "BINARY", "VARBINARY", "IMAGE", "TIMESTAMP", "GEOMETRY", "GEOGRAPHY", "HIERARCHYID":
		return true
	}
	return false
}

// javaDeltaType is docs/type-mapping.md applied to Debezium's Connect schema.
func javaDeltaType(c javaColumn) string {
	switch c.Name {
	case "org.apache.kafka.connect.data.Decimal":
		return fmt.Sprintf("decimal(%s,%s)", c.Parameters["connect.decimal.precision"], c.Parameters["scale"])
	case "io.debezium.time.Date", "org.apache.kafka.connect.data.Date":
		return "date"
	case "io.debezium.time.Time", "io.debezium.time.MicroTime", "io.debezium.time.NanoTime", "org.apache.kafka.connect.data.Time":
		return "time"
	case "io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp", "io.debezium.time.NanoTimestamp",
		"org.apache.kafka.connect.data.Timestamp":
		return "timestamp_ntz"
	case "io.debezium.time.ZonedTimestamp":
		return "timestamp"
	case "":
	default:
		return "unmapped " + c.Name
	}
	switch c.Type {
	case "boolean":
		return "boolean"
	case "int16":
		return "short"
	case "int32":
		return "integer"
	case "int64":
		return "long"
	case "float32":
		return "float"
	case "float64":
		return "double"
	case "bytes":
		return "binary"
	case "string":
		if p, s, ok := decimalSource(c); ok {
			return fmt.Sprintf("decimal(%d,%d)", p, s)
		}
		if binarySource(c) {
			return "binary"
		}
		return "string"
	}
	return "unmapped " + c.Type
}

// javaValue is the Go value codecs must produce for a Java value, and
// whether it is Debezium's unavailable-value placeholder.
func javaValue(t *testing.T, c javaColumn, mode codecs.BinaryMode, raw json.RawMessage, msg string) (any, bool) {
	t.Helper()
	if raw == nil || string(raw) == "null" {
		return nil, false
	}
	num := func() int64 {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		require.NoError(t, err, msg)
		return n
	}
	str := func() string {
		var s string
		require.NoError(t, json.Unmarshal(raw, &s), msg)
		return s
	}
	b64 := func() []byte {
		b, err := base64.StdEncoding.DecodeString(str())
		require.NoError(t, err, msg)
		return b
	}
	floorDiv := func(a, b int64) int64 {
		q := a / b
		if a%b != 0 && (a < 0) != (b < 0) {
			q--
		}
		return q
	}
	const placeholder = "__debezium_unavailable_value"
	switch c.Name {
	case "org.apache.kafka.connect.data.Decimal":
		p, _ := strconv.Atoi(c.Parameters["connect.decimal.precision"])
		s, _ := strconv.Atoi(c.Parameters["scale"])
		n, err := decimal128.Parse(str(), p, s)
		require.NoError(t, err, msg)
		return n, false
	case "io.debezium.time.Date":
		return int32(num()), false
	case "org.apache.kafka.connect.data.Date":
		return int32(floorDiv(num(), 86_400_000)), false
	case "io.debezium.time.Time", "org.apache.kafka.connect.data.Time",
		"io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp":
		return num() * 1000, false
	case "io.debezium.time.MicroTime", "io.debezium.time.MicroTimestamp":
		return num(), false
	case "io.debezium.time.NanoTime", "io.debezium.time.NanoTimestamp":
		return floorDiv(num(), 1000), false
	case "io.debezium.time.ZonedTimestamp":
		ts, err := time.Parse(time.RFC3339Nano, str())
		require.NoError(t, err, msg)
		return ts.UnixMicro(), false
	}
	switch c.Type {
	case "boolean":
		return string(raw) == "true", false
	case "int16":
		return int16(num()), false
	case "int32":
		return int32(num()), false
	case "int64":
		return num(), false
	case "float32":
		f, err := strconv.ParseFloat(string(raw), 32)
		require.NoError(t, err, msg)
		return float32(f), false
	case "float64":
		f, err := strconv.ParseFloat(string(raw), 64)
		require.NoError(t, err, msg)
		return f, false
	case "bytes":
		b := b64()
		if string(b) == placeholder {
			return nil, true
		}
		return b, false
	case "string":
		s := str()
		if p, sc, ok := decimalSource(c); ok {
			n, err := decimal128.Parse(s, p, sc)
			require.NoError(t, err, msg)
			return n, false
		}
		if binarySource(c) {
			var b []byte
			var err error
			if mode == codecs.BinaryHex {
				b, err = hex.DecodeString(s)
			} else {
				b, err = base64.StdEncoding.DecodeString(s)
			}
			require.NoError(t, err, msg)
			if string(b) == placeholder {
				return nil, true
			}
			return b, false
		}
		if s == placeholder {
			return nil, true
		}
		return s, false
	}
	t.Fatalf("%s: no expectation for Connect type %s %s", msg, c.Type, c.Name)
	return nil, false
}

// TestJavaTransactions decodes the transaction topic's BEGIN and END records
// that Debezium's TransactionMonitor wrote for the streamed events, through
// Avro (schema ids 3 and 4) and JSON, and compares them with the Java values.
func TestJavaTransactions(t *testing.T) {
	for _, v := range readJavaVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			dir := filepath.Join(javaDir, v.name)
			read := func(name string) string {
				b, err := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, err)
				return string(b)
			}
			avro, err := codecs.NewDecoder(javaSchemas{3: read("tx-key.avsc"), 4: read("tx-value.avsc")}, codecs.Options{})
			require.NoError(t, err)
			jsonDec := newJSONDecoder(t, codecs.Options{})
			// dbzgen writes the same markers.
			gen := newGenHarness(t, dbzgen.Options{}, codecs.Options{})
			table, err := gen.gen.Table(dbzgen.EveryType())
			require.NoError(t, err)
			var begins, ends int
			for i, line := range strings.Split(strings.TrimSpace(read("transactions.jsonl")), "\n") {
				var e struct {
					Topic     string `json:"topic"`
					ValueAvro []byte `json:"value_avro"`
					ValueJSON string `json:"value_json"`
					Want      struct {
						Status          string `json:"status"`
						ID              string `json:"id"`
						EventCount      *int64 `json:"event_count"`
						DataCollections []struct {
							DataCollection string `json:"data_collection"`
							EventCount     int64  `json:"event_count"`
						} `json:"data_collections"`
						TsMS int64 `json:"ts_ms"`
					} `json:"want"`
				}
				require.NoError(t, json.Unmarshal([]byte(line), &e))
				require.Equal(t, "shop.transaction", e.Topic)
				fromAvro, err := avro.DecodeTransaction(t.Context(), e.Topic, 0, int64(i), e.ValueAvro)
				require.NoError(t, err, "record %d (avro)", i)
				fromJSON, err := jsonDec.DecodeTransaction(t.Context(), e.Topic, 0, int64(i), []byte(e.ValueJSON))
				require.NoError(t, err, "record %d (json)", i)
				require.Equal(t, fromAvro, fromJSON, "record %d", i)

				w := e.Want
				commit, err := codecs.ParseLSN(w.ID)
				require.NoError(t, err)
				want := codecs.TxEvent{Status: codecs.TxStatus(w.Status), ID: w.ID, Commit: commit, Millis: w.TsMS}
				if w.EventCount != nil {
					want.EventCount = *w.EventCount
				}
				for _, dc := range w.DataCollections {
					parts := strings.Split(dc.DataCollection, ".")
					require.Len(t, parts, 3)
					if want.Counts == nil {
						want.Counts = map[codecs.TableID]int64{}
					}
					want.Counts[codecs.TableID{Database: parts[0], Schema: parts[1], Table: parts[2]}] = dc.EventCount
				}
				require.Equal(t, want, fromAvro, "record %d", i)

				marker := &dbzgen.TxMarker{Status: w.Status, ID: w.ID, ProcessedAt: time.UnixMilli(w.TsMS)}
				if len(w.DataCollections) > 0 {
					marker.Counts = map[*dbzgen.Table]int64{table: w.DataCollections[0].EventCount}
				}
				_, genValue, err := gen.gen.Encode(t.Context(), dbzgen.Event{Marker: marker})
				require.NoError(t, err)
				fromGen, err := gen.dec.DecodeTransaction(t.Context(), e.Topic, 0, int64(i), genValue)
				require.NoError(t, err)
				require.Equal(t, fromAvro, fromGen, "record %d: dbzgen", i)
				_, genJSON, err := gen.gen.EncodeJSON(dbzgen.Event{Marker: marker}, dbzgen.DecimalBase64)
				require.NoError(t, err)
				require.Empty(t, jsonDiff("schema", jsonSchemaPart(t, []byte(e.ValueJSON)), jsonSchemaPart(t, genJSON)),
					"record %d: JsonConverter schema (Debezium's, then dbzgen's)", i)
				switch want.Status {
				case codecs.TxBegin:
					begins++
				case codecs.TxEnd:
					ends++
				}
			}
			require.Equal(t, 4, begins)
			require.Equal(t, 4, ends)
		})
	}
}
