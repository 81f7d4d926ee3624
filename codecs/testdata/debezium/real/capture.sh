#!/usr/bin/env bash
# capture.sh writes the golden files of this directory: what Debezium's own
# PostgreSQL and MariaDB connectors, run by a real Kafka Connect worker with
# the JsonConverter (schemas.enable=true), wrote for a scripted workload.
# codecs/real_test.go decodes them. Run it against the full tier's servers:
#
#   cd <repo>; d=/tmp/capture
#   b=$(scripts/setup/kafka.sh start $d/k); pg=$(scripts/setup/postgres.sh start $d/pg)
#   my=$(scripts/setup/mariadb.sh start $d/my); url=$(scripts/setup/connect.sh start $d/c "$b")
#   codecs/testdata/debezium/real/capture.sh "$b" "$pg" "$my" "$url"
#
# Each output line is one Kafka record: {"topic","partition","offset","key","value"}
# with key and value the converter's exact bytes as JSON strings (value null
# for a tombstone).
set -euo pipefail
brokers=$1 pg=$2 my=$3 url=$4
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
export PGHOST=${pg%:*} PGPORT=${pg#*:} PGUSER=postgres
maria() { mariadb --no-defaults -h "${my%:*}" -P "${my#*:}" -ucdc -pcdc-secret "$@"; }

register() { # NAME JSON
	curl -fsS -XPUT -H 'Content-Type: application/json' "$url/connectors/$1/config" -d "$2" >/dev/null
	for _ in $(seq 1 240); do
		curl -fsS "$url/connectors/$1/status" | grep -q '"tasks":\[{"id":0,"state":"RUNNING"' && return 0
		sleep 0.25
	done
	echo "connector $1 did not start" >&2
	exit 1
}

# Fresh topics and connector names: a standalone worker keeps offsets by name.
run=$(date +%s)
for t in golden.public.typed golden.public.other golden.public.floats goldenmaria.golden.typed goldenmaria.golden.other goldenmaria.golden.floats; do
	"$root/scripts/setup/kafka-tool.sh" topics --bootstrap-server "$brokers" --delete --if-exists --topic "$t" 2>/dev/null
done

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c 'DROP DATABASE IF EXISTS golden' -c 'CREATE DATABASE golden'
psql -X -q -v ON_ERROR_STOP=1 -d golden <<'SQL'
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE typed (
  id int PRIMARY KEY, n numeric(12,3), i2 smallint, i8 bigint, f8 double precision, b boolean,
  d date, t time(3), tz timetz, ts timestamp(6), tstz timestamptz, iv interval,
  j json, jb jsonb, u uuid, e mood, by bytea, bt bit(4), vb varbit(8), money money,
  c char(3), vc varchar(10), tx text, inet inet, big text);
CREATE TABLE other (k text PRIMARY KEY, v int);
CREATE TABLE floats (id int PRIMARY KEY, f4 real);
INSERT INTO floats VALUES (1, 1.25);
INSERT INTO typed VALUES (1, 123456789.125, 7, 9000000000, 2.5, true, '2024-02-29', '13:14:15.123',
  '13:14:15+02', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15.123456+01', '1 day 2 hours',
  '{"a":1}', '{"b":[1,2]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'happy', '\xdeadbeef', B'1010', B'101',
  12.34, 'ab', 'vc', 'text', '10.0.0.1',
  (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 400) i));
SQL
register golden-pg-$run '{"connector.class":"io.debezium.connector.postgresql.PostgresConnector","database.hostname":"'"$PGHOST"'","database.port":"'"$PGPORT"'","database.user":"postgres","database.password":"unused","database.dbname":"golden","topic.prefix":"golden","plugin.name":"pgoutput","slot.name":"golden","publication.name":"golden","publication.autocreate.mode":"filtered","table.include.list":"public.typed,public.other,public.floats","skipped.operations":"none"}'
psql -X -q -v ON_ERROR_STOP=1 -d golden <<'SQL'
INSERT INTO typed (id, n, tx, big) VALUES (2, 1.000, 'two', 'x');
UPDATE typed SET tx = 'one-updated' WHERE id = 1;
BEGIN; INSERT INTO other VALUES ('a', 1); UPDATE typed SET n = 2.5 WHERE id = 2; COMMIT;
UPDATE typed SET id = 3 WHERE id = 2;
DELETE FROM typed WHERE id = 3;
ALTER TABLE other ADD COLUMN w text; INSERT INTO other VALUES ('b', 2, 'added');
ALTER TABLE other DROP COLUMN v; INSERT INTO other VALUES ('c', 'dropped');
TRUNCATE other;
SQL

