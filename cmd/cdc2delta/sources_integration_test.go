//go:build integration

package main

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestPostgresConnectorEndToEnd runs Debezium's real PostgreSQL connector on a
// real Kafka Connect worker (JsonConverter) over a scripted workload, consumes
// its topics with `cdc2delta run`, and requires the Delta tables, read by
// delta-rs, DuckDB and Spark, to equal the database's own tables as psql
// prints them. A second connector on its own slot writes the same changes through the
// full tier's Avro converter (AvroData in the Confluent wire format, schemas
// in an in-process registry); `cdc2delta run` with decoding.converter: avro
// must give the same tables: equal to psql, and to the JSON path's tables
// column for column (schema, comments and values).
func TestPostgresConnectorEndToEnd(t *testing.T) {
	pg := fulltier.PostgresServer(t)
	worker := fulltier.ConnectWorker(t)
	brokers := fulltier.KafkaBrokers(t)
	id := newPostgresDB(t, pg, "pge2e")
	pg.Exec(id, `
CREATE TABLE items (id int PRIMARY KEY, name text, amount numeric(12,3), at timestamptz, d date,
  doc jsonb, raw bytea, flag boolean, big text, r real, dp double precision);
CREATE TABLE other (k text PRIMARY KEY, v int);
INSERT INTO items SELECT i, 'item ' || i, i * 1.5, '2024-02-29 13:14:15.123456+01', '2024-02-29',
  '{"i": 1}', '\xdeadbeef', i % 2 = 0,
  CASE WHEN i = 1 THEN (SELECT string_agg(md5(j::text), '') FROM generate_series(1, 400) j) END,
  i * 0.25, i * -1.5
  FROM generate_series(1, 20) i;
INSERT INTO other VALUES ('a', 1), ('b', 2);
-- floats printed as the readers print them ("2.0", not psql's "2")
CREATE FUNCTION pyfloat(x double precision) RETURNS text IMMUTABLE LANGUAGE sql
  AS $$ SELECT CASE WHEN x = trunc(x) THEN trunc(x)::bigint::text || '.0' ELSE x::text END $$;`)

	cfg := fulltier.PostgresConnector(pg, id, id, "public.items,public.other")
	cfg["skipped.operations"] = "none" // truncates too
	worker.Register(id, cfg)
	reg, regURL := startRegistry(t)
	avroID := id + "avro"
	acfg := fulltier.WithAvroConverter(fulltier.PostgresConnector(pg, id, avroID, "public.items,public.other"), regURL)
	acfg["skipped.operations"] = "none"
	worker.Register(avroID, acfg)
	// Changes made before the snapshot starts would be folded into it and
	// never streamed: wait for the snapshots' 20 rows first.
	waitRecords(t, brokers, id+".public.items", 20)
	waitRecords(t, brokers, avroID+".public.items", 20)

	pg.Exec(id, `
INSERT INTO items (id, name, amount) VALUES (100, 'new', 1.000);
UPDATE items SET name = 'renamed' WHERE id = 1;          -- big stays TOASTed: not sent
UPDATE items SET amount = amount * 2 WHERE id BETWEEN 2 AND 5;
DELETE FROM items WHERE id IN (6, 7);
UPDATE items SET id = 200 WHERE id = 8;                  -- a primary-key change
BEGIN; UPDATE other SET v = 10 WHERE k = 'a'; INSERT INTO items (id, name) VALUES (101, 'tx'); COMMIT;
ALTER TABLE items ADD COLUMN extra text;
INSERT INTO items (id, name, extra) VALUES (102, 'with extra', 'x');`)
	// A restart resumes from the last committed offset and may send again
	// what it sent before; the position guard must make that a no-op.
	worker.Restart(id)
	worker.Restart(avroID)
	pg.Exec(id, `
UPDATE items SET extra = 'later', name = 'after restart' WHERE id = 1;
DELETE FROM items WHERE id = 100;
TRUNCATE other;
INSERT INTO other VALUES ('c', 3);
ALTER TABLE items DROP COLUMN d;                         -- kept in the table, NULL from here
UPDATE items SET name = 'after drop' WHERE id = 3;`)

	tables := []dbTable{
		{"items", `SELECT id, coalesce(name, 'NULL'), coalesce(amount::text, 'NULL'),
  coalesce(to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'NULL'),
  coalesce(doc::text, 'NULL'), coalesce(encode(raw, 'hex'), 'NULL'), coalesce(flag::text, 'NULL'),
  coalesce(md5(big), 'NULL'), coalesce(pyfloat(r), 'NULL'), coalesce(pyfloat(dp), 'NULL'), coalesce(extra, 'NULL') FROM items ORDER BY id`,
			[]string{"id", "name", "amount", "at", "doc", "raw", "flag", "big", "r", "dp", "extra"}},
		{"other", `SELECT k, coalesce(v::text, 'NULL') FROM other ORDER BY k`, []string{"k", "v"}},
	}
	query := func(q string) string { return pg.Exec(id, q) }
	compareSource(t, brokers, tables, query,
		connectorTopics{group: id, topics: []string{id + ".public.items", id + ".public.other"}, spark: true},
		connectorTopics{group: avroID, registry: regURL, topics: []string{avroID + ".public.items", avroID + ".public.other"}})
	requireConfluentWire(t, brokers, reg, avroID+".public.items")
}

