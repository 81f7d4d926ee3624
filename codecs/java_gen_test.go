package codecs_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// javaGenOptions are the generator options matching each Java golden
// directory's connector settings.
var javaGenOptions = map[string]dbzgen.Options{
	"default":        {},
	"propagate":      {PropagateSourceTypes: true},
	"decimal_string": {DecimalHandling: dbzgen.DecimalString, PropagateSourceTypes: true},
	"decimal_double": {DecimalHandling: dbzgen.DecimalDouble},
	"time_micro":     {TimePrecision: dbzgen.TimeAdaptiveMicroseconds},
	"time_connect":   {TimePrecision: dbzgen.TimeConnect},
	"binary_base64":  {BinaryHandling: dbzgen.BinaryBase64, PropagateSourceTypes: true},
	"binary_hex":     {BinaryHandling: dbzgen.BinaryHex, PropagateSourceTypes: true},
}

// TestJavaMatchesGenerator feeds the row values the Java harness handed
// Debezium's converters to dbzgen, encodes the same events (Avro through the
// registry, and the JsonConverter form), and requires codecs to decode
// dbzgen's records exactly as it decodes Debezium's: same columns, types,
// values, placeholders, positions and transaction blocks; and dbzgen's
// JsonConverter schema to equal Kafka's.
func TestJavaMatchesGenerator(t *testing.T) {
	for _, v := range readJavaVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			gopts, ok := javaGenOptions[v.name]
			require.True(t, ok, "no generator options for %s", v.name)
			gopts.Version = "3.6.1.Final"
			h := newGenHarness(t, gopts, v.options())
			table, err := h.gen.Table(dbzgen.EveryType())
			require.NoError(t, err)
			types := map[string]string{}
			for _, c := range table.Def().Columns {
				types[c.Name] = strings.ToLower(c.Type)
			}
			java, err := codecs.NewDecoder(javaSchemas{1: v.keyAvsc, 2: v.valueAvsc}, v.options())
			require.NoError(t, err)
			for _, e := range v.events {
				if e.Want == nil {
					continue
				}
				ev := javaGenEvent(t, table, types, e)
				fromJava, err := java.Decode(t.Context(), e.KeyAvro, e.ValueAvro)
				require.NoError(t, err, e.Event)
				fromGen := h.decode(t, ev)
				sameChange(t, fromJava, fromGen, e.Event+": Debezium and dbzgen differ")

				key, value, err := h.gen.EncodeJSON(ev, dbzgen.DecimalBase64)
				require.NoError(t, err, e.Event)
				require.Empty(t, jsonDiff("schema", jsonSchemaPart(t, []byte(e.KeyJSON)), jsonSchemaPart(t, key)),
					"%s: JsonConverter key schema (Debezium's, then dbzgen's)", e.Event)
				require.Empty(t, jsonDiff("schema", jsonSchemaPart(t, []byte(*e.ValueJSON)), jsonSchemaPart(t, value)),
					"%s: JsonConverter schema (Debezium's, then dbzgen's)", e.Event)
			}
		})
	}
}

func jsonSchemaPart(t *testing.T, msg []byte) any {
	t.Helper()
	var m struct {
		Schema any `json:"schema"`
	}
	require.NoError(t, json.Unmarshal(msg, &m))
	return m.Schema
}

// jsonDiff lists where two decoded JSON values differ, naming struct
// fields by their "field" member.
func jsonDiff(path string, a, b any) []string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %v vs %v", path, a, b)}
		}
		var out []string
		for k := range x {
			out = append(out, jsonDiff(path+"."+k, x[k], y[k])...)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing vs %v", path, k, y[k]))
			}
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return []string{fmt.Sprintf("%s: %d items vs %v", path, len(x), b)}
		}
		var out []string
		for i := range x {
			p := fmt.Sprintf("%s[%d]", path, i)
			if m, ok := x[i].(map[string]any); ok && m["field"] != nil {
				p = fmt.Sprintf("%s.%v", path, m["field"])
			}
			out = append(out, jsonDiff(p, x[i], y[i])...)
		}
		return out
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		return []string{fmt.Sprintf("%s: %v vs %v", path, a, b)}
	}
	return nil
}

