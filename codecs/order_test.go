package codecs

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func mustPg(t *testing.T, lsn int64, seq string, snapshot bool) Position {
	t.Helper()
	p, err := PostgresPosition(lsn, seq, snapshot)
	require.NoError(t, err)
	return p
}

func mustMySQL(t *testing.T, file string, pos, row int64, snapshot bool) Position {
	t.Helper()
	p, err := MySQLPosition(file, pos, row, snapshot)
	require.NoError(t, err)
	return p
}

func requireAscending(t *testing.T, ordered []Position) {
	t.Helper()
	for i := 1; i < len(ordered); i++ {
		require.Equal(t, -1, ordered[i-1].Compare(ordered[i]), "%s before %s", ordered[i-1], ordered[i])
		require.Equal(t, 1, ordered[i].Compare(ordered[i-1]))
		require.Less(t, ordered[i-1].Hex(), ordered[i].Hex())
	}
}

func TestPostgresPositionOrder(t *testing.T) {
	// Debezium 3.6.1's PostgreSQL connector (pgoutput) on one table, in
	// the order it wrote them (codecs/testdata/debezium/postgres): the
	// snapshot, the first transaction before any commit was seen, then
	// transactions whose last committed LSN is the previous one's end.
	ordered := []Position{
		mustPg(t, 26534512, `[null,"26534512"]`, true),               // snapshot read
		mustPg(t, 26534552, `[null,"26534552"]`, false),              // tx 742
		mustPg(t, 26534744, `["26534744","26534744"]`, false),        // tx 743
		mustPg(t, 26535528, `["26535304","26535528"]`, false),        // tx 744, second change
		mustPg(t, 26535672, `["26535672","26535672"]`, false),        // tx 745 (delete+create of a PK change share it)
		mustPg(t, 26535896, `["26535896","26535896"]`, false),        // tx 746
		mustPg(t, 1<<40, `["1099511627000","1099511627776"]`, false), // beyond 32 bits
	}
	requireAscending(t, ordered)

	// The trap: a transaction that wrote its change at a lower LSN but
	// committed later orders after the one that committed first.
	first := mustPg(t, 5000, `["4000","5000"]`, false)
	later := mustPg(t, 4500, `["5100","4500"]`, false)
	require.Equal(t, -1, first.Compare(later))
	// And after a snapshot taken at a higher LSN than its changes.
	require.Equal(t, -1, mustPg(t, 9000, `[null,"9000"]`, true).Compare(mustPg(t, 8000, `[null,"8000"]`, false)))
}

func TestMySQLPositionOrder(t *testing.T) {
	ordered := []Position{
		mustMySQL(t, "binlog.000001", 1244, 0, true),  // snapshot reads share one position
		mustMySQL(t, "binlog.000001", 1244, 0, false), // a change at that position follows them
		mustMySQL(t, "binlog.000001", 1404, 0, false),
		mustMySQL(t, "binlog.000001", 1404, 1, false), // next row of the same event
		mustMySQL(t, "binlog.000001", 1644, 0, false),
		mustMySQL(t, "binlog.000002", 4, 0, false), // rotation: the file number dominates
		mustMySQL(t, "mysql-bin.1000000", 4, 0, false),
	}
	requireAscending(t, ordered)
}

func TestSourcePositionsRefuse(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"pg lsn absent", func() error { _, err := PostgresPosition(0, `[null,"1"]`, false); return err }},
		{"pg sequence not an array", func() error { _, err := PostgresPosition(5, `"5"`, false); return err }},
		{"pg sequence number unquoted", func() error { _, err := PostgresPosition(5, `[4,"5"]`, false); return err }},
		{"pg sequence truncated", func() error { _, err := PostgresPosition(5, `["4"`, false); return err }},
		{"pg sequence empty", func() error { _, err := PostgresPosition(5, ``, false); return err }},
		{"mysql file without number", func() error { _, err := MySQLPosition("binlog", 4, 0, false); return err }},
		{"mysql file ends with dot", func() error { _, err := MySQLPosition("binlog.", 4, 0, false); return err }},
		{"mysql negative row", func() error { _, err := MySQLPosition("binlog.000001", 4, -1, false); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) { require.ErrorIs(t, tc.err(), ErrBadEnvelope) })
	}
}

