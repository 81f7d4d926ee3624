#!/usr/bin/env python3
"""Compute SCD type 2 history tables with Apache Spark's AutoCDC.

An oracle for cdc2delta's history tables that shares no code with them: the
change events go through Spark 4.3's declarative pipelines
(``pyspark.pipelines.create_auto_cdc_flow(stored_as_scd_type=2)``, whose
engine is ``Scd2BatchProcessor``), SEQUENCE BY the events' source order, one
streaming microbatch per input batch, and the resulting target tables are
printed.

Usage:

    scd2_oracle.py EVENTS.jsonl --jar TESTS_JAR --work DIR
                   [--scenarios SCENARIOS.json] [--stats STATS.json]

EVENTS.jsonl holds one change event a line:

    {"scenario": "name",     (optional, default ""; scenarios are independent)
     "batch": 0,             (optional, default 0; batches run in this order,
                              each as one microbatch)
     "key": {"id": 1},       (the primary key; absent for a truncate)
     "op": "c" | "r" | "u" | "d" | "t",
     "seq": 17,              (the total source order; unique except for
                              re-deliveries of the same event)
     "ts": "2026-12-06T10:00:00Z",  (the commit time; not used here)
     "row": {"id": 1, "name": "a"}} (the after image; absent for d and t)

SCENARIOS.json maps a scenario name to its options:

    {"name": {"track_history": ["name"],          (TRACK HISTORY ON name)
              "track_history_except": ["note"],   (TRACK HISTORY ON * EXCEPT note)
              "types": {"price": "double"}}}      (Spark SQL types; the rest
                                                   are inferred from values)

Output on stdout: one history row a line, sorted by scenario, key and
__START_AT:

    {"_oracle_scenario": "name", "id": 1, "name": "a", "__START_AT": 17, "__END_AT": 20}

with __END_AT null for the current version. STATS.json receives the Spark
version, the JVM start and run times and the microbatches each flow ran.

How the events map onto AutoCDC:

- c, r and u are upserts; d is a delete (apply_as_deletes); t, which AutoCDC
  has no operation for, becomes a delete of every key the scenario ever
  names, at the truncate's position: it closes what is open then, and a late
  event before it is closed by it too (AutoCDC keeps such a delete of a key
  with no open version as a tombstone in its auxiliary table).
- Scenarios with the same key columns, column types and tracked columns share
  one flow, keyed additionally by the scenario, so a run costs one Spark
  session and as few streaming queries as possible.
- Each batch is one JSON file of the flow's source directory, read with
  maxFilesPerTrigger=1 in modification-time order: one microbatch per batch.

Where it runs: AutoCDC writes its target and auxiliary tables with row-level
MERGE, which Spark's built-in file tables do not support, and no Delta or
Iceberg release supports Spark 4.3 (delta-spark 4.4.1 stops at pyspark
4.2.0). The tables therefore live in Spark's own in-memory catalog with
row-level operations, SharedTablesInMemoryRowLevelOperationTableCatalog,
which Spark's AutoCDC test suites use; it ships in Spark's catalyst test jar
(org.apache.spark:spark-catalyst_2.13:4.2.0:tests, the newest on Maven
Central: 4.3.0's is not published there), passed as --jar. The pipelines API
needs Spark Connect: the script starts Spark with a Connect server bound to
127.0.0.1 on a port the system picks (pyspark's local Connect mode binds all
interfaces on 15002), guarded by a random token.
"""

import argparse
import json
import os
import sys
import time
import uuid
import warnings
from collections import OrderedDict

UPSERTS = ("c", "r", "u")
OP_COL = "_oracle_op"
SEQ_COL = "_oracle_seq"
SCENARIO_COL = "_oracle_scenario"
START_AT = "__START_AT"
END_AT = "__END_AT"
CATALOG = "oracle"
NAMESPACE = "scd2"


class OracleError(Exception):
    """An input the oracle cannot run, with where it was found."""


def read_events(path):
    events = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
            except json.JSONDecodeError as e:
                raise OracleError(f"{path}:{n}: not JSON: {e}") from e
            check_event(ev, f"{path}:{n}")
            events.append(ev)
    return events