// javaGenEvent is the dbzgen event for a Java golden event.
func javaGenEvent(t *testing.T, table *dbzgen.Table, types map[string]string, e javaEvent) dbzgen.Event {
	t.Helper()
	w := e.Want
	src := func(k string) string { return strings.Trim(string(w.Source[k]), `"`) }
	ts, err := strconv.ParseInt(src("ts_ms"), 10, 64)
	require.NoError(t, err)
	ev := dbzgen.Event{Table: table, Op: dbzgen.Op(w.Op[0]), ProcessedAt: time.UnixMilli(w.TsMS),
		Source: dbzgen.Source{Time: time.UnixMilli(ts), CommitLSN: javaLSN(t, src("commit_lsn")), ChangeLSN: javaLSN(t, src("change_lsn"))}}
	if s := src("snapshot"); s != "false" {
		ev.Source.Snapshot = s
	}
	if n := src("event_serial_no"); n != "null" {
		ev.Source.SerialNo, err = strconv.ParseInt(n, 10, 64)
		require.NoError(t, err)
	}
	if tx := w.Transaction; tx != nil {
		ev.Transaction = &dbzgen.Transaction{ID: tx.ID, TotalOrder: tx.TotalOrder, DataCollectionOrder: tx.DataCollectionOrder}
	}
	var input struct {
		Before, After map[string]json.RawMessage
	}
	require.NotNil(t, e.Input, e.Event)
	require.NoError(t, json.Unmarshal(e.Input, &input))
	if ev.Op != dbzgen.OpCreate && ev.Op != dbzgen.OpRead {
		ev.Before = javaGenRow(t, types, input.Before)
	}
	if ev.Op != dbzgen.OpDelete {
		ev.After = javaGenRow(t, types, input.After)
	}
	return ev
}

func javaLSN(t *testing.T, s string) dbzgen.LSN {
	t.Helper()
	if s == "null" || s == "" {
		return dbzgen.LSN{}
	}
	l, err := codecs.ParseLSN(s)
	require.NoError(t, err)
	return dbzgen.LSN(l)
}

// javaGenRow converts the driver's values (as the harness wrote them) to the
// Go values dbzgen takes for each SQL Server type.
func javaGenRow(t *testing.T, types map[string]string, in map[string]json.RawMessage) dbzgen.Row {
	t.Helper()
	row := dbzgen.Row{}
	for name, raw := range in {
		typ, ok := types[name]
		require.True(t, ok, "column %s", name)
		if string(raw) == "null" {
			row[name] = nil
			continue
		}
		var s string
		if raw[0] == '"' {
			require.NoError(t, json.Unmarshal(raw, &s))
			if s == "__unavailable__" {
				row[name] = dbzgen.Placeholder{}
				continue
			}
		}
		base, _, _ := strings.Cut(typ, "(")
		var v any
		var err error
		switch base {
		case "bit":
			v = string(raw) == "true"
		case "tinyint", "smallint", "int", "bigint":
			v, err = strconv.ParseInt(string(raw), 10, 64)
		case "real":
			var f float64
			f, err = strconv.ParseFloat(string(raw), 32)
			v = float32(f)
		case "float":
			var f float64
			f, err = strconv.ParseFloat(string(raw), 64)
			v = f
			if typ == "float(24)" {
				v = float32(f)
			}
		case "binary", "varbinary", "image", "rowversion", "geometry", "geography", "hierarchyid":
			v, err = base64.StdEncoding.DecodeString(s)
		case "date":
			v, err = time.Parse(time.DateOnly, s)
		case "time":
			var tm time.Time
			tm, err = parseJavaTime(s, "15:04")
			v = time.Duration(tm.Hour())*time.Hour + time.Duration(tm.Minute())*time.Minute +
				time.Duration(tm.Second())*time.Second + time.Duration(tm.Nanosecond())
		case "datetime", "smalldatetime", "datetime2":
			v, err = parseJavaTime(s, "2006-01-02T15:04")
		case "datetimeoffset":
			v, err = parseJavaTime(s, "2006-01-02T15:04Z07:00")
		default:
			v = s
		}
		require.NoError(t, err, "column %s: %s", name, raw)
		row[name] = v
	}
	return row
}

// parseJavaTime parses java.time's ISO text, which leaves out zero seconds
// and fractions ("13:46", "2024-02-29T13:46", "0001-01-01T00:00-14:00").
func parseJavaTime(s, short string) (time.Time, error) {
	long := strings.Replace(short, "15:04", "15:04:05.999999999", 1)
	if tm, err := time.Parse(long, s); err == nil {
		return tm, nil
	}
	tm, err := time.Parse(short, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parsing %q: %w", s, err)
	}
	return tm, nil
}
