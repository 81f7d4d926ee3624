//go:build integration

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// typeCol is one column of a type matrix: its SQL type, the values of rows
// 2.. (row 1 is all NULL), and the SQL that prints it as deltaText prints
// the Delta column (NULL as "NULL").
type typeCol struct {
	name, typ string
	values    []string
	// print renders the column in the database's query; %s is the column.
	print string
}

// micros prints a time of day as the Delta column holds it: microseconds
// since midnight (Delta has no time type).
const micros = "(extract(epoch from %s) * 1000000)::bigint::text"

// pgTypes are the PostgreSQL types Debezium's connector maps, at their edges.
var pgTypes = []typeCol{
	{"i2", "smallint", []string{"-32768", "32767", "0"}, "%s::text"},
	{"i4", "integer", []string{"-2147483648", "2147483647", "0"}, "%s::text"},
	{"i8", "bigint", []string{"-9223372036854775808", "9223372036854775807", "0"}, "%s::text"},
	{"n", "numeric(38,10)", []string{"-9999999999999999999999999999.9999999999", "9999999999999999999999999999.9999999999", "0.0000000001"}, "%s::text"},
	{"n0", "numeric(5,0)", []string{"-99999", "99999", "0"}, "%s::text"},
	{"r4", "real", []string{"-3.4e38", "1.5", "0.25"}, "pyfloat(%s)"},
	{"f8", "double precision", []string{"-1.7976931348623157e308", "2.5", "-0.125"}, "pyfloat(%s)"},
	{"money", "money", []string{"-92233720368547758.08", "92233720368547758.07", "12.34"}, "(%s::numeric)::text"},
	{"tx", "text", []string{"''", "'héllo wörld ✓ 日本'", "'line\nbreak'"}, "%s"},
	{"vc", "varchar(10)", []string{"''", "'ÄÖÜäöüß€✓x'", "'a'"}, "%s"},
	{"ch", "char(3)", []string{"'a'", "'äöü'", "'   '"}, "rpad(%s::text, 3)"}, // padded, as stored
	{"by", "bytea", []string{`'\x'`, `'\x00ff'`, `'\xdeadbeef'`}, "encode(%s, 'hex')"},
	{"b", "boolean", []string{"false", "true", "true"}, "%s::text"},
	{"d", "date", []string{"'0001-01-01'", "'9999-12-31'", "'1970-01-01'"}, "to_char(%s, 'YYYY-MM-DD')"},
	{"t0", "time(0)", []string{"'00:00:00'", "'23:59:59'", "'12:00:00'"}, micros},
	{"t3", "time(3)", []string{"'00:00:00.001'", "'23:59:59.999'", "'12:34:56.5'"}, micros},
	{"t6", "time(6)", []string{"'00:00:00.000001'", "'23:59:59.999999'", "'12:34:56.123456'"}, micros},
	{"ttz", "timetz", []string{"'00:00:00+14'", "'23:59:59.999999-12'", "'12:34:56+02'"}, "(%s AT TIME ZONE 'UTC')::time::text || 'Z'"}, // in UTC
	{"ts0", "timestamp(0)", []string{"'0001-01-01 00:00:00'", "'9999-12-31 23:59:59'", "'1970-01-01 00:00:00'"}, `to_char(%s, 'FMYYYY-MM-DD"T"HH24:MI:SS.US')`},
	{"ts3", "timestamp(3)", []string{"'1900-01-01 00:00:00.001'", "'2262-04-11 23:47:16.854'", "'2024-02-29 13:14:15.5'"}, `to_char(%s, 'FMYYYY-MM-DD"T"HH24:MI:SS.US')`},
	{"ts6", "timestamp(6)", []string{"'1969-12-31 23:59:59.999999'", "'2038-01-19 03:14:08.000001'", "'2024-02-29 13:14:15.123456'"}, `to_char(%s, 'FMYYYY-MM-DD"T"HH24:MI:SS.US')`},
	{"tstz", "timestamptz", []string{"'0001-01-01 00:00:00+00'", "'9999-12-31 23:59:59.999999+00'", "'2024-02-29 13:14:15.123456+05:30'"}, `to_char(%s AT TIME ZONE 'UTC', 'FMYYYY-MM-DD"T"HH24:MI:SS.US"Z"')`},
	{"iv", "interval", []string{"'-1 day -2 hours'", "'1 year 2 months 3 days 04:05:06.789'", "'0'"}, "round((extract(epoch from %s) + extract(month from %s) * 37800) * 1000000)::bigint::text"},
	{"u", "uuid", []string{"'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"}, "%s::text"},
	{"j", "json", []string{`'{}'`, `'{"a": [1, 2, {"b": "ü"}]}'`, `'null'`}, "%s::text"},
	{"jb", "jsonb", []string{`'[]'`, `'{"a": [1, 2, {"b": "ü"}]}'`, `'"s"'`}, "%s::text"},
	{"x", "xml", []string{"'<a/>'", "'<a b=\"ü\">t</a>'", "'text'"}, "%s::text"},
	{"e", "mood", []string{"'sad'", "'happy'", "'ok'"}, "%s::text"},
	{"bt", "bit(4)", []string{"B'0000'", "B'1111'", "B'1010'"}, "bitshex(%s::text)"},
	{"vb", "varbit(16)", []string{"B''", "B'1111111111111111'", "B'101'"}, "bitshex(%s::text)"},
	{"ip", "inet", []string{"'0.0.0.0'", "'2001:db8::ff/64'", "'10.0.0.1'"}, "abbrev(%s)"},
	{"cidr", "cidr", []string{"'0.0.0.0/0'", "'2001:db8::/32'", "'10.0.0.0/8'"}, "%s::text"},
	{"mac", "macaddr", []string{"'00:00:00:00:00:00'", "'ff:ff:ff:ff:ff:ff'", "'08:00:2b:01:02:03'"}, "%s::text"},
}

