#!/usr/bin/env python3
"""Read Delta tables with independent engines and print canonical JSON.

The full test tier uses this to check that tables written by cdc2delta read
back identically in delta-rs (the ``deltalake`` package), DuckDB's delta
extension and Spark with delta-spark.

Input: a JSON list of requests, from the file named by the first argument or
from stdin. Each request is an object:

    {"engine": "deltars" | "polars" | "duckdb" | "spark",
     "api": "querybuilder",              (optional; the engine's call, below)
     "path": "/abs/table", "s3://bucket/table" or "gs://bucket/table",
     "version": 3,                       (optional time travel)
     "timestamp": "2024-01-01T00:00:00Z", (optional time travel)
     "filter": "id > 3",                 (optional SQL predicate)
     "predicate": ["id", ">", 3],        (optional; a column compared with a
                                          literal, as each API spells a filter)
     "app_ids": ["app-0"],               (optional txn lookups)
     "rows_only": true}                  (optional: skip what Spark reports
                                          beside the rows: version, txn,
                                          protocol; a log replay per read)

APIs (the first is the default): deltars: querybuilder (DataFusion SQL),
to_pandas (DeltaTable.to_pandas()), to_pyarrow_dataset (with the predicate
as a dataset filter), load_cdf (the change data feed from version 0);
polars: read_delta, scan_delta (with the predicate as a LazyFrame filter);
duckdb: delta_scan; spark: read (DataFrameReader), read_change_feed
(readChangeFeed from version 0), version_as_of (SQL SELECT ... VERSION AS OF,
needs "version"), sql (runs "statements", a list of Spark SQL statements in
which {table} stands for delta.`path`, in order, and returns the rows of the
last one: an UPDATE's or DELETE's num_affected_rows, DESCRIBE HISTORY's
history). Every engine also takes api "recipe" with "code": Python
source run in this process once the engine has started (a Spark recipe's
getOrCreate then gets this session); the result is one row {"output": what
the code printed}. A change data feed result has the table's columns plus
_change_type and _commit_version (_commit_timestamp is left out: engines
derive it differently).

Output on stdout: a JSON list with one result per request, in order:

    {"engine", "path", "version" (snapshot read, if the engine says),
     "schema": [{"name", "type", "nullable"}],
     "rows": [{column: value}], "num_rows",
     "txn": {appId: version or null}, "protocol": {...} or null,
     "engine_version": "deltalake 1.6.6" (the packages doing the read),
     "seconds": 0.12 (the read's wall time),
     "error": null or "message"}

Types are Delta type strings ("long", "decimal(10,2)", "timestamp_ntz") or,
for nested columns, Delta schema JSON objects without field metadata. Values
are canonical so that engines compare equal: integers as numbers, decimals as
exact strings with their scale, floats as numbers ("NaN", "Infinity" and
"-Infinity" as strings), timestamps as ISO-8601 UTC with microseconds and a
"Z", timestamp_ntz the same without zone, dates ISO, binary as hex, maps as
[{"key", "value"}] sorted by key, null as null. Rows are sorted.

Nullability is null for DuckDB, which does not report it. Spark and DuckDB
cannot read S3 here (see docs/TESTING.md); Spark reads the txn versions of
the snapshot it reads through Delta's JVM API.

S3 paths use CDC2DELTA_S3_ENDPOINT and the AWS_* variables of the environment.
One invocation starts at most one Spark session, which serves all requests.

`deltaread.py --check [ENGINE...]` instead starts each engine and reads a
tiny table with it, exiting non-zero if any engine fails.

`deltaread.py --hive-metastore URIS [FILE]` starts Spark with Hive support on
the metastore at URIS ("thrift://127.0.0.1:PORT"), so that "sql" statements
and recipes address tables by name (SELECT * FROM db.t).
"""

import base64
import datetime as dt
import decimal
import io
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time

DELTA_SPARK_VERSION_ENV = "CDC2DELTA_DELTA_SPARK_VERSION"

UTC = dt.timezone.utc

# decimal(38,s) values need more than the default 28 significant digits.
decimal.getcontext().prec = 80


