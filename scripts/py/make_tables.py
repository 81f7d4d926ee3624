#!/usr/bin/env python3
"""make_tables.py writes small Delta test tables with delta-rs or Spark.

Usage:
    make_tables.py --engine deltars|spark --out DIR [--case NAME ...] [--list]

Each case becomes DIR/<engine>-<case>/, a Delta table root that also holds
expected.json: what the same engine reads back from the table, canonicalized
like scripts/py/deltaread.py, so that our Go reader can be compared with it.
Readers ignore expected.json because the log never references it.

expected.json:
    {"engine", "case", "version", "schema": [{name, type, nullable}],
     "partition_columns", "rows": [...sorted canonical rows...], "num_rows",
     "txns": {appId: version}, "protocol": {...},
     "time_travel": [{"version": v, "rows": [...], "num_rows": n}]}

All Spark cases of one invocation share one JVM, because Spark takes long to
start; delta-rs cases need only the deltalake and pyarrow packages.
"""

import argparse
import datetime as dt
import decimal
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import deltaread  # noqa: E402 (scripts/py/deltaread.py: readers and canonical rows)

# decimal(38,s) values need more than the default 28 digits when quantized.
decimal.getcontext().prec = 80

UTC = dt.timezone.utc

# Values shared by the cases so that the fixtures of both engines look alike.
# Partition values chosen to break naive path encoding: null, a space, '%',
# '=', '/', and a Hive-escaped character sequence.
AWKWARD_PARTITIONS = [None, "a b", "50%", "k=v", "x/y", "plain", "%2F"]


# ---------------------------------------------------------------------------
# expected.json


def expected_doc(reader, engine, case, root, partition_columns, app_ids, time_travel):
    """Reads the table back through deltaread's reader of the same engine."""
    readers = {engine: reader}

    def read(version):
        req = {"engine": engine, "path": root, "app_ids": list(app_ids)}
        if version is not None:
            req["version"] = version
        res = deltaread.read_one(readers, req)
        if res["error"]:
            raise RuntimeError(f"{engine} cannot read back {root}@{version}: {res['error']}")
        return res

    doc = read(None)
    doc.pop("path", None)
    doc.pop("error", None)
    doc["txns"] = doc.pop("txn")
    doc.update(engine=engine, case=case, partition_columns=partition_columns)
    doc["time_travel"] = [
        {k: read(v)[k] for k in ("version", "schema", "rows", "num_rows")} for v in time_travel
    ]
    return doc


def write_expected(root, doc):
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


def fresh_dir(path):
    if os.path.exists(path):
        shutil.rmtree(path)
    os.makedirs(path)


# ---------------------------------------------------------------------------
# delta-rs


def _ts(s):
    return dt.datetime.fromisoformat(s).replace(tzinfo=UTC)


def _ntz(s):
    return dt.datetime.fromisoformat(s)


def _D(s):
    return decimal.Decimal(s)