// TestMariaDBConnectorEndToEnd is TestPostgresConnectorEndToEnd for
// Debezium's MariaDB connector, compared with what the mariadb client prints,
// the Avro converter's path included.
func TestMariaDBConnectorEndToEnd(t *testing.T) {
	my := fulltier.MariaDBServer(t)
	worker := fulltier.ConnectWorker(t)
	brokers := fulltier.KafkaBrokers(t)
	id, cfg := newMariaDBSource(t, my, "mye2e", "")
	my.Exec(id, `
CREATE TABLE items (id int PRIMARY KEY, name varchar(40), amount decimal(12,3), at datetime(6), d date,
  doc json, raw varbinary(16), flag boolean, big longtext);
CREATE TABLE other (k varchar(10) PRIMARY KEY, v int);
INSERT INTO items SELECT seq, concat('item ', seq), seq * 1.5, '2024-02-29 13:14:15.123456', '2024-02-29',
  '{"i": 1}', x'deadbeef', seq % 2 = 0, IF(seq = 1, repeat(md5('x'), 400), NULL) FROM seq_1_to_20;
INSERT INTO other VALUES ('a', 1), ('b', 2);`)

	cfg["skipped.operations"] = "none"
	worker.Register(id, cfg)
	reg, regURL := startRegistry(t)
	avroID := id + "avro"
	acfg := fulltier.WithAvroConverter(mariaDBConnector(t, my, id, avroID), regURL)
	acfg["skipped.operations"] = "none"
	worker.Register(avroID, acfg)
	waitRecords(t, brokers, id+"."+id+".items", 20)
	waitRecords(t, brokers, avroID+"."+id+".items", 20)

	my.Exec(id, `
INSERT INTO items (id, name, amount) VALUES (100, 'new', 1.000);
UPDATE items SET name = 'renamed' WHERE id = 1;
UPDATE items SET amount = amount * 2 WHERE id BETWEEN 2 AND 5;
DELETE FROM items WHERE id IN (6, 7);
UPDATE items SET id = 200 WHERE id = 8;
BEGIN; UPDATE other SET v = 10 WHERE k = 'a'; INSERT INTO items (id, name) VALUES (101, 'tx'); COMMIT;
ALTER TABLE items ADD COLUMN extra varchar(10);
INSERT INTO items (id, name, extra) VALUES (102, 'with extra', 'x');`)
	worker.Restart(id)
	worker.Restart(avroID)
	my.Exec(id, `
UPDATE items SET extra = 'later', name = 'after restart' WHERE id = 1;
DELETE FROM items WHERE id = 100;
TRUNCATE other;
INSERT INTO other VALUES ('c', 3);
ALTER TABLE items DROP COLUMN d;
UPDATE items SET name = 'after drop' WHERE id = 3;`)

	tables := []dbTable{
		{"items", `SELECT id, IFNULL(name, 'NULL'), IFNULL(amount, 'NULL'),
  IFNULL(DATE_FORMAT(at, '%Y-%m-%dT%H:%i:%s.%f'), 'NULL'), IFNULL(doc, 'NULL'),
  IFNULL(LOWER(HEX(raw)), 'NULL'), IFNULL(flag, 'NULL'), IFNULL(md5(big), 'NULL'), IFNULL(extra, 'NULL')
  FROM items ORDER BY id`, []string{"id", "name", "amount", "at", "doc", "raw", "flag", "big", "extra"}},
		{"other", `SELECT k, IFNULL(v, 'NULL') FROM other ORDER BY k`, []string{"k", "v"}},
	}
	query := func(q string) string { return my.Exec(id, q) }
	compareSource(t, brokers, tables, query,
		connectorTopics{group: id, topics: []string{id + "." + id + ".items", id + "." + id + ".other"}},
		connectorTopics{group: avroID, registry: regURL, topics: []string{avroID + "." + id + ".items", avroID + "." + id + ".other"}})
	requireConfluentWire(t, brokers, reg, avroID+"."+id+".items")
}