def main(argv):
    # Spark's JVM and native libraries inherit our stdout; keep the real one
    # for the JSON result and send everything else to stderr.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    os.environ["TZ"] = "UTC"
    time.tzset()

    global hive_metastore_uris
    if len(argv) > 2 and argv[1] == "--hive-metastore":
        hive_metastore_uris = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) > 1 and argv[1] == "--check":
        return check(out, argv[2:] or sorted(ENGINES))
    if len(argv) > 1 and argv[1] != "-":
        with open(argv[1]) as f:
            requests = json.load(f)
    else:
        requests = json.load(sys.stdin)
    if not isinstance(requests, list):
        raise SystemExit("deltaread: input must be a JSON list of requests")

    readers = {}
    results = []
    try:
        for req in requests:
            results.append(read_one(readers, req))
    finally:
        for r in readers.values():
            r.close()
    json.dump(results, out, allow_nan=False)
    out.write("\n")
    out.flush()
    return 0


def check(out, engines):
    """Start each engine once and read a two-row table written by delta-rs.

    scripts/test.sh runs this as a setup step: the first time, Spark resolves
    delta-spark from Maven Central, and a broken install fails here with a
    clear message rather than in the middle of the tests.
    """
    import deltalake
    import pyarrow as pa

    tmp = tempfile.mkdtemp(prefix="deltaread-check-")
    readers = {}
    try:
        path = os.path.join(tmp, "t")
        deltalake.write_deltalake(path, pa.table({"id": [1, 2], "s": ["a", None]}))
        want = [{"id": 1, "s": "a"}, {"id": 2, "s": None}]
        bad = 0
        for engine in engines:
            start = time.monotonic()
            res = read_one(readers, {"engine": engine, "path": path})
            took = time.monotonic() - start
            ok = res["error"] is None and res["rows"] == want
            bad += not ok
            detail = res["error"] or ("" if ok else f"rows {res['rows']}, want {want}")
            print(f"deltaread check: {engine}: {'ok' if ok else 'FAILED'} ({took:.1f}s) {detail}",
                  file=out)
        out.flush()
        return 1 if bad else 0
    finally:
        for r in readers.values():
            r.close()
        shutil.rmtree(tmp, ignore_errors=True)


def read_one(readers, req):
    engine = req.get("engine")
    res = {
        "engine": engine,
        "api": req.get("api"),
        "path": req.get("path"),
        "version": None,
        "schema": [],
        "rows": [],
        "num_rows": 0,
        "txn": {},
        "protocol": None,
        "engine_version": None,
        "seconds": None,
        "error": None,
    }
    start = time.monotonic()
    try:
        factory = ENGINES.get(engine)
        if factory is None:
            raise ValueError(f"unknown engine {engine!r}; want one of {sorted(ENGINES)}")
        if engine not in readers:
            try:
                readers[engine] = factory()
            except Exception as e:
                # Remember the failure: starting Spark again would only fail slowly again.
                readers[engine] = Broken(f"starting {engine}: {error_text(e)}")
        res["engine_version"] = getattr(readers[engine], "version", None)
        api = req.get("api")
        if api == "recipe":
            if isinstance(readers[engine], Broken):
                readers[engine].read(req)
            buf = io.StringIO()
            saved, sys.stdout = sys.stdout, buf
            try:
                exec(compile(req["code"], "<recipe>", "exec"), {"__name__": "__recipe__"})
            finally:
                sys.stdout = saved
            res["schema"] = [{"name": "output", "type": "string", "nullable": True}]
            res["rows"], res["num_rows"] = [{"output": buf.getvalue()}], 1
            res["seconds"] = round(time.monotonic() - start, 3)
            return res
        apis = getattr(readers[engine], "APIS", ())
        if api is not None and api not in apis:
            raise ValueError(f"{engine} has no api {api!r}; want one of {list(apis)}")
        schema, rows, extra = readers[engine].read(req)
        res["schema"] = [
            {"name": f["name"], "type": f["type"], "nullable": f["nullable"]} for f in schema
        ]
        res["rows"] = canonical_rows(schema, rows)
        res["num_rows"] = len(res["rows"])
        res.update(extra)
    except Exception as e:  # reported per request; the Go side fails the test
        res["error"] = error_text(e)
    res["seconds"] = round(time.monotonic() - start, 3)
    return res


def error_text(e):
    """A short message: Java stack traces run to hundreds of lines."""
    java = getattr(e, "java_exception", None)
    if java is not None:
        text = f"{type(e).__name__}: {java.toString()}"
    else:
        text = f"{type(e).__name__}: {e}"
    return text if len(text) <= 2000 else text[:2000] + " ..."