class DeltaRS:
    """Cases written with the deltalake (delta-rs) Python package."""

    engine = "deltars"

    def __init__(self):
        import deltalake
        import pyarrow as pa

        self.dl = deltalake
        self.pa = pa
        self.reader = deltaread.DeltaRS()

    def close(self):
        self.reader.close()

    def commit(self, app=None, version=None):
        if app is None:
            return None
        return self.dl.CommitProperties(
            app_transactions=[self.dl.Transaction(app_id=app, version=version)]
        )

    def expected(self, root, case, app_ids=(), time_travel=()):
        meta = self.dl.DeltaTable(root).metadata()
        doc = expected_doc(self.reader, self.engine, case, root,
                           list(meta.partition_columns), app_ids, time_travel)
        write_expected(root, doc)
        return doc

    # --- cases ---

    def case_types(self, root):
        """All primitive types with nulls, two files, a checkpoint."""
        pa = self.pa
        schema = pa.schema(
            [
                pa.field("id", pa.int64(), nullable=False),
                pa.field("b", pa.bool_()),
                pa.field("i8", pa.int8()),
                pa.field("i16", pa.int16()),
                pa.field("i32", pa.int32()),
                pa.field("i64", pa.int64()),
                pa.field("f32", pa.float32()),
                pa.field("f64", pa.float64()),
                pa.field("d10", pa.decimal128(10, 2)),
                pa.field("d38", pa.decimal128(38, 18)),
                pa.field("s", pa.string()),
                pa.field("bin", pa.binary()),
                pa.field("dt", pa.date32()),
                pa.field("ts", pa.timestamp("us", tz="UTC")),
                pa.field("ntz", pa.timestamp("us")),
            ]
        )
        batch1 = [
            dict(id=1, b=True, i8=-128, i16=-32768, i32=-2147483648,
                 i64=-9223372036854775808, f32=1.5, f64=-2.25,
                 d10=_D("-12345678.90"), d38=_D("-12345678901234567890.123456789012345678"),
                 s="héllo", bin=b"\x00\xff", dt=dt.date(1970, 1, 1),
                 ts=_ts("2024-02-29T23:59:59.999999"), ntz=_ntz("2024-02-29T23:59:59.999999")),
            dict(id=2, b=False, i8=127, i16=32767, i32=2147483647,
                 i64=9223372036854775807, f32=-0.0, f64=1e300,
                 d10=_D("99999999.99"), d38=_D("0.000000000000000001"),
                 s="", bin=b"", dt=dt.date(9999, 12, 31),
                 ts=_ts("1969-12-31T23:59:59.000001"), ntz=_ntz("1900-01-01T00:00:00")),
            dict(id=3, b=None, i8=None, i16=None, i32=None, i64=None, f32=None,
                 f64=None, d10=None, d38=None, s=None, bin=None, dt=None,
                 ts=None, ntz=None),
        ]
        batch2 = [
            dict(id=4, b=True, i8=0, i16=0, i32=0, i64=0, f32=3.25, f64=0.1,
                 d10=_D("0.01"), d38=_D("1.5"), s="a long string that is longer than thirty-two characters",
                 bin=b"delta", dt=dt.date(2000, 2, 29),
                 ts=_ts("2000-01-01T00:00:00"), ntz=_ntz("2000-01-01T12:34:56.123456")),
        ]
        for i, rows in enumerate([batch1, batch2]):
            tbl = pa.Table.from_pylist(rows, schema=schema)
            self.dl.write_deltalake(root, tbl, mode="append" if i else "error")
        self.dl.DeltaTable(root).create_checkpoint()
        return dict(time_travel=[0])

    def case_merge(self, root):
        """Upserts, deletes, updates, txns and a checkpoint in the middle."""
        pa = self.pa
        schema = pa.schema(
            [
                pa.field("id", pa.int64(), nullable=False),
                pa.field("name", pa.string()),
                pa.field("amount", pa.decimal128(12, 2)),
                pa.field("updated", pa.timestamp("us", tz="UTC")),
            ]
        )
        app = "cdc/orders/0"

        def rows(ids, name, ts):
            return pa.Table.from_pylist(
                [dict(id=i, name=f"{name}{i}", amount=_D(f"{i}.{i % 10}0"),
                      updated=_ts(ts)) for i in ids],
                schema=schema,
            )

        dl = self.dl
        dl.write_deltalake(root, rows(range(1, 6), "a", "2024-01-01T00:00:00"),
                           configuration={"delta.checkpointInterval": "5"})  # v0
        dl.write_deltalake(root, rows(range(6, 9), "b", "2024-01-02T00:00:00"),
                           mode="append", commit_properties=self.commit(app, 8))  # v1
        offset = 8
        for step in range(2, 12):  # v2..v11
            t = dl.DeltaTable(root)
            offset += 10
            cp = self.commit(app, offset)
            if step % 3 == 2:
                src = rows([step, step + 10], f"m{step}-", f"2024-01-{step + 1:02d}T00:00:00")
                (t.merge(src, "t.id = s.id", source_alias="s", target_alias="t",
                         commit_properties=cp)
                 .when_matched_update_all().when_not_matched_insert_all().execute())
            elif step % 3 == 0:
                t.delete(f"id = {(4, 7, 12)[step // 3 - 1]}", commit_properties=cp)
            else:
                t.update(updates={"name": f"'u{step}'"}, predicate=f"id = {step - 2}",
                         commit_properties=cp)
            if step == 6:
                dl.DeltaTable(root).create_checkpoint()
        return dict(app_ids=[app, "absent-app"], time_travel=[1, 4])

    def case_cleaned(self, root):
        """Early commits removed by log cleanup; the log starts at a checkpoint."""
        pa = self.pa
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False),
                            pa.field("v", pa.string())])
        dl = self.dl
        for i in range(6):  # v0..v5
            dl.write_deltalake(
                root, pa.Table.from_pylist([dict(id=i, v=f"v{i}")], schema=schema),
                mode="append", configuration={"delta.logRetentionDuration": "interval 1 days"}
                if i == 0 else None)
            if i == 3:
                dl.DeltaTable(root).create_checkpoint()
        # Age every log file so that cleanup may drop what precedes checkpoint 3.
        old = 86400 * 10
        log = os.path.join(root, "_delta_log")
        for f in os.listdir(log):
            p = os.path.join(log, f)
            st = os.stat(p)
            os.utime(p, (st.st_atime - old, st.st_mtime - old))
        dl.DeltaTable(root).cleanup_metadata()
        dl.write_deltalake(root, pa.Table.from_pylist([dict(id=6, v="v6")], schema=schema),
                           mode="append")  # v6
        return dict(time_travel=[4])

    def case_partitioned(self, root):
        """Partition values that break naive path encoding, incl. null."""
        pa = self.pa
        schema = pa.schema(
            [
                pa.field("id", pa.int64(), nullable=False),
                pa.field("p", pa.string()),
                pa.field("n", pa.int32()),
                pa.field("v", pa.string()),
            ]
        )
        data = [
            dict(id=i, p=p, n=(i % 2 if i % 3 else None), v=f"v{i}")
            for i, p in enumerate(AWKWARD_PARTITIONS)
        ]
        self.dl.write_deltalake(
            root, pa.Table.from_pylist(data, schema=schema), partition_by=["p", "n"]
        )
        more = [dict(id=100 + i, p=p, n=1, v="again") for i, p in enumerate(AWKWARD_PARTITIONS[:3])]
        self.dl.write_deltalake(
            root, pa.Table.from_pylist(more, schema=schema), mode="append"
        )
        t = self.dl.DeltaTable(root)
        t.delete("p = 'k=v'")
        self.dl.DeltaTable(root).create_checkpoint()
        return dict(time_travel=[1])