def check_event(ev, where):
    op = ev.get("op")
    if op not in UPSERTS + ("d", "t"):
        raise OracleError(f"{where}: op {op!r} is not one of c r u d t")
    if not isinstance(ev.get("seq"), int):
        raise OracleError(f"{where}: seq {ev.get('seq')!r} is not an integer")
    if not isinstance(ev.get("batch", 0), int):
        raise OracleError(f"{where}: batch {ev.get('batch')!r} is not an integer")
    if op == "t":
        return
    if not isinstance(ev.get("key"), dict) or not ev["key"]:
        raise OracleError(f"{where}: op {op} needs a non-empty key object")
    if op in UPSERTS and not isinstance(ev.get("row"), dict):
        raise OracleError(f"{where}: op {op} needs a row object")
    for name, value in list(ev["key"].items()) + list((ev.get("row") or {}).items()):
        if isinstance(value, (dict, list)):
            raise OracleError(f"{where}: column {name} is nested; the oracle takes scalars only")
        if name.startswith("_oracle_") or name in (START_AT, END_AT):
            raise OracleError(f"{where}: column name {name} is reserved")
    for name, value in (ev.get("row") or {}).items():
        if name in ev["key"] and value != ev["key"][name]:
            raise OracleError(f"{where}: row's {name}={value!r} differs from the key's {ev['key'][name]!r}")


def infer_type(name, values, declared):
    if name in declared:
        return declared[name]
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return "string"
    if kinds == {bool}:
        return "boolean"
    if kinds == {int}:
        return "bigint"
    if kinds <= {int, float}:
        return "double"
    if kinds == {str}:
        return "string"
    raise OracleError(f"column {name} mixes value types {sorted(k.__name__ for k in kinds)}")


def key_id(key):
    return json.dumps(key, sort_keys=True)


class Scenario:
    def __init__(self, name, events, options):
        self.name = name
        self.events = events
        self.track = list(options.get("track_history") or [])
        self.track_except = list(options.get("track_history_except") or [])
        if self.track and self.track_except:
            raise OracleError(f"scenario {name!r}: track_history and track_history_except are exclusive")
        keyed = [e for e in events if e["op"] != "t"]
        self.key_cols = list(OrderedDict.fromkeys(c for e in keyed for c in e["key"]))
        for e in keyed:
            if list(e["key"]) != self.key_cols and set(e["key"]) != set(self.key_cols):
                raise OracleError(f"scenario {name!r}: key columns {sorted(e['key'])} differ from {self.key_cols}")
        cols = OrderedDict.fromkeys(self.key_cols)
        for e in keyed:
            cols.update(OrderedDict.fromkeys(e.get("row") or {}))
        self.cols = list(cols)
        declared = options.get("types") or {}
        self.types = OrderedDict()
        for c in self.cols:
            values = [e["key"].get(c) for e in keyed] + [(e.get("row") or {}).get(c) for e in keyed]
            self.types[c] = infer_type(c, values, declared)
        self.keys = list(OrderedDict((key_id(e["key"]), e["key"]) for e in keyed).values())
        if not self.keys:
            raise OracleError(f"scenario {name!r} names no key")

    def signature(self):
        return (tuple(self.key_cols), tuple(self.types.items()), tuple(self.track), tuple(self.track_except))

    def source_rows(self):
        """The flow's source rows by batch, with truncates expanded."""
        by_batch = {}
        for e in self.events:
            batch = by_batch.setdefault(e.get("batch", 0), [])
            if e["op"] == "t":
                for k in self.keys:
                    batch.append(self.source_row(k, None, "d", e["seq"]))
            else:
                op = "d" if e["op"] == "d" else "u"
                batch.append(self.source_row(e["key"], e.get("row"), op, e["seq"]))
        return by_batch

    def source_row(self, key, row, op, seq):
        out = {SCENARIO_COL: self.name, OP_COL: op, SEQ_COL: seq}
        for c in self.cols:
            out[c] = key[c] if c in key else (row or {}).get(c)
        return out