class Broken:
    """Stands in for an engine that failed to start."""

    def __init__(self, message):
        self.message = message

    def read(self, req):
        raise RuntimeError(self.message)

    def close(self):
        pass


# ---------------------------------------------------------------- canonical values


def canonical_rows(schema, rows):
    out = []
    for row in rows:
        out.append({f["name"]: canonical(f["type"], v) for f, v in zip(schema, row)})
    out.sort(key=lambda r: json.dumps([r[f["name"]] for f in schema], sort_keys=True))
    return out


DECIMAL_RE = re.compile(r"^decimal\((\d+),\s*(-?\d+)\)$")


def canonical(typ, v):
    if v is None:
        return None
    if isinstance(typ, dict):
        kind = typ["type"]
        if kind == "struct":
            if not isinstance(v, dict):
                v = as_dict(v)
            return {f["name"]: canonical(f["type"], v.get(f["name"])) for f in typ["fields"]}
        if kind == "array":
            return [canonical(typ["elementType"], x) for x in v]
        if kind == "map":
            pairs = [
                {"key": canonical(typ["keyType"], k), "value": canonical(typ["valueType"], x)}
                for k, x in map_items(v)
            ]
            pairs.sort(key=lambda p: json.dumps(p["key"], sort_keys=True))
            return pairs
        raise ValueError(f"unknown nested type {kind!r}")
    if typ in ("long", "integer", "short", "byte"):
        return int(v)
    if typ in ("float", "double"):
        f = float(v)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "Infinity" if f > 0 else "-Infinity"
        return f
    if typ == "boolean":
        return bool(v)
    if typ == "string":
        return str(v)
    if typ == "binary":
        return bytes(v).hex()
    if typ == "date":
        if isinstance(v, dt.datetime):
            v = v.date()
        return v.isoformat()
    if typ == "timestamp":
        if v.tzinfo is None:
            v = v.replace(tzinfo=UTC)  # engines hand naive values in the UTC session zone
        return v.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if typ == "timestamp_ntz":
        return v.replace(tzinfo=None).strftime("%Y-%m-%dT%H:%M:%S.%f")
    m = DECIMAL_RE.match(typ)
    if m:
        scale = int(m.group(2))
        d = decimal.Decimal(str(v)) if not isinstance(v, decimal.Decimal) else v
        return format(d.quantize(decimal.Decimal(1).scaleb(-scale)), "f")
    raise ValueError(f"unknown Delta type {typ!r}")


def as_dict(v):
    if hasattr(v, "asDict"):
        return v.asDict()
    raise ValueError(f"struct value of type {type(v).__name__}")


def map_items(v):
    if isinstance(v, dict):
        # DuckDB may hand a map as {"key": [...], "value": [...]}.
        if set(v) == {"key", "value"} and isinstance(v["key"], list):
            return list(zip(v["key"], v["value"]))
        return list(v.items())
    return [tuple(p) for p in v]  # pyarrow: list of (key, value)


def strip_metadata(typ):
    """Delta/Spark schema JSON without field metadata, primitives as strings."""
    if isinstance(typ, str):
        return typ
    kind = typ["type"]
    if kind == "struct":
        return {
            "type": "struct",
            "fields": [
                {
                    "name": f["name"],
                    "type": strip_metadata(f["type"]),
                    "nullable": f["nullable"],
                }
                for f in typ["fields"]
            ],
        }
    if kind == "array":
        return {
            "type": "array",
            "elementType": strip_metadata(typ["elementType"]),
            "containsNull": typ["containsNull"],
        }
    if kind == "map":
        return {
            "type": "map",
            "keyType": strip_metadata(typ["keyType"]),
            "valueType": strip_metadata(typ["valueType"]),
            "valueContainsNull": typ["valueContainsNull"],
        }
    return kind


def schema_fields(schema_json):
    return strip_metadata(schema_json)["fields"]


def parse_timestamp(s):
    t = dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return t


PREDICATE_OPS = (">", ">=", "<", "<=", "=")


def predicate(req):
    """The request's predicate as (column, op, value), or None."""
    p = req.get("predicate")
    if p is None:
        return None
    col, op, value = p
    if op not in PREDICATE_OPS:
        raise ValueError(f"predicate op {op!r}; want one of {PREDICATE_OPS}")
    return col, op, value