# ---------------------------------------------------------------------------
# Spark


def _sql_str(v):
    if v is None:
        return "NULL"
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


class Spark:
    """Cases written with Spark and delta-spark (local[2], one JVM for all)."""

    engine = "spark"

    def __init__(self):
        # deltaread's Spark session (Delta extensions, UTC, quiet logs) also
        # writes the tables, so one JVM serves the writes and the read-backs.
        self.reader = deltaread.Spark()
        self.spark = self.reader.spark
        # Fixtures get Spark's optional extras only when a case asks.
        self.spark.conf.set(
            "spark.databricks.delta.properties.defaults.enableDeletionVectors", "false")
        # Tiny tables: Spark's default of 50 replay partitions only costs time.
        self.spark.conf.set("spark.databricks.delta.snapshotPartitions", "2")

    def close(self):
        self.reader.close()

    def sql(self, q):
        return self.spark.sql(q)

    def with_conf(self, conf, fn):
        """Runs fn with session confs set, restoring them afterwards."""
        old = {k: self.spark.conf.get(k, None) for k in conf}
        for k, v in conf.items():
            self.spark.conf.set(k, v)
        try:
            return fn()
        finally:
            for k, v in old.items():
                if v is None:
                    self.spark.conf.unset(k)
                else:
                    self.spark.conf.set(k, v)

    def txn(self, app, version, q):
        """Runs a DML statement as Spark's idempotent write (appId, version)."""
        return self.with_conf(
            {"spark.databricks.delta.write.txnAppId": app,
             "spark.databricks.delta.write.txnVersion": str(version)},
            lambda: self.sql(q).collect())

    def expected(self, root, case, app_ids=(), time_travel=()):
        snap = self.reader.snapshot(root, {})
        meta = json.loads(snap.metadata().json())["metaData"]
        doc = expected_doc(self.reader, self.engine, case, root,
                           meta["partitionColumns"], app_ids, time_travel)
        write_expected(root, doc)
        return doc

    def create(self, root, columns, props, partitioned_by=None):
        q = f"CREATE TABLE delta.`{root}` ({columns}) USING delta"
        if partitioned_by:
            q += f" PARTITIONED BY ({partitioned_by})"
        if props:
            q += " TBLPROPERTIES (" + ", ".join(f"'{k}' = '{v}'" for k, v in props.items()) + ")"
        self.sql(q)

    def insert(self, root, values):
        self.sql(f"INSERT INTO delta.`{root}` VALUES " + ", ".join(values))

    # --- cases ---

    def case_types(self, root):
        """All primitive types with nulls; checkpoint with stats_parsed."""
        self.create(root, """id BIGINT NOT NULL, b BOOLEAN, i8 TINYINT, i16 SMALLINT, i32 INT,
            i64 BIGINT, f32 FLOAT, f64 DOUBLE, d10 DECIMAL(10,2), d38 DECIMAL(38,18), s STRING,
            bin BINARY, dt DATE, ts TIMESTAMP, ntz TIMESTAMP_NTZ""",
                    {"delta.checkpointInterval": "2"})
        self.insert(root, [
            """(1, true, -128, -32768, -2147483648, -9223372036854775808, 1.5, -2.25,
                -12345678.90, -12345678901234567890.123456789012345678, 'héllo', X'00FF',
                DATE'1970-01-01', TIMESTAMP'2024-02-29 23:59:59.999999',
                TIMESTAMP_NTZ'2024-02-29 23:59:59.999999')""",
            """(2, false, 127, 32767, 2147483647, 9223372036854775807, -0.0, 1e300,
                99999999.99, 0.000000000000000001, '', X'', DATE'9999-12-31',
                TIMESTAMP'1969-12-31 23:59:59.000001', TIMESTAMP_NTZ'1900-01-01 00:00:00')""",
            "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
        ])
        self.insert(root, [
            """(4, true, 0, 0, 0, 0, 3.25, 0.1, 0.01, 1.5,
                'a long string that is longer than thirty-two characters', X'64656C7461',
                DATE'2000-02-29', TIMESTAMP'2000-01-01 00:00:00',
                TIMESTAMP_NTZ'2000-01-01 12:34:56.123456')""",
        ])
        return dict(time_travel=[1])

    def case_merge(self, root):
        """MERGE/DELETE/UPDATE with idempotent txns; checkpoints every 3."""
        self.create(root, "id BIGINT NOT NULL, name STRING, amount DECIMAL(12,2), updated TIMESTAMP",
                    {"delta.checkpointInterval": "3"})
        app = "cdc/orders/0"
        self.insert(root, [f"({i}, 'a{i}', {i}.{i}0, TIMESTAMP'2024-01-01 00:00:00')"
                           for i in range(1, 6)])  # v1
        self.txn(app, 8, f"INSERT INTO delta.`{root}` VALUES " + ", ".join(
            f"({i}, 'b{i}', {i}.{i}0, TIMESTAMP'2024-01-02 00:00:00')" for i in range(6, 9)))  # v2
        offset = 8
        for step in range(3, 12):  # v3..v11
            offset += 10
            if step % 3 == 0:
                src = ", ".join(f"({i}, 'm{step}-{i}', {i}.{step}0, TIMESTAMP'2024-01-{step:02d} 00:00:00')"
                                for i in (step - 1, step + 10))
                q = f"""MERGE INTO delta.`{root}` t
                        USING (SELECT * FROM VALUES {src} AS s(id, name, amount, updated)) s
                        ON t.id = s.id
                        WHEN MATCHED THEN UPDATE SET *
                        WHEN NOT MATCHED THEN INSERT *"""
            elif step % 3 == 1:
                q = f"DELETE FROM delta.`{root}` WHERE id = {(4, 7, 12)[step // 3 - 1]}"
            else:
                q = f"UPDATE delta.`{root}` SET name = 'u{step}' WHERE id = {step - 4}"
            self.txn(app, offset, q)
        # A replayed batch: Spark must skip it because the txn is already past it.
        self.txn(app, 18, f"DELETE FROM delta.`{root}` WHERE id = 1")
        return dict(app_ids=[app, "absent-app"], time_travel=[2, 5])

    def case_dv(self, root):
        """Deletion vectors from DELETE, UPDATE and MERGE; checkpoint every 4."""
        self.create(root, "id BIGINT NOT NULL, v STRING, g INT",
                    {"delta.enableDeletionVectors": "true", "delta.checkpointInterval": "4"})
        self.insert(root, [f"({i}, 'v{i}', {i % 2})" for i in range(0, 10)])
        self.insert(root, [f"({i}, 'v{i}', {i % 2})" for i in range(10, 20)])
        self.sql(f"DELETE FROM delta.`{root}` WHERE id % 3 = 0")
        self.sql(f"UPDATE delta.`{root}` SET v = 'upd' WHERE id IN (1, 11)")
        self.sql(f"""MERGE INTO delta.`{root}` t
                     USING (SELECT * FROM VALUES (2, 'm', 0), (4, 'x', 0), (100, 'new', 1)
                            AS s(id, v, g)) s
                     ON t.id = s.id
                     WHEN MATCHED AND s.v = 'x' THEN DELETE
                     WHEN MATCHED THEN UPDATE SET *
                     WHEN NOT MATCHED THEN INSERT *""")
        self.sql(f"DELETE FROM delta.`{root}` WHERE id IN (5, 13)")
        return dict(time_travel=[2, 3])

    def case_colmap(self, root):
        """Column mapping (name): SQL Server-style names, RENAME and DROP COLUMN."""
        self.create(root, "id BIGINT NOT NULL, `Unit Price` DECIMAL(10,2), `Qty (kg)` DOUBLE, "
                          "note STRING, extra INT, p STRING",
                    {"delta.columnMapping.mode": "name", "delta.checkpointInterval": "3"},
                    partitioned_by="p")
        self.insert(root, ["(1, 1.50, 2.5, 'n1', 10, 'a')", "(2, NULL, NULL, NULL, NULL, NULL)"])
        self.sql(f"ALTER TABLE delta.`{root}` RENAME COLUMN note TO `Note Text`")
        self.sql(f"ALTER TABLE delta.`{root}` DROP COLUMN extra")
        self.insert(root, ["(3, 3.00, 0.25, 'n3', 'a')", "(4, 4.40, 4.0, 'n4', 'b b')"])
        self.sql(f"UPDATE delta.`{root}` SET `Unit Price` = 9.99 WHERE id = 1")
        self.sql(f"ALTER TABLE delta.`{root}` ADD COLUMNS (extra INT)")  # same name, new column
        self.insert(root, ["(5, 5.50, 5.5, 'n5', 'a', 55)"])
        return dict(time_travel=[1])

    def case_partitioned(self, root):
        """Partition values that break naive path encoding; checkpoint every 2."""
        self.create(root, "id BIGINT NOT NULL, p STRING, n INT, v STRING",
                    {"delta.checkpointInterval": "2"}, partitioned_by="p, n")
        self.insert(root, [
            f"({i}, {_sql_str(p)}, {('NULL' if i % 3 == 0 else i % 2)}, 'v{i}')"
            for i, p in enumerate(AWKWARD_PARTITIONS)])
        self.insert(root, [f"({100 + i}, {_sql_str(p)}, 1, 'again')"
                           for i, p in enumerate(AWKWARD_PARTITIONS[:3])])
        self.sql(f"DELETE FROM delta.`{root}` WHERE p = 'k=v'")
        return dict(time_travel=[1])

    def case_multipart(self, root):
        """Multi-part classic checkpoints (checkpoint.partSize = 2 actions)."""
        def make():
            self.create(root, "id BIGINT NOT NULL, v STRING", {"delta.checkpointInterval": "3"})
            for i in range(5):
                self.insert(root, [f"({i}, 'v{i}')", f"({i + 10}, 'w{i}')"])
            self.sql(f"DELETE FROM delta.`{root}` WHERE id = 12")
        self.with_conf({"spark.databricks.delta.checkpoint.partSize": "2"}, make)
        return dict(time_travel=[3])

    def _v2(self, root, fmt):
        def make():
            self.create(root, "id BIGINT NOT NULL, v STRING, p STRING",
                        {"delta.checkpointPolicy": "v2", "delta.checkpointInterval": "2"},
                        partitioned_by="p")
            for i in range(5):
                self.insert(root, [f"({i}, 'v{i}', 'p{i % 2}')", f"({i + 10}, 'w{i}', NULL)"])
            self.sql(f"DELETE FROM delta.`{root}` WHERE id = 12")
        self.with_conf({"spark.databricks.delta.checkpointV2.topLevelFileFormat": fmt,
                        "spark.databricks.delta.checkpoint.partSize": "2"}, make)
        return dict(time_travel=[3])

    def case_v2json(self, root):
        """V2 checkpoints: UUID-named JSON top-level file with sidecars."""
        return self._v2(root, "json")

    def case_v2parquet(self, root):
        """V2 checkpoints: UUID-named Parquet top-level file with sidecars."""
        return self._v2(root, "parquet")