// TestPostgresTypeMatrix runs Debezium's real PostgreSQL connector over a
// table with every column type it maps, at their edges (NULL, min, max,
// fractions, non-ASCII), and requires each Delta column, read by delta-rs
// and DuckDB, to print as the database prints it. A table with an array
// column is refused, naming the column and the fix, while the other table
// keeps being applied.
func TestPostgresTypeMatrix(t *testing.T) {
	pg := fulltier.PostgresServer(t)
	worker := fulltier.ConnectWorker(t)
	brokers := fulltier.KafkaBrokers(t)
	id := fmt.Sprintf("pgtypes%d", time.Now().UnixNano())
	pg.Exec("postgres", "CREATE DATABASE "+id)
	t.Cleanup(func() {
		pg.Exec("postgres", fmt.Sprintf("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '%s' AND NOT active", id))
	})
	var ddl, inserts strings.Builder
	ddl.WriteString("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');\nCREATE TABLE typed (id int PRIMARY KEY")
	for _, c := range pgTypes {
		fmt.Fprintf(&ddl, ", %s %s", c.name, c.typ)
	}
	ddl.WriteString(");\nCREATE TABLE arrays (id int PRIMARY KEY, tags int[], names text[]);\n")
	ddl.WriteString(`CREATE FUNCTION pyfloat(x double precision) RETURNS text IMMUTABLE LANGUAGE sql
  AS $$ SELECT CASE WHEN x = trunc(x) AND abs(x) < 1e16 THEN trunc(x)::bigint::text || '.0' ELSE x::text END $$;
-- Debezium sends bits as java.util.BitSet.toByteArray: little-endian bytes,
-- trailing zero bytes dropped (so no bits set is empty).
CREATE FUNCTION bitshex(b text) RETURNS text IMMUTABLE LANGUAGE sql AS $$
  SELECT CASE WHEN v = 0 THEN '' WHEN v < 256 THEN lpad(to_hex(v), 2, '0')
    ELSE lpad(to_hex(v & 255), 2, '0') || lpad(to_hex(v >> 8), 2, '0') END
  FROM (SELECT CASE WHEN b = '' THEN 0 ELSE lpad(b, 32, '0')::bit(32)::int END AS v) s $$;` + "\n")
	pg.Exec(id, ddl.String())
	cfg := fulltier.PostgresConnector(pg, id, id, "public.typed,public.arrays")
	worker.Register(id, cfg)
	waitTopicsQuietOrEmpty(t)

	inserts.WriteString("INSERT INTO typed (id) VALUES (1);\n")
	for row := range 3 {
		cols, vals := []string{"id"}, []string{fmt.Sprint(row + 2)}
		for _, c := range pgTypes {
			cols, vals = append(cols, c.name), append(vals, c.values[row])
		}
		fmt.Fprintf(&inserts, "INSERT INTO typed (%s) VALUES (%s);\n", strings.Join(cols, ", "), strings.Join(vals, ", "))
	}
	inserts.WriteString("INSERT INTO arrays VALUES (1, '{1,2}', '{a,b}');\n")
	pg.Exec(id, inserts.String())

	checkTypeMatrix(t, brokers, id, []string{id + ".public.typed", id + ".public.arrays"}, pgTypes,
		func(q string) string { return pg.Exec(id, q) }, "tags")
}

