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

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// typeCol is one column of a type matrix: its SQL type, the values of rows
// 2.. (row 1 is all NULL), and the SQL that prints it as deltaText prints
// the Delta column (NULL as "NULL").
type typeCol struct {
	name, typ string
	values    []string
	// print renders the column in the database's query; $c is the column.
	print string
}

// micros prints a time of day as the Delta column holds it: microseconds
// since midnight (Delta has no time type).
const micros = "(extract(epoch from $c) * 1000000)::bigint::text"

// pgTypes are the PostgreSQL types Debezium's connector maps, at their edges.
var pgTypes = []typeCol{
	{"i2", "smallint", []string{"-32768", "32767", "0"}, "$c::text"},
	{"i4", "integer", []string{"-2147483648", "2147483647", "0"}, "$c::text"},
	{"i8", "bigint", []string{"-9223372036854775808", "9223372036854775807", "0"}, "$c::text"},
	{"n", "numeric(38,10)", []string{"-9999999999999999999999999999.9999999999", "9999999999999999999999999999.9999999999", "0.0000000001"}, "$c::text"},
	{"n0", "numeric(5,0)", []string{"-99999", "99999", "0"}, "$c::text"},
	{"r4", "real", []string{"-3.4e38", "1.5", "0.25"}, "pyfloat($c)"},
	{"f8", "double precision", []string{"-1.7976931348623157e308", "2.5", "-0.125"}, "pyfloat($c)"},
	{"money", "money", []string{"-92233720368547758.08", "92233720368547758.07", "12.34"}, "($c::numeric)::text"},
	{"tx", "text", []string{"''", "'héllo wörld ✓ 日本'", "'line\nbreak'"}, "$c"},
	{"vc", "varchar(10)", []string{"''", "'ÄÖÜäöüß€✓x'", "'a'"}, "$c"},
	{"ch", "char(3)", []string{"'a'", "'äöü'", "'   '"}, "rpad($c::text, 3)"}, // padded, as stored
	{"by", "bytea", []string{`'\x'`, `'\x00ff'`, `'\xdeadbeef'`}, "encode($c, 'hex')"},
	{"b", "boolean", []string{"false", "true", "true"}, "$c::text"},
	{"d", "date", []string{"'0001-01-01'", "'9999-12-31'", "'1970-01-01'"}, "to_char($c, 'YYYY-MM-DD')"},
	{"t0", "time(0)", []string{"'00:00:00'", "'23:59:59'", "'12:00:00'"}, micros},
	{"t3", "time(3)", []string{"'00:00:00.001'", "'23:59:59.999'", "'12:34:56.5'"}, micros},
	{"t6", "time(6)", []string{"'00:00:00.000001'", "'23:59:59.999999'", "'12:34:56.123456'"}, micros},
	{"ttz", "timetz", []string{"'00:00:00+14'", "'23:59:59.999999-12'", "'12:34:56+02'"}, "($c AT TIME ZONE 'UTC')::time::text || 'Z'"}, // in UTC
	{"ts0", "timestamp(0)", []string{"'0001-01-01 00:00:00'", "'9999-12-31 23:59:59'", "'1970-01-01 00:00:00'"}, `to_char($c, 'FMYYYY-MM-DD"T"HH24:MI:SS.US')`},
	{"ts3", "timestamp(3)", []string{"'1900-01-01 00:00:00.001'", "'2262-04-11 23:47:16.854'", "'2024-02-29 13:14:15.5'"}, `to_char($c, 'FMYYYY-MM-DD"T"HH24:MI:SS.US')`},
	{"ts6", "timestamp(6)", []string{"'1969-12-31 23:59:59.999999'", "'2038-01-19 03:14:08.000001'", "'2024-02-29 13:14:15.123456'"}, `to_char($c, 'FMYYYY-MM-DD"T"HH24:MI:SS.US')`},
	{"tstz", "timestamptz", []string{"'0001-01-01 00:00:00+00'", "'9999-12-31 23:59:59.999999+00'", "'2024-02-29 13:14:15.123456+05:30'"}, `to_char($c AT TIME ZONE 'UTC', 'FMYYYY-MM-DD"T"HH24:MI:SS.US"Z"')`},
	{"iv", "interval", []string{"'-1 day -2 hours'", "'1 year 2 months 3 days 04:05:06.789'", "'0'"}, "round((extract(epoch from $c) + extract(month from $c) * 37800) * 1000000)::bigint::text"},
	{"u", "uuid", []string{"'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"}, "$c::text"},
	{"j", "json", []string{`'{}'`, `'{"a": [1, 2, {"b": "ü"}]}'`, `'null'`}, "$c::text"},
	{"jb", "jsonb", []string{`'[]'`, `'{"a": [1, 2, {"b": "ü"}]}'`, `'"s"'`}, "$c::text"},
	{"x", "xml", []string{"'<a/>'", "'<a b=\"ü\">t</a>'", "'text'"}, "$c::text"},
	{"e", "mood", []string{"'sad'", "'happy'", "'ok'"}, "$c::text"},
	{"bt", "bit(4)", []string{"B'0000'", "B'1111'", "B'1010'"}, "bitshex($c::text)"},
	{"vb", "varbit(16)", []string{"B''", "B'1111111111111111'", "B'101'"}, "bitshex($c::text)"},
	{"ip", "inet", []string{"'0.0.0.0'", "'2001:db8::ff/64'", "'10.0.0.1'"}, "abbrev($c)"},
	{"cidr", "cidr", []string{"'0.0.0.0/0'", "'2001:db8::/32'", "'10.0.0.0/8'"}, "$c::text"},
	{"mac", "macaddr", []string{"'00:00:00:00:00:00'", "'ff:ff:ff:ff:ff:ff'", "'08:00:2b:01:02:03'"}, "$c::text"},
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
	id := newPostgresDB(t, pg, "pgtypes")
	var ddl, inserts strings.Builder
	ddl.WriteString("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');\nCREATE TABLE typed (id int PRIMARY KEY")
	for _, c := range pgTypes {
		fmt.Fprintf(&ddl, ", %s %s", c.name, c.typ)
	}
	ddl.WriteString(");\nCREATE TABLE arrays (id int PRIMARY KEY, tags int[], names text[]);\n")
	ddl.WriteString("CREATE TABLE unbounded (id int PRIMARY KEY, amount numeric);\n")
	ddl.WriteString(`CREATE FUNCTION pyfloat(x double precision) RETURNS text IMMUTABLE LANGUAGE sql
  AS $$ SELECT CASE WHEN x = trunc(x) AND abs(x) < 1e16 THEN trunc(x)::bigint::text || '.0' ELSE x::text END $$;
-- Debezium sends bits as java.util.BitSet.toByteArray: little-endian bytes,
-- trailing zero bytes dropped (so no bits set is empty).
CREATE FUNCTION bitshex(b text) RETURNS text IMMUTABLE LANGUAGE sql AS $$
  SELECT CASE WHEN v = 0 THEN '' WHEN v < 256 THEN lpad(to_hex(v), 2, '0')
    ELSE lpad(to_hex(v & 255), 2, '0') || lpad(to_hex(v >> 8), 2, '0') END
  FROM (SELECT CASE WHEN b = '' THEN 0 ELSE lpad(b, 32, '0')::bit(32)::int END AS v) s $$;` + "\n")
	pg.Exec(id, ddl.String())
	cfg := fulltier.PostgresConnector(pg, id, id, "public.typed,public.arrays,public.unbounded")
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
	inserts.WriteString("INSERT INTO unbounded VALUES (1, 1.5);\n")
	pg.Exec(id, inserts.String())

	checkTypeMatrix(t, brokers, id, []string{id + ".public.typed", id + ".public.arrays", id + ".public.unbounded"}, pgTypes,
		func(q string) string { return pg.Exec(id, q) },
		refusal{"arrays", `column \"tags\"`, "column.exclude.list"},
		// numeric without a precision: Debezium's VariableScaleDecimal.
		refusal{"unbounded", `column \"amount\"`, "decimal.handling.mode=string"})
}