# ---------------------------------------------------------------------------
# driver

ENGINES = {"deltars": DeltaRS, "spark": Spark}


def cases_of(cls):
    return sorted(n[len("case_"):] for n in dir(cls) if n.startswith("case_"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", required=True, choices=sorted(ENGINES))
    ap.add_argument("--out", help="directory that receives <engine>-<case>/ tables")
    ap.add_argument("--case", action="append", help="case to make (repeatable); default all")
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    args = ap.parse_args(argv)

    cls = ENGINES[args.engine]
    names = cases_of(cls)
    if args.list:
        print("\n".join(names))
        return 0
    if not args.out:
        ap.error("--out is required")
    wanted = args.case or names
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        ap.error(f"unknown case(s) {unknown}; known: {names}")

    eng = cls()
    made = {}
    try:
        for name in wanted:
            root = os.path.abspath(os.path.join(args.out, f"{args.engine}-{name}"))
            fresh_dir(root)
            opts = getattr(eng, "case_" + name)(root) or {}
            doc = eng.expected(root, name, **opts)
            made[name] = {"path": root, "version": doc["version"], "num_rows": doc["num_rows"]}
            print(f"made {args.engine}-{name}: version {doc['version']}, {doc['num_rows']} rows",
                  file=sys.stderr)
    finally:
        eng.close()
    json.dump(made, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