// dbTable is one table of a source database and the query that prints it
// as deltaText prints the Delta table's cols.
type dbTable struct {
	table, query string
	cols         []string
}

// connectorTopics are the topics one connector wrote (one per table, in
// the tables' order), consumed by `cdc2delta run` with group; registry is
// the schema registry's URL when the connector wrote Avro, "" for the
// JsonConverter.
type connectorTopics struct {
	group, registry string
	topics          []string
	// spark also reads the tables with Spark (delta-spark).
	spark bool
}

// compareSource consumes each connector's topics with `cdc2delta run` once
// the connectors have sent everything, and requires every Delta table, read
// by delta-rs and DuckDB (and Spark where asked), to print as its source
// query. With more than one connector over the same changes, every
// connector's tables must also be the first one's (sameTables).
func compareSource(t *testing.T, brokers []string, tables []dbTable, query func(string) string, runs ...connectorTopics) {
	t.Helper()
	var all []string
	for _, r := range runs {
		all = append(all, r.topics...)
	}
	waitTopicsQuiet(t, brokers, all)
	// A worker that dies before it commits its offsets sends again what it
	// sent since: append the first table's first records once more, after
	// everything, so that only the source's order keeps them from
	// overwriting newer rows.
	quiet := waitTopicsQuiet(t, brokers, all)
	for _, r := range runs {
		redeliver(t, brokers, r.topics[0], min(25, int(quiet[r.topics[0]])+1))
	}
	ends := waitTopicsQuiet(t, brokers, all)
	roots := make([]string, len(runs))
	for i, r := range runs {
		roots[i] = t.TempDir()
		cfgPath := writeRunConfig(t, sourceRun{brokers: brokers, group: r.group, topics: r.topics, root: roots[i], registry: r.registry})
		runUntil(t, cfgPath, func() bool {
			for j, topic := range r.topics {
				if !tableReached(t, filepath.Join(roots[i], tables[j].table), topic, ends[topic]) {
					return false
				}
			}
			return true
		})
	}
	// One read of every table: Spark, when asked for, starts once.
	type readOf struct{ run, table int }
	var reqs []fulltier.Request
	var who []readOf
	for ti, tc := range tables {
		for ri, root := range roots {
			path := filepath.Join(root, tc.table)
			reqs = append(reqs,
				fulltier.Request{Engine: fulltier.DeltaRS, Path: path, ReadOptions: fulltier.ReadOptions{Filter: "true"}},
				fulltier.Request{Engine: fulltier.DuckDB, Path: path})
			who = append(who, readOf{ri, ti}, readOf{ri, ti})
			if runs[ri].spark {
				reqs = append(reqs, fulltier.Request{Engine: fulltier.Spark, Path: path, ReadOptions: fulltier.ReadOptions{RowsOnly: true}})
				who = append(who, readOf{ri, ti})
			}
		}
	}
	reads := fulltier.Read(t, reqs...)
	for ti, tc := range tables {
		t.Run(tc.table, func(t *testing.T) {
			want := strings.TrimSpace(query(tc.query))
			require.NotEmpty(t, want)
			var first fulltier.Table // the first connector's, read by delta-rs
			for i, got := range reads {
				if who[i].table != ti {
					continue
				}
				group := runs[who[i].run].group
				require.Empty(t, got.Err, "%s reading %s of %s", got.Engine, tc.table, group)
				require.Equal(t, want, deltaText(got, tc.cols), "%s reading %s of %s", got.Engine, tc.table, group)
				if got.Engine != fulltier.DeltaRS {
					continue
				}
				if who[i].run == 0 {
					first = got
				} else {
					sameTables(t, first, got)
				}
			}
		})
	}
}