class Flow:
    """Scenarios that share key columns, types and tracked columns."""

    def __init__(self, index, scenarios):
        self.index = index
        self.scenarios = scenarios
        first = scenarios[0]
        self.key_cols = first.key_cols
        self.types = first.types
        self.track = first.track
        self.track_except = first.track_except
        self.target = f"{CATALOG}.{NAMESPACE}.history_{index}"
        self.view = f"changes_{index}"

    def ddl_schema(self):
        cols = [f"`{SCENARIO_COL}` string", f"`{OP_COL}` string", f"`{SEQ_COL}` bigint"]
        cols += [f"`{c}` {t}" for c, t in self.types.items()]
        return ", ".join(cols)

    def write_batches(self, root):
        directory = os.path.join(root, f"flow_{self.index}")
        os.makedirs(directory)
        batches = {}
        for s in self.scenarios:
            for b, rows in s.source_rows().items():
                batches.setdefault(b, []).extend(rows)
        base = 1_700_000_000
        for i, b in enumerate(sorted(batches)):
            path = os.path.join(directory, f"batch_{i:06d}.json")
            with open(path, "w", encoding="utf-8") as f:
                for row in batches[b]:
                    f.write(json.dumps(row) + "\n")
            # The file source orders files by modification time.
            os.utime(path, (base + 10 * i, base + 10 * i))
        self.directory = directory
        self.batch_count = len(batches)


def group_flows(scenarios):
    groups = OrderedDict()
    for s in scenarios:
        groups.setdefault(s.signature(), []).append(s)
    return [Flow(i, g) for i, g in enumerate(groups.values())]


def start_spark(jar, work, confs):
    """Starts Spark with a Spark Connect server on a free loopback port and
    returns a Connect session on it (the pipelines API needs Connect).

    pyspark's own local Connect mode binds every interface on the fixed port
    15002, so two oracles at once would collide: this starts the server the
    way that mode does, bound to 127.0.0.1, on a port the system picks, with
    a token.
    """
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    token = str(uuid.uuid4())
    os.environ["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = token
    conf = SparkConf(loadDefaults=False).setMaster("local[2]").setAppName("scd2-oracle")
    conf.setAll(
        [
            ("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin"),
            ("spark.connect.grpc.binding.address", "127.0.0.1"),
            ("spark.connect.grpc.binding.port", "0"),
            ("spark.connect.authenticate.token", token),
            ("spark.jars", jar),
            (
                f"spark.sql.catalog.{CATALOG}",
                "org.apache.spark.sql.connector.catalog.SharedTablesInMemoryRowLevelOperationTableCatalog",
            ),
            ("spark.ui.enabled", "false"),
            ("spark.ui.showConsoleProgress", "false"),
            ("spark.sql.shuffle.partitions", "1"),
            ("spark.default.parallelism", "1"),
            ("spark.sql.warehouse.dir", os.path.join(work, "warehouse")),
            ("spark.driver.host", "127.0.0.1"),
            ("spark.driver.bindAddress", "127.0.0.1"),
        ]
    )
    for kv in confs:
        k, _, v = kv.partition("=")
        conf.set(k, v)
    classic = SparkSession(SparkContext.getOrCreate(conf))
    service = getattr(classic._jvm, "org.apache.spark.sql.connect.service.SparkConnectService$")
    port = getattr(service, "MODULE$").localPort()
    return ConnectSession.builder.remote(f"sc://localhost:{port}").getOrCreate(), classic


def run_pipeline(spark, flows, storage):
    from pyspark import pipelines as dp
    from pyspark.pipelines.graph_element_registry import graph_element_registration_context
    from pyspark.pipelines.spark_connect_graph_element_registry import SparkConnectGraphElementRegistry
    from pyspark.pipelines.spark_connect_pipeline import create_dataflow_graph, handle_pipeline_events, start_run

    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{NAMESPACE}")
    graph = create_dataflow_graph(spark, default_catalog=CATALOG, default_database=NAMESPACE, sql_conf={})
    registry = SparkConnectGraphElementRegistry(spark, graph)
    with graph_element_registration_context(registry):
        for flow in flows:
            register_flow(spark, dp, flow)
    events = start_run(
        spark, graph, full_refresh=None, full_refresh_all=False, refresh=None, dry=False, storage=storage
    )
    # handle_pipeline_events prints the flows' progress; keep stdout for rows.
    saved, sys.stdout = sys.stdout, sys.stderr
    try:
        handle_pipeline_events(events)
    finally:
        sys.stdout = saved


def register_flow(spark, dp, flow):
    schema = flow.ddl_schema()
    pattern = "file://" + os.path.join(flow.directory, "*.json")

    @dp.temporary_view(name=flow.view)
    def changes():
        return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(pattern)

    dp.create_streaming_table(flow.target)
    dp.create_auto_cdc_flow(
        target=flow.target,
        source=flow.view,
        keys=[SCENARIO_COL] + flow.key_cols,
        sequence_by=SEQ_COL,
        apply_as_deletes=f"{OP_COL} = 'd'",
        except_column_list=[OP_COL, SEQ_COL],
        stored_as_scd_type=2,
        track_history_column_list=flow.track or None,
        track_history_except_column_list=flow.track_except or None,
    )


def jvm_cpu_seconds(classic):
    """The CPU time of Spark's JVM so far, or None where /proc cannot say.

    On a shared machine CPU time says more about the oracle's cost than wall
    time does.
    """
    try:
        pid = classic.sparkContext._gateway.proc.pid
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # utime and stime are fields 14 and 15 of stat(5); fields[0] is field 3.
        return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 1)
    except (AttributeError, OSError, IndexError, ValueError):
        return None