def predicate_sql(req, quote):
    """The request's filter and predicate as one SQL condition, or ""."""
    conds = []
    if req.get("filter"):
        conds.append(f"({req['filter']})")
    p = predicate(req)
    if p:
        col, op, value = p
        conds.append(f"{quote(col)} {op} {sql_literal(value)}")
    return " AND ".join(conds)


def sql_literal(v):
    if isinstance(v, str):
        return sql_string(v)
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    return repr(v)


def double_quoted(name):
    return '"' + name.replace('"', '""') + '"'


def backquoted(name):
    return "`" + name.replace("`", "``") + "`"


def pandas_rows(df):
    """Rows of a pandas DataFrame with pandas' missing values (NaN in an
    integer column that has nulls, NaT, NA) as None."""
    import pandas as pd

    rows = []
    for t in df.itertuples(index=False, name=None):
        rows.append(tuple(None if not isinstance(v, (list, dict, bytes)) and pd.isna(v) else v for v in t))
    return rows


def cdf_fields(schema):
    return schema + [
        {"name": "_change_type", "type": "string", "nullable": True},
        {"name": "_commit_version", "type": "long", "nullable": True},
    ]


# ---------------------------------------------------------------- S3 settings


def s3_settings():
    endpoint = os.environ.get("CDC2DELTA_S3_ENDPOINT")
    if not endpoint:
        raise ValueError("s3:// path but CDC2DELTA_S3_ENDPOINT is not set")
    return {
        "endpoint": endpoint,
        "key": os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        "secret": os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
        "region": os.environ.get("AWS_REGION", os.environ.get("AWS_DEFAULT_REGION", "us-east-1")),
    }


def is_s3(path):
    return path.startswith("s3://") or path.startswith("s3a://")


# Azurite's well-known development account (published, not a secret).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def azure_settings():
    endpoint = os.environ.get("CDC2DELTA_AZURE_ENDPOINT")
    if not endpoint:
        raise ValueError("az:// path but CDC2DELTA_AZURE_ENDPOINT is not set")
    return {
        "endpoint": endpoint.rstrip("/"),
        "account": os.environ.get("AZURE_STORAGE_ACCOUNT_NAME", AZURITE_ACCOUNT),
        "key": os.environ.get("AZURE_STORAGE_ACCOUNT_KEY", AZURITE_KEY),
    }


def is_azure(path):
    return path.split("://", 1)[0] in ("az", "azure", "abfs", "abfss")
def gcs_options():
    """delta-rs options for gs:// on the GCS emulator at CDC2DELTA_GCS_ENDPOINT.

    object_store has no endpoint option for GCS: a service-account key with
    gcs_base_url and disable_oauth is its way to an emulator."""
    endpoint = os.environ.get("CDC2DELTA_GCS_ENDPOINT")
    if not endpoint:
        raise ValueError("gs:// path but CDC2DELTA_GCS_ENDPOINT is not set")
    key = {"gcs_base_url": endpoint.rstrip("/"), "disable_oauth": True,
           "client_email": "", "private_key": "", "private_key_id": ""}
    return {"google_service_account_key": json.dumps(key)}


# ---------------------------------------------------------------- delta-rs