// waitTopicsQuietOrEmpty gives a connector that has nothing to snapshot a
// moment to start streaming.
func waitTopicsQuietOrEmpty(t *testing.T) { time.Sleep(3 * time.Second) }

// checkTypeMatrix consumes the typed table's topic and the array table's
// with `cdc2delta run`, requires every column of typed to print as the
// database prints it (all mismatches reported at once), and the array
// table to be refused naming arrayCol and column.exclude.list.
func checkTypeMatrix(t *testing.T, brokers []string, group string, topics []string, cols []typeCol, query func(string) string, arrayCol string) {
	t.Helper()
	ends := waitTopicsQuiet(t, brokers, topics[:1])
	root := t.TempDir()
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka: {brokers: [%q], group_id: %q, topics: [%q, %q]}
schema_registry: {url: "http://127.0.0.1:1"}
decoding: {converter: json}
tables: {path: "%s/{table}"}
batch: {max_records: 50, max_age: 50ms, min_records: 1}
metrics: {listen: ""}
log: {level: warn}
`, brokers[0], group, topics[0], topics[1], filepath.ToSlash(root)), 0o600))
	run := (&runFixture{t: t, cfg: cfgPath}).start()
	ok := poll(90*time.Second, 100*time.Millisecond, func() bool {
		return tableReached(t, filepath.Join(root, "typed"), topics[0], ends[topics[0]]) &&
			strings.Contains(run.log.String(), arrayCol)
	})
	log := run.stop()
	require.True(t, ok, "typed not applied, or the array table not refused by its column; log:\n%s", log)
	var refusal string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, arrayCol) {
			refusal = line
			break
		}
	}
	t.Logf("refusal: %s", refusal)
	require.Contains(t, refusal, "column.exclude.list")
	_, err := os.Stat(filepath.Join(root, "arrays", "_delta_log", "00000000000000000000.json"))
	require.True(t, os.IsNotExist(err), "the refused table was created")

	path := filepath.Join(root, "typed")
	reads := fulltier.Read(t,
		fulltier.Request{Engine: fulltier.DeltaRS, Path: path, ReadOptions: fulltier.ReadOptions{Filter: "true"}},
		fulltier.Request{Engine: fulltier.DuckDB, Path: path})
	var bad []string
	for _, c := range cols {
		expr := strings.ReplaceAll(c.print, "%s", c.name)
		// Only the last newline: a char(n) keeps its trailing spaces.
		want := strings.TrimRight(query(fmt.Sprintf("SELECT id, coalesce(%s, 'NULL') FROM typed ORDER BY id", expr)), "\n")
		for _, got := range reads {
			require.Empty(t, got.Err, "%s", got.Engine)
			if g := deltaText(got, []string{"id", c.name}); g != want {
				bad = append(bad, fmt.Sprintf("%s %s (%s):\n  database: %q\n  delta:    %q", got.Engine, c.name, c.typ, want, g))
			}
		}
	}
	require.Empty(t, bad, "columns that differ from the database:\n%s", strings.Join(bad, "\n"))
}