// mariaTypes are the MariaDB types Debezium's connector maps, at their edges.
var mariaTypes = []typeCol{
	{"ti", "tinyint", []string{"-128", "127", "0"}, "$c"},
	{"tiu", "tinyint unsigned", []string{"0", "255", "1"}, "$c"},
	{"si", "smallint", []string{"-32768", "32767", "0"}, "$c"},
	{"siu", "smallint unsigned", []string{"0", "65535", "1"}, "$c"},
	{"mi", "mediumint", []string{"-8388608", "8388607", "0"}, "$c"},
	{"miu", "mediumint unsigned", []string{"0", "16777215", "1"}, "$c"},
	{"i4", "int", []string{"-2147483648", "2147483647", "0"}, "$c"},
	{"i4u", "int unsigned", []string{"0", "4294967295", "1"}, "$c"},
	{"i8", "bigint", []string{"-9223372036854775808", "9223372036854775807", "0"}, "$c"},
	{"i8u", "bigint unsigned", []string{"0", "18446744073709551615", "1"}, "$c"},
	{"dc", "decimal(38,10)", []string{"-9999999999999999999999999999.9999999999", "9999999999999999999999999999.9999999999", "0.0000000001"}, "$c"},
	{"dc0", "decimal(5,0)", []string{"-99999", "99999", "0"}, "$c"},
	{"f4", "float", []string{"-0.25", "1.5", "0"}, "IF($c = FLOOR($c), CONCAT(FLOOR($c), '.0'), $c)"},
	{"f8", "double", []string{"-123.456", "2.5", "0"}, "IF($c = FLOOR($c), CONCAT(FLOOR($c), '.0'), $c)"},
	{"b1", "bit(1)", []string{"0", "1", "1"}, "IF($c IS NULL, NULL, IF($c = 1, 'true', 'false'))"},
	{"b12", "bit(12)", []string{"b'0'", "b'111111111111'", "b'101'"}, "LOWER(CONCAT(LPAD(HEX(($c + 0) & 255), 2, '0'), LPAD(HEX(($c + 0) >> 8), 2, '0')))"}, // little-endian, (n+7)/8 bytes
	{"ch", "char(3)", []string{"''", "'äöü'", "'a'"}, "$c"},
	{"vc", "varchar(10)", []string{"''", "'ÄÖÜäöüß€✓x'", "'a'"}, "$c"},
	{"tx", "text", []string{"''", "'héllo wörld ✓ 日本'", "'line\nbreak'"}, "$c"},
	{"bl", "blob", []string{"''", "x'00ff'", "x'deadbeef'"}, "LOWER(HEX($c))"},
	{"bn", "binary(4)", []string{"x'00000000'", "x'ffffffff'", "x'dead0000'"}, "LOWER(HEX($c))"},
	{"vbn", "varbinary(8)", []string{"''", "x'00ff00ff00ff00ff'", "x'de'"}, "LOWER(HEX($c))"},
	{"d", "date", []string{"'1000-01-01'", "'9999-12-31'", "'1970-01-01'"}, "DATE_FORMAT($c, '%Y-%m-%d')"},
	{"t6", "time(6)", []string{"'-838:59:59'", "'838:59:59'", "'12:34:56.123456'"}, "ROUND(TIME_TO_SEC($c) * 1000000)"},
	{"dt0", "datetime", []string{"'1000-01-01 00:00:00'", "'9999-12-31 23:59:59'", "'1970-01-01 00:00:00'"}, "DATE_FORMAT($c, '%Y-%m-%dT%H:%i:%s.%f')"},
	{"dt3", "datetime(3)", []string{"'1900-01-01 00:00:00.001'", "'2262-04-11 23:47:16.854'", "'2024-02-29 13:14:15.5'"}, "DATE_FORMAT($c, '%Y-%m-%dT%H:%i:%s.%f')"},
	{"dt6", "datetime(6)", []string{"'1969-12-31 23:59:59.999999'", "'2038-01-19 03:14:08.000001'", "'2024-02-29 13:14:15.123456'"}, "DATE_FORMAT($c, '%Y-%m-%dT%H:%i:%s.%f')"},
	{"ts", "timestamp(6) NULL", []string{"'1970-01-01 00:00:01'", "'2038-01-19 03:14:07.999999'", "'2024-02-29 13:14:15.123456'"}, "CONCAT(DATE_FORMAT($c, '%Y-%m-%dT%H:%i:%s.%f'), 'Z')"},
	{"yr", "year", []string{"1901", "2155", "2024"}, "$c"},
	{"en", "enum('sad','ok','happy')", []string{"'sad'", "'happy'", "'ok'"}, "$c"},
	{"st", "set('a','b','ü')", []string{"''", "'a,b,ü'", "'b'"}, "$c"},
	{"js", "json", []string{"'{}'", `'{"a": [1, 2, {"b": "ü"}]}'`, "'null'"}, "$c"},
}