func TestSourcePositionText(t *testing.T) {
	tests := []struct {
		pos                      Position
		source                   Source
		text, commitText, change string
	}{
		{mustPg(t, 26534512, `[null,"26534512"]`, true), SourcePostgres, "postgres:@0/194E270", "", "0/194E270"},
		{mustPg(t, 26534552, `[null,"26534552"]`, false), SourcePostgres, "postgres:0/1@0/194E298", "0/1", "0/194E298"},
		{mustPg(t, 1<<40|5, `["1099511627776","1099511627781"]`, false), SourcePostgres, "postgres:100/0@100/5", "100/0", "100/5"},
		{mustMySQL(t, "binlog.000042", 1404, 2, false), SourceMySQL, "mysql:42:1404:3", "42", "1404"},
		{mustMySQL(t, "binlog.000042", 1244, 0, true), SourceMySQL, "mysql:42:1244:0", "42", "1244"},
		{Position{Commit: mustLSN(t, "0000002b:00000e10:0005"), Change: mustLSN(t, "0000002b:00000e10:0003"), Serial: 1},
			SourceSQLServer, "0000002b:00000e10:0005/0000002b:00000e10:0003/1", "0000002b:00000e10:0005", "0000002b:00000e10:0003"},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			require.Equal(t, tc.source, tc.pos.Source())
			require.Equal(t, tc.text, tc.pos.String())
			require.Equal(t, tc.commitText, tc.pos.CommitText())
			require.Equal(t, tc.change, tc.pos.ChangeText())
			back, err := ParsePosition(tc.text)
			require.NoError(t, err)
			require.Equal(t, tc.pos, back)
			// The stored forms keep the family.
			fromHex, err := PositionFromHex(tc.pos.Hex())
			require.NoError(t, err)
			require.Equal(t, tc.source, fromHex.Source())
		})
	}
}

// sourceEnvelope is envelopeSchema with the source record replaced.
func sourceEnvelope(t *testing.T, cols []tcol, source map[string]any) string {
	t.Helper()
	var env map[string]any
	require.NoError(t, json.Unmarshal([]byte(envelopeSchema(layoutV3, cols)), &env))
	for _, f := range env["fields"].([]any) {
		if fm := f.(map[string]any); fm["name"] == "source" {
			fm["type"] = source
		}
	}
	b, err := json.Marshal(env)
	require.NoError(t, err)
	return string(b)
}

func pgSourceSchema(withSequence bool) map[string]any {
	fields := []any{
		map[string]any{"name": "version", "type": "string"},
		map[string]any{"name": "connector", "type": "string"},
		map[string]any{"name": "name", "type": "string"},
		map[string]any{"name": "ts_ms", "type": "long"},
		map[string]any{"name": "snapshot", "type": []any{"string", "null"}, "default": "false"},
		map[string]any{"name": "db", "type": "string"},
	}
	if withSequence {
		fields = append(fields, optString("sequence"))
	}
	fields = append(fields, optLong("ts_us"), optLong("ts_ns"),
		map[string]any{"name": "schema", "type": "string"},
		map[string]any{"name": "table", "type": "string"},
		optLong("txId"), optLong("lsn"), optLong("xmin"))
	return map[string]any{"type": "record", "name": "Source", "namespace": "io.debezium.connector.postgresql",
		"fields": fields, "connect.name": "io.debezium.connector.postgresql.Source"}
}

func mysqlSourceSchema() map[string]any {
	return map[string]any{"type": "record", "name": "Source", "namespace": "io.debezium.connector.mariadb",
		"connect.name": "io.debezium.connector.mariadb.Source", "fields": []any{
			map[string]any{"name": "version", "type": "string"},
			map[string]any{"name": "connector", "type": "string"},
			map[string]any{"name": "name", "type": "string"},
			map[string]any{"name": "ts_ms", "type": "long"},
			map[string]any{"name": "snapshot", "type": []any{"string", "null"}, "default": "false"},
			map[string]any{"name": "db", "type": "string"},
			optString("sequence"), optLong("ts_us"), optLong("ts_ns"),
			optString("table"),
			map[string]any{"name": "server_id", "type": "long"},
			optString("gtid"),
			map[string]any{"name": "file", "type": "string"},
			map[string]any{"name": "pos", "type": "long"},
			map[string]any{"name": "row", "type": "int"},
			optLong("thread"), optString("query"),
		}}
}