def count_microbatches(storage):
    """Counts the committed microbatches under the pipeline's checkpoints."""
    counts = {}
    for root, dirs, files in os.walk(storage):
        if os.path.basename(root) == "commits":
            counts[os.path.dirname(root)] = len([f for f in files if f.isdigit()])
    return counts


def read_history(spark, flow):
    spark.sql(f"REFRESH TABLE {flow.target}")
    cols = [SCENARIO_COL] + list(flow.types) + [START_AT, END_AT]
    out = []
    for r in spark.table(flow.target).select(*[f"`{c}`" for c in cols]).collect():
        d = r.asDict()
        row = {SCENARIO_COL: d.pop(SCENARIO_COL)}
        row.update(d)
        out.append(row)
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("events")
    p.add_argument("--jar", required=True, help="Spark's catalyst test jar (the in-memory catalog)")
    p.add_argument("--work", required=True, help="an empty directory for the pipeline's files")
    p.add_argument("--scenarios", help="JSON object: scenario name -> options")
    p.add_argument("--stats", help="file to write timings and microbatch counts to")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark option")
    args = p.parse_args(argv)

    try:
        events = read_events(args.events)
        options = {}
        if args.scenarios:
            with open(args.scenarios, encoding="utf-8") as f:
                options = json.load(f)
        by_scenario = OrderedDict()
        for e in events:
            by_scenario.setdefault(e.get("scenario", ""), []).append(e)
        unknown = set(options) - set(by_scenario)
        if unknown:
            raise OracleError(f"options for scenarios without events: {sorted(unknown)}")
        scenarios = [Scenario(n, evs, options.get(n, {})) for n, evs in by_scenario.items()]
        if not scenarios:
            raise OracleError(f"{args.events}: no events")
        flows = group_flows(scenarios)
        for flow in flows:
            flow.write_batches(os.path.join(args.work, "changes"))
    except OracleError as e:
        print(f"scd2_oracle: {e}", file=sys.stderr)
        return 2

    t0 = time.monotonic()
    spark, classic = start_spark(args.jar, args.work, args.conf)
    t1 = time.monotonic()
    storage = os.path.join(args.work, "storage")
    try:
        run_pipeline(spark, flows, "file://" + storage)
        t2 = time.monotonic()
        rows = []
        keys = {s.name: s.key_cols for s in scenarios}
        for flow in flows:
            rows.extend(read_history(spark, flow))
        version = spark.version
        cpu = jvm_cpu_seconds(classic)
    finally:
        spark.stop()
        classic.stop()

    for r in sorted(rows, key=lambda r: (r[SCENARIO_COL], key_id({c: r[c] for c in keys[r[SCENARIO_COL]]}), r[START_AT])):
        print(json.dumps(r))

    batches = count_microbatches(storage)
    if args.stats:
        with open(args.stats, "w", encoding="utf-8") as f:
            json.dump(
                {
                    "spark_version": version,
                    "session_seconds": round(t1 - t0, 3),
                    "run_seconds": round(t2 - t1, 3),
                    "jvm_cpu_seconds": cpu,
                    "flows": [
                        {"scenarios": [s.name for s in fl.scenarios], "batches": fl.batch_count} for fl in flows
                    ],
                    "microbatches": sorted(batches.values()),
                },
                f,
            )
    want = sorted(fl.batch_count for fl in flows)
    # Each flow's checkpoint commits one entry per microbatch; a flow whose
    # batches ran as fewer microbatches would not have tested batching.
    if sorted(batches.values()) != want:
        print(f"scd2_oracle: microbatches committed {sorted(batches.values())}, want {want}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