// TestMariaDBTypeMatrix is TestPostgresTypeMatrix for Debezium's MariaDB
// connector, compared with what the mariadb client prints; a spatial column
// is what it refuses.
func TestMariaDBTypeMatrix(t *testing.T) {
	my := fulltier.MariaDBServer(t)
	worker := fulltier.ConnectWorker(t)
	brokers := fulltier.KafkaBrokers(t)
	id, cfg := newMariaDBSource(t, my, "mytypes", "CHARACTER SET utf8mb4")
	// Both sides in UTC: a timestamp literal is read in the session's zone.
	exec := func(q string) string { return my.Exec(id, "SET NAMES utf8mb4; SET time_zone = '+00:00';\n"+q) }
	var ddl, inserts strings.Builder
	ddl.WriteString("CREATE TABLE typed (id int PRIMARY KEY")
	for _, c := range mariaTypes {
		fmt.Fprintf(&ddl, ", %s %s", c.name, c.typ)
	}
	ddl.WriteString(");\nCREATE TABLE shapes (id int PRIMARY KEY, g point);\n")
	exec(ddl.String())
	// The default (long) wraps values above 2^63-1 to negatives in the
	// connector, before any consumer sees them.
	cfg["bigint.unsigned.handling.mode"] = "precise"
	worker.Register(id, cfg)
	waitTopicsQuietOrEmpty(t)

	inserts.WriteString("INSERT INTO typed (id) VALUES (1);\n")
	for row := range 3 {
		cols, vals := []string{"id"}, []string{fmt.Sprint(row + 2)}
		for _, c := range mariaTypes {
			cols, vals = append(cols, c.name), append(vals, c.values[row])
		}
		fmt.Fprintf(&inserts, "INSERT INTO typed (%s) VALUES (%s);\n", strings.Join(cols, ", "), strings.Join(vals, ", "))
	}
	inserts.WriteString("INSERT INTO shapes VALUES (1, POINT(1, 2));\n")
	exec(inserts.String())

	checkTypeMatrix(t, brokers, id, []string{id + "." + id + ".typed", id + "." + id + ".shapes"}, mariaTypes, exec, refusal{"shapes", `column \"g\"`, "column.exclude.list"})
}