maria -e 'DROP DATABASE IF EXISTS golden; CREATE DATABASE golden'
maria golden <<'SQL'
CREATE TABLE typed (
  id int PRIMARY KEY, n decimal(12,3), ti tinyint, si smallint, bi bigint, d double, b bit(1),
  bits bit(5), dt date, tm time(3), dt6 datetime(6), ts timestamp(3) NULL, y year, j json,
  e enum('sad','ok','happy'), s set('a','b','c'), ch char(3), vc varchar(10), tx text, bl blob, vb varbinary(8));
CREATE TABLE other (k varchar(10) PRIMARY KEY, v int);
CREATE TABLE floats (id int PRIMARY KEY, f float);
INSERT INTO floats VALUES (1, 1.25);
INSERT INTO typed VALUES (1, 123456789.125, -5, 300, 9000000000, 2.5, 1, b'10101', '2024-02-29',
  '13:14:15.123', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15.123', 2024, '{"a":1}', 'happy',
  'a,c', 'ab', 'vc', 'text', x'deadbeef', x'0102');
SQL
register golden-maria-$run '{"connector.class":"io.debezium.connector.mariadb.MariaDbConnector","database.hostname":"'"${my%:*}"'","database.port":"'"${my#*:}"'","database.user":"cdc","database.password":"cdc-secret","database.server.id":"5401","topic.prefix":"goldenmaria","database.include.list":"golden","schema.history.internal":"io.debezium.storage.file.history.FileSchemaHistory","schema.history.internal.file.filename":"'"$(mktemp -d)"'/history.dat","include.schema.changes":"false","skipped.operations":"none"}'
maria golden <<'SQL'
INSERT INTO typed (id, n, tx) VALUES (2, 1.000, 'two');
UPDATE typed SET tx = 'one-updated' WHERE id = 1;
BEGIN; INSERT INTO other VALUES ('a', 1); UPDATE typed SET n = 2.5 WHERE id = 2; COMMIT;
UPDATE typed SET id = 3 WHERE id = 2;
INSERT INTO other VALUES ('m1', 1), ('m2', 2);
DELETE FROM typed WHERE id = 3;
ALTER TABLE other ADD COLUMN w text; INSERT INTO other VALUES ('b', 2, 'added');
ALTER TABLE other DROP COLUMN v; INSERT INTO other VALUES ('c', 'dropped');
TRUNCATE other;
SQL
sleep 5

dump() { # TOPIC FILE
	"$root/scripts/setup/kafka-tool.sh" console-consumer --bootstrap-server "$brokers" --topic "$1" \
		--from-beginning --timeout-ms 8000 --property print.key=true --property print.partition=true \
		--property print.offset=true --property key.separator=$'\t' 2>/dev/null |
		python3 -c '
import json, sys
topic = sys.argv[1]
for line in sys.stdin:
    part, off, key, value = line.rstrip("\n").split("\t", 3)
    print(json.dumps({"topic": topic, "partition": int(part.split(":")[1]), "offset": int(off.split(":")[1]),
                      "key": key, "value": None if value == "null" else value}))
' "$1" >>"$2"
}
rm -f "$here/postgres.jsonl" "$here/mariadb.jsonl"
dump golden.public.typed "$here/postgres.jsonl"
dump golden.public.other "$here/postgres.jsonl"
dump golden.public.floats "$here/postgres.jsonl"
dump goldenmaria.golden.typed "$here/mariadb.jsonl"
dump goldenmaria.golden.other "$here/mariadb.jsonl"
dump goldenmaria.golden.floats "$here/mariadb.jsonl"
curl -fsS -XDELETE "$url/connectors/golden-pg-$run" && curl -fsS -XDELETE "$url/connectors/golden-maria-$run"
psql -X -q -d golden -c "SELECT pg_drop_replication_slot('golden')" >/dev/null 2>&1 || true
wc -l "$here"/*.jsonl