class DeltaRS:
    APIS = ("querybuilder", "to_pandas", "to_pyarrow_dataset", "load_cdf")

    def __init__(self):
        import deltalake

        self.version = f"deltalake {deltalake.__version__}"

    def close(self):
        pass

    def read(self, req):
        import deltalake
        import pyarrow as pa

        path = req["path"]
        opts = None
        if is_s3(path):
            s3 = s3_settings()
            opts = {
                "AWS_ENDPOINT_URL": s3["endpoint"],
                "AWS_ACCESS_KEY_ID": s3["key"],
                "AWS_SECRET_ACCESS_KEY": s3["secret"],
                "AWS_REGION": s3["region"],
                "AWS_ALLOW_HTTP": "true",
                "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
                "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false",
            }
            path = "s3://" + path.split("://", 1)[1]
        elif is_azure(path):
            az = azure_settings()
            opts = {
                "azure_storage_account_name": az["account"],
                "azure_storage_account_key": az["key"],
                "azure_storage_endpoint": az["endpoint"],
                "allow_http": "true",
            }
        elif path.startswith("gs://"):
            opts = gcs_options()
        table = deltalake.DeltaTable(path, version=req.get("version"), storage_options=opts)
        if req.get("timestamp"):
            table.load_as_version(parse_timestamp(req["timestamp"]))
        schema = schema_fields(json.loads(table.schema().to_json()))
        names = [f["name"] for f in schema]
        api = req.get("api") or "querybuilder"
        if api == "to_pandas":
            if req.get("filter") or req.get("predicate"):
                raise ValueError("to_pandas: the request has a filter; use to_pyarrow_dataset")
            rows = pandas_rows(table.to_pandas()[names])
        elif api == "to_pyarrow_dataset":
            import pyarrow.compute as pc

            if req.get("filter"):
                raise ValueError("to_pyarrow_dataset takes a predicate, not an SQL filter")
            ds = table.to_pyarrow_dataset()
            p = predicate(req)
            expr = None
            if p:
                col, op, value = p
                f = pc.field(col)
                expr = {">": f > value, ">=": f >= value, "<": f < value, "<=": f <= value, "=": f == value}[op]
            data = ds.to_table(filter=expr)
            rows = list(zip(*[data.column(n).to_pylist() for n in names])) if names else []
        elif api == "load_cdf":
            data = pa.table(table.load_cdf(starting_version=0))
            if req.get("filter") or req.get("predicate"):
                raise ValueError("load_cdf: filters are not supported here")
            schema = cdf_fields(schema)
            names = [f["name"] for f in schema]
            rows = list(zip(*[data.column(n).to_pylist() for n in names]))
        else:
            # QueryBuilder (DataFusion) reads column mapping and deletion vectors, which
            # to_pyarrow_table refuses in deltalake 1.6.
            qb = deltalake.QueryBuilder().register("t", table)
            where = predicate_sql(req, double_quoted)
            data = pa.table(qb.execute(f"SELECT * FROM t{' WHERE ' + where if where else ''}"))
            cols = [data.column(n).to_pylist() for n in names]
            rows = list(zip(*cols)) if cols else []
        p = table.protocol()
        extra = {
            "version": table.version(),
            "txn": {a: table.transaction_version(a) for a in req.get("app_ids") or []},
            "protocol": {
                "minReaderVersion": p.min_reader_version,
                "minWriterVersion": p.min_writer_version,
                "readerFeatures": sorted(p.reader_features) if p.reader_features else None,
                "writerFeatures": sorted(p.writer_features) if p.writer_features else None,
            },
        }
        return schema, rows, extra


# ---------------------------------------------------------------- polars


class Polars:
    APIS = ("read_delta", "scan_delta")

    def __init__(self):
        import polars

        self.version = f"polars {polars.__version__}"

    def close(self):
        pass

    def read(self, req):
        import deltalake
        import polars as pl

        path = req["path"]
        if is_s3(path):
            raise ValueError("polars: S3 is not set up here")
        if req.get("timestamp") or req.get("filter"):
            raise ValueError("polars: no timestamp travel or SQL filter here")
        # The Delta types of the columns, for canonical values.
        schema = schema_fields(json.loads(deltalake.DeltaTable(path, version=req.get("version")).schema().to_json()))
        names = [f["name"] for f in schema]
        api = req.get("api") or "read_delta"
        if api == "scan_delta":
            lf = pl.scan_delta(path, version=req.get("version"))
            p = predicate(req)
            if p:
                col, op, value = p
                c = pl.col(col)
                lf = lf.filter({">": c > value, ">=": c >= value, "<": c < value, "<=": c <= value, "=": c == value}[op])
            df = lf.collect()
        else:
            if req.get("predicate"):
                raise ValueError("read_delta takes no predicate; use scan_delta")
            df = pl.read_delta(path, version=req.get("version"))
        rows = df.select(names).rows()
        return schema, rows, {}


# ---------------------------------------------------------------- DuckDB# ---------------------------------------------------------------- DuckDB