// waitTopicsQuiet waits until the topics exist and their end offsets have
// not moved for a few seconds (the connector has sent the workload), and
// returns each one's last offset (single-partition topics, as Connect
// creates them).
func waitTopicsQuiet(t *testing.T, brokers []string, topics []string) map[string]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var last map[string]int64
	stable := 0
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		offs, err := adm.ListEndOffsets(ctx, topics...)
		cancel()
		cur := map[string]int64{}
		if err == nil {
			offs.Each(func(o kadm.ListedOffset) {
				if o.Err == nil && o.Partition == 0 {
					cur[o.Topic] = o.Offset - 1
				}
			})
		}
		if len(cur) == len(topics) && fmt.Sprint(cur) == fmt.Sprint(last) {
			if stable++; stable == 8 {
				return cur
			}
		} else {
			stable = 0
		}
		last = cur
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("topics %v did not settle within 90s: last end offsets %v", topics, last)
	return nil
}

// waitRecords waits until partition 0 of topic holds at least n records.
func waitRecords(t *testing.T, brokers []string, topic string, n int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var have int64
	ok := poll(90*time.Second, 250*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		offs, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return false
		}
		if o, found := offs.Lookup(topic, 0); found && o.Err == nil {
			have = o.Offset
		}
		return have >= n
	})
	require.True(t, ok, "%s: %d of %d records within 90s", topic, have, n)
}

// redeliver appends copies of the first n records of partition 0 of topic
// to it.
func redeliver(t *testing.T, brokers []string, topic string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		fetches := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "reading %s: %d of %d records", topic, len(recs), n)
		fetches.EachRecord(func(r *kgo.Record) {
			if len(recs) < n {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Key: r.Key, Value: r.Value})
			}
		})
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
}

// runUntil runs `cdc2delta run` with the config until done reports true,
// then stops it and requires exit 0.
func runUntil(t *testing.T, cfg string, done func() bool) {
	t.Helper()
	f := &runFixture{t: t, cfg: cfg}
	r := f.start()
	defer r.cancel()
	ended, code := false, 0
	ok := poll(90*time.Second, 100*time.Millisecond, func() bool {
		select {
		case code = <-r.done:
			ended = true
			return true
		default:
		}
		return done()
	})
	if ended {
		t.Fatalf("run ended early with %d: %s", code, r.log.String())
	}
	if !ok {
		t.Fatalf("tables not caught up within 90s; log:\n%s", r.log.String())
	}
	r.stop()
}

// tableReached reports whether the table at dir has applied topic's
// partition 0 through offset last.
func tableReached(t *testing.T, dir, topic string, last int64) bool {
	st, err := localstore.New(localstore.Options{Dir: dir})
	if err != nil {
		return false
	}
	tbl, err := deltalog.Open(t.Context(), st)
	if err != nil {
		return false
	}
	snap, err := tbl.Snapshot(t.Context())
	if err != nil {
		return false
	}
	v, ok := snap.TxnVersion(cdctable.TopicPartition{Topic: topic, Partition: 0}.AppID())
	return ok && v >= last
}

// deltaText renders an engine's rows of cols as psql's unaligned output
// renders the comparison query: tab-separated, sorted by the first column
// (numerically when it is a number), NULL as "NULL", big as its md5.
func deltaText(tb fulltier.Table, cols []string) string {
	rows := make([][]string, 0, len(tb.Rows))
	for _, r := range tb.Rows {
		line := make([]string, len(cols))
		for i, c := range cols {
			line[i] = cellText(c, r[c])
		}
		rows = append(rows, line)
	}
	slices.SortFunc(rows, func(a, b []string) int {
		if len(a[0]) != len(b[0]) && isDigits(a[0]) && isDigits(b[0]) {
			return len(a[0]) - len(b[0])
		}
		return strings.Compare(a[0], b[0])
	})
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = strings.Join(r, "\t")
	}
	return strings.Join(lines, "\n")
}

func cellText(col string, v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case json.Number:
		return v.String()
	case bool:
		return fmt.Sprint(v)
	case string:
		if col == "big" {
			return md5Hex(v)
		}
		if col == "raw" {
			return strings.ToLower(v)
		}
		return v
	}
	return fmt.Sprintf("%v", v)
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func md5Hex(s string) string { return fmt.Sprintf("%x", md5.Sum([]byte(s))) }