// waitTopicsQuietOrEmpty gives a connector that has nothing to snapshot a
// moment to start streaming.
func waitTopicsQuietOrEmpty(t *testing.T) { time.Sleep(3 * time.Second) }

// refusal is a table whose topic cdc2delta must refuse: its log line
// names the column and the fix.
type refusal struct{ table, column, fix string }

// checkTypeMatrix consumes the typed table's topic (topics[0]) and the
// refused tables' (the others, aligned with refused) with `cdc2delta run`,
// requires each refused table to be refused naming its column and fix and
// never created, while typed is applied; and every column of typed to print
// as the database prints it (all mismatches reported at once).
func checkTypeMatrix(t *testing.T, brokers []string, group string, topics []string, cols []typeCol, query func(string) string, refused ...refusal) {
	t.Helper()
	ends := waitTopicsQuiet(t, brokers, topics[:1])
	root := t.TempDir()
	cfgPath := writeRunConfig(t, sourceRun{brokers: brokers, group: group, topics: topics, root: root})
	run := (&runFixture{t: t, cfg: cfgPath}).start()
	lineOf := func(log, s string) string {
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, s) {
				return line
			}
		}
		return ""
	}
	ok := poll(90*time.Second, 100*time.Millisecond, func() bool {
		log := run.log.String()
		for _, r := range refused {
			if lineOf(log, r.column) == "" {
				return false
			}
		}
		return tableReached(t, filepath.Join(root, "typed"), topics[0], ends[topics[0]])
	})
	log := run.stop()
	require.True(t, ok, "typed not applied, or a table not refused by its column; log:\n%s", log)
	for _, r := range refused {
		line := lineOf(log, r.column)
		t.Logf("refusal of %s: %s", r.table, line[strings.Index(line, "err.err="):])
		require.Contains(t, line, r.fix)
		require.Contains(t, line, "."+r.table)
		_, err := os.Stat(filepath.Join(root, r.table, "_delta_log", "00000000000000000000.json"))
		require.True(t, os.IsNotExist(err), "the refused table %s was created", r.table)
	}

	path := filepath.Join(root, "typed")
	// The Delta types, as docs/type-mapping.md lists them.
	st, err := localstore.New(localstore.Options{Dir: path})
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), st)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	var types []string
	for _, f := range snap.Schema().Fields {
		if !strings.HasPrefix(f.Name, "_") {
			types = append(types, fmt.Sprintf("%s:%v", f.Name, f.Type))
		}
	}
	t.Logf("delta types: %s", strings.Join(types, " "))
	reads := fulltier.Read(t,
		fulltier.Request{Engine: fulltier.DeltaRS, Path: path, ReadOptions: fulltier.ReadOptions{Filter: "true"}},
		fulltier.Request{Engine: fulltier.DuckDB, Path: path})
	var bad []string
	for _, c := range cols {
		expr := strings.ReplaceAll(c.print, "$c", c.name)
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