class DuckDB:
    APIS = ("delta_scan",)

    def __init__(self):
        import importlib.metadata

        import duckdb
        import duckdb_extension_delta

        self.version = (f"duckdb {duckdb.__version__} + duckdb-extension-delta "
                        f"{importlib.metadata.version('duckdb-extension-delta')}")
        self.con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                          "autoload_known_extensions": False})
        # Load the extension shipped in the pip wheel by path: there is no
        # extension download from the internet in CI.
        self.con.execute(f"LOAD '{extension_file(duckdb_extension_delta, duckdb)}'")
        self.con.execute("SET TimeZone = 'UTC'")
        self.s3_ready = False
        self.azure_ready = False
        self.gcs_ready = False

    def close(self):
        self.con.close()

    def enable_s3(self):
        if self.s3_ready:
            return
        import duckdb
        import duckdb_extension_httpfs

        self.con.execute(f"LOAD '{extension_file(duckdb_extension_httpfs, duckdb)}'")
        s3 = s3_settings()
        endpoint = re.sub(r"^https?://", "", s3["endpoint"]).rstrip("/")
        self.con.execute(
            "CREATE SECRET cdc2delta_s3 (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, "
            "ENDPOINT ?, URL_STYLE 'path', USE_SSL false)".replace("?", "'{}'").format(
                s3["key"], s3["secret"], s3["region"], endpoint
            )
        )
        self.s3_ready = True

    def enable_azure(self):
        if self.azure_ready:
            return
        import duckdb
        import duckdb_extension_azure

        self.con.execute(f"LOAD '{extension_file(duckdb_extension_azure, duckdb)}'")
        az = azure_settings()
        conn = (f"DefaultEndpointsProtocol=http;AccountName={az['account']};AccountKey={az['key']};"
                f"BlobEndpoint={az['endpoint']};")
        self.con.execute(f"CREATE SECRET cdc2delta_azure (TYPE azure, CONNECTION_STRING {sql_string(conn)})")
        # The delta extension's kernel takes the connection string for the
        # emulator and ignores its BlobEndpoint: object_store reads the
        # emulator's address from this variable instead.
        os.environ["AZURITE_BLOB_STORAGE_URL"] = re.sub(r"^(https?://[^/]+).*$", r"\1", az["endpoint"])
        self.azure_ready = True
    def enable_gcs(self):
        """A GCS secret with the emulator's endpoint: httpfs speaks the XML API,
        path-style, and the emulator checks no HMAC key."""
        if self.gcs_ready:
            return
        import duckdb
        import duckdb_extension_httpfs

        self.con.execute(f"LOAD '{extension_file(duckdb_extension_httpfs, duckdb)}'")
        endpoint = os.environ.get("CDC2DELTA_GCS_ENDPOINT")
        if not endpoint:
            raise ValueError("gs:// path but CDC2DELTA_GCS_ENDPOINT is not set")
        self.con.execute(
            "CREATE SECRET cdc2delta_gcs (TYPE gcs, KEY_ID 'emulator', SECRET 'emulator', "
            "ENDPOINT {}, URL_STYLE 'path', USE_SSL {})".format(
                sql_string(re.sub(r"^https?://", "", endpoint).rstrip("/")),
                "true" if endpoint.startswith("https://") else "false",
            )
        )
        self.gcs_ready = True

    def read(self, req):
        path = req["path"]
        if is_s3(path):
            self.enable_s3()
            path = "s3://" + path.split("://", 1)[1]
        elif is_azure(path):
            self.enable_azure()
        elif path.startswith("gs://"):
            self.enable_gcs()
        if req.get("timestamp"):
            raise ValueError("duckdb delta_scan has no time travel by timestamp")
        args = [sql_string(path)]
        if req.get("version") is not None:
            args.append(f"version := {int(req['version'])}")
        sql = f"SELECT * FROM delta_scan({', '.join(args)})"
        where = predicate_sql(req, double_quoted)
        if where:
            sql += f" WHERE {where}"
        rel = self.con.sql(sql)
        schema = [
            {"name": n, "type": duck_type(t), "nullable": None}
            for n, t in zip(rel.columns, rel.types)
        ]
        rows = rel.fetchall()
        return schema, rows, {}


def extension_file(module, duckdb):
    base = os.path.join(os.path.dirname(module.__file__), "extensions")
    want = os.path.join(base, "v" + duckdb.__version__)
    for root, _, files in os.walk(want if os.path.isdir(want) else base):
        for f in files:
            if f.endswith(".duckdb_extension"):
                return os.path.join(root, f)
    raise FileNotFoundError(f"no .duckdb_extension under {base} for duckdb {duckdb.__version__}")


def sql_string(s):
    return "'" + s.replace("'", "''") + "'"


DUCK_PRIMITIVES = {
    "bigint": "long",
    "integer": "integer",
    "smallint": "short",
    "tinyint": "byte",
    "float": "float",
    "double": "double",
    "boolean": "boolean",
    "varchar": "string",
    "blob": "binary",
    "date": "date",
    "timestamp with time zone": "timestamp",
    "timestamp": "timestamp_ntz",
}