func TestDecodeSourceOrderKeys(t *testing.T) {
	cols := []tcol{{name: "id", typ: "int"}}
	key := map[string]any{"id": int32(1)}
	row := map[string]any{"id": int32(1)}
	base := map[string]any{"version": "3.6.1.Final", "name": "srv", "ts_ms": int64(1796585736664),
		"ts_us": nil, "ts_ns": nil, "sequence": nil}
	with := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name      string
		source    map[string]any
		native    map[string]any
		wantPos   Position
		wantTable TableID
	}{
		{name: "postgres", source: pgSourceSchema(true), native: with(map[string]any{
			"connector": "postgresql", "snapshot": union("string", "false"), "db": "golden", "schema": "public", "table": "typed",
			"sequence": union("string", `["26535304","26535528"]`), "txId": union("long", int64(744)),
			"lsn": union("long", int64(26535528)), "xmin": nil}),
			wantPos: mustPg(t, 26535528, `["26535304","26535528"]`, false), wantTable: TableID{"golden", "public", "typed"}},
		{name: "postgres snapshot", source: pgSourceSchema(true), native: with(map[string]any{
			"connector": "postgresql", "snapshot": union("string", "last"), "db": "golden", "schema": "public", "table": "typed",
			"sequence": union("string", `[null,"26534512"]`), "txId": union("long", int64(741)),
			"lsn": union("long", int64(26534512)), "xmin": nil}),
			wantPos: mustPg(t, 26534512, `[null,"26534512"]`, true), wantTable: TableID{"golden", "public", "typed"}},
		{name: "mariadb", source: mysqlSourceSchema(), native: with(map[string]any{
			"connector": "mariadb", "snapshot": union("string", "false"), "db": "inv", "table": union("string", "t"),
			"server_id": int64(1), "gtid": union("string", "0-1-6"), "file": "binlog.000001", "pos": int64(1404),
			"row": int32(2), "thread": nil, "query": nil}),
			wantPos: mustMySQL(t, "binlog.000001", 1404, 2, false), wantTable: TableID{Database: "inv", Table: "t"}},
	}
	for _, tc := range tests {
		for _, whole := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/whole=%v", tc.name, whole), func(t *testing.T) {
				src := newMapSource()
				env := sourceEnvelope(t, cols, tc.source)
				src.add(1, keySchema(cols))
				src.add(2, env)
				d, err := NewDecoder(src, Options{})
				require.NoError(t, err)
				d.wholeEnvelope = whole
				m := envelope(layoutV3, "u", row, row, srcBlock{}, "744:26535304")
				m["source"] = tc.native
				ch, err := d.Decode(t.Context(), encode(t, 1, keySchema(cols), key), encode(t, 2, env, m))
				require.NoError(t, err)
				require.Equal(t, tc.wantPos, ch.Pos, "got %s", ch.Pos)
				require.Equal(t, tc.wantTable, ch.Table)
				// A PostgreSQL transaction is named by its txId, whose key
				// its END gives (TxCommit); MySQL's blocks are not read.
				if tc.wantPos.Source() == SourcePostgres {
					require.Equal(t, "postgres:744", ch.TxID)
					_, known, err := TxCommit(ch.TxID)
					require.NoError(t, err)
					require.False(t, known)
				} else {
					require.Empty(t, ch.TxID)
				}
			})
		}
	}
}

func TestDecodeRefusesPostgresWithoutSequence(t *testing.T) {
	cols := []tcol{{name: "id", typ: "int"}}
	src := newMapSource()
	env := sourceEnvelope(t, cols, pgSourceSchema(false))
	src.add(1, keySchema(cols))
	src.add(2, env)
	d, err := NewDecoder(src, Options{})
	require.NoError(t, err)
	m := envelope(layoutV3, "c", nil, map[string]any{"id": int32(1)}, srcBlock{}, "")
	m["source"] = map[string]any{"version": "1.3.0.Final", "connector": "postgresql", "name": "srv", "ts_ms": int64(1),
		"snapshot": nil, "db": "d", "ts_us": nil, "ts_ns": nil, "schema": "public", "table": "t",
		"txId": nil, "lsn": union("long", int64(100)), "xmin": nil}
	_, err = d.Decode(t.Context(), encode(t, 1, keySchema(cols), map[string]any{"id": int32(1)}), encode(t, 2, env, m))
	require.Error(t, err)
	require.Contains(t, err.Error(), "lsn alone does not order transactions")
}