def duck_type(t):
    kind = t.id
    if kind in DUCK_PRIMITIVES:
        return DUCK_PRIMITIVES[kind]
    if kind == "decimal":
        c = dict(t.children)
        return f"decimal({c['precision']},{c['scale']})"
    if kind == "struct":
        return {
            "type": "struct",
            "fields": [
                {"name": n, "type": duck_type(ct), "nullable": None} for n, ct in t.children
            ],
        }
    if kind == "list":
        return {"type": "array", "elementType": duck_type(t.children[0][1]), "containsNull": None}
    if kind == "map":
        c = dict(t.children)
        return {
            "type": "map",
            "keyType": duck_type(c["key"]),
            "valueType": duck_type(c["value"]),
            "valueContainsNull": None,
        }
    raise ValueError(f"unmapped DuckDB type {t}")


# ---------------------------------------------------------------- Spark


SPARK_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = STDERR
appender.console.type = Console
appender.console.name = STDERR
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


# The Hive Metastore Spark's session catalog uses ("--hive-metastore"); by
# default Spark keeps its catalog in memory.
hive_metastore_uris = None


class Spark:
    APIS = ("read", "read_change_feed", "version_as_of", "sql")

    def __init__(self):
        import importlib.metadata

        import pyspark
        from pyspark.sql import SparkSession

        self.tmp = tempfile.mkdtemp(prefix="deltaread-spark-")
        log4j = os.path.join(self.tmp, "log4j2.properties")
        with open(log4j, "w") as f:
            f.write(SPARK_LOG4J)
        cache = os.environ.get(
            "CDC2DELTA_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "cdc2delta")
        )
        java_opts = f"-Dlog4j2.configurationFile=file:{log4j} -Dderby.system.home={self.tmp}"
        builder = (
            SparkSession.builder.master("local[2]")
            .appName("cdc2delta-deltaread")
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config(
                "spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            )
            .config("spark.jars.ivy", os.path.join(cache, "ivy"))
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.default.parallelism", "2")
            # Delta rebuilds snapshot state with 50 tasks by default; test
            # tables are tiny and the machine has 2 cores.
            .config("spark.databricks.delta.snapshotPartitions", "1")
            # Compiling generated code costs more than it saves on tables of a
            # few rows: a third less time over the reader matrix's reads.
            .config("spark.sql.codegen.wholeStage", "false")
            .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
            .config("spark.sql.adaptive.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "1g")
            .config("spark.local.dir", self.tmp)
            .config("spark.sql.warehouse.dir", os.path.join(self.tmp, "warehouse"))
            .config("spark.driver.extraJavaOptions", java_opts)
        )
        if hive_metastore_uris:
            builder = (
                builder.config("spark.sql.catalogImplementation", "hive")
                .config("spark.hadoop.hive.metastore.uris", hive_metastore_uris)
                # Fail fast when the metastore does not answer (the default
                # retries for minutes).
                .config("spark.hadoop.hive.metastore.connect.retries", "1")
                .config("spark.hadoop.hive.metastore.client.socket.timeout", "60s")
            )
        # What delta.pip_utils.configure_spark_with_delta_pip would set.
        spark_minor = ".".join(pyspark.__version__.split(".")[:2])
        packages = f"io.delta:delta-spark_{spark_minor}_2.13:{importlib.metadata.version('delta-spark')}"
        # Ivy re-resolves spark.jars.packages on every start (10-20 s); once
        # it has, hand Spark the resolved jars directly.
        resolved = os.path.join(cache, "ivy", "resolved-" + re.sub(r"[^\w.-]", "_", packages))
        jars = read_jar_list(resolved)
        if jars:
            builder = builder.config("spark.jars", jars)
        else:
            builder = builder.config("spark.jars.packages", packages)
        self.spark = builder.getOrCreate()
        if not jars:
            got = self.spark.sparkContext.getConf().get("spark.jars", "")
            if got:
                with open(resolved + ".tmp", "w") as f:
                    f.write(got)
                os.replace(resolved + ".tmp", resolved)
        self.spark.sparkContext.setLogLevel("ERROR")
        self.jvm = self.spark.sparkContext._jvm
        self.pyspark_version = pyspark.__version__
        self.version = f"pyspark {pyspark.__version__} + delta-spark {importlib.metadata.version('delta-spark')}"

    def close(self):
        try:
            self.spark.stop()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def read(self, req):
        path = req["path"]
        if is_s3(path):
            raise ValueError("spark: S3 is not set up (hadoop-aws is not installed)")
        api = req.get("api") or "read"
        if api == "sql":
            return self.run_sql(path, req)
        if api == "version_as_of":
            if req.get("version") is None:
                raise ValueError("version_as_of needs a version")
            df = self.spark.sql(f"SELECT * FROM delta.{backquoted(path)} VERSION AS OF {int(req['version'])}")
        elif api == "read_change_feed":
            df = (self.spark.read.format("delta").option("readChangeFeed", "true")
                  .option("startingVersion", 0).load(path).drop("_commit_timestamp"))
        else:
            reader = self.spark.read.format("delta")
            if req.get("version") is not None:
                reader = reader.option("versionAsOf", int(req["version"]))
            if req.get("timestamp"):
                ts = parse_timestamp(req["timestamp"]).strftime("%Y-%m-%d %H:%M:%S.%f")
                reader = reader.option("timestampAsOf", ts)
            df = reader.load(path)
        where = predicate_sql(req, backquoted)
        if where:
            df = df.where(where)
        schema = schema_fields(df.schema.jsonValue())
        rows = [tuple(r) for r in df.collect()]
        if req.get("rows_only"):
            return schema, rows, {}
        snap = self.snapshot(path, req)
        txns = snap.transactions()
        txn = {}
        for a in req.get("app_ids") or []:
            o = txns.get(a)
            txn[a] = int(o.get()) if o.isDefined() else None
        p = snap.protocol()
        extra = {
            "version": int(snap.version()),
            "txn": txn,
            "protocol": {
                "minReaderVersion": int(p.minReaderVersion()),
                "minWriterVersion": int(p.minWriterVersion()),
                "readerFeatures": scala_set(p.readerFeatures()),
                "writerFeatures": scala_set(p.writerFeatures()),
            },
        }
        return schema, rows, extra

    def run_sql(self, path, req):
        """Runs req["statements"] on the table at path; the last one's rows."""
        statements = req.get("statements") or []
        if not statements:
            raise ValueError("sql needs statements")
        # Another writer may have changed the table since the last request.
        self.jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
        df = None
        for st in statements:
            df = self.spark.sql(st.replace("{table}", "delta." + backquoted(path)))
        schema = schema_fields(df.schema.jsonValue())
        return schema, [tuple(r) for r in df.collect()], {}

    def snapshot(self, path, req):
        """The Delta snapshot the request reads, from Delta's JVM API."""
        delta_log_cls = self.jvm.org.apache.spark.sql.delta.DeltaLog
        delta_log_cls.clearCache()  # the table may have changed since the last request
        log = delta_log_cls.forTable(self.spark._jsparkSession, path)
        snap = log.unsafeVolatileSnapshot()
        version = req.get("version")
        if req.get("timestamp"):
            ms = int(parse_timestamp(req["timestamp"]).timestamp() * 1000)
            # The arguments after the timestamp are what timestampAsOf uses:
            # no catalog table, not past the last commit, recreatable, not
            # before the earliest commit.
            commit = log.history().getActiveCommitAtTime(
                self.jvm.java.sql.Timestamp(ms), self.jvm.scala.Option.empty(), False, True, False
            )
            version = commit.version()
        if version is not None and int(version) != snap.version():
            # py4j cannot omit Scala default arguments; ask Scala for them.
            defaults = [getattr(log, f"getSnapshotAt$default${i}")() for i in (2, 3, 4)]
            snap = log.getSnapshotAt(int(version), *defaults)
        return snap


def read_jar_list(path):
    """The comma-separated jar list at path, if every jar in it still exists."""
    try:
        with open(path) as f:
            jars = f.read().strip()
    except FileNotFoundError:
        return ""
    for j in jars.split(","):
        if not os.path.exists(j.removeprefix("file:")):
            return ""
    return jars


def scala_set(opt):
    if not opt.isDefined():
        return None
    it = opt.get().iterator()
    out = []
    while it.hasNext():
        out.append(str(it.next()))
    return sorted(out)


ENGINES = {"deltars": DeltaRS, "polars": Polars, "duckdb": DuckDB, "spark": Spark}


if __name__ == "__main__":
    sys.exit(main(sys.argv))
