"""bench_peers.py selftest: the peers, check and plot on small generated tables.

The data exercise every rule of the semantics: updates, inserts, deletes of
present and absent keys, chains of events on one key inside a batch (rows of
a batch are shuffled, so only _cdc_position orders them), and stale events
whose position is not newer than the stored row (they must change nothing).
A plain Python model applies the same rules; its result is written as a
Delta table too and must have the same checksum as every system's table.
"""

import datetime as dt
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import uuid

import bench_check

BASE_ROWS = 3000
STALE_KEYS = 20  # keys 1..20 carry a base position newer than every event
BATCHES = 3
STATUSES = ["new", "paid", "shipped", "cancelled", "returned"]
UTC = dt.timezone.utc
EPOCH = dt.datetime(2026, 1, 1, tzinfo=UTC)


def schema():
    import pyarrow as pa

    ts = pa.timestamp("us", tz="UTC")
    return pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        ("customer_id", pa.int64()), ("status", pa.string()), ("amount", pa.float64()),
        ("quantity", pa.int32()), ("note", pa.string()), ("updated_at", ts),
        ("_cdc_position", pa.string()), ("_cdc_op", pa.string()), ("_cdc_commit_time", ts),
    ])


def position(n):
    return "%020x" % n


class Generator:
    """Seeded rows and events; positions grow with every event."""

    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.pos = 10_000

    def values(self, key):
        r = self.rnd
        amount = r.choice([round(r.uniform(-50, 5000), 2), 0.1 + 0.2, -0.0, 1e300, None])
        return {
            "id": key,
            "customer_id": r.choice([r.randrange(1, 1 << 40), None]),
            "status": r.choice(STATUSES + [None]),
            "amount": amount,
            "quantity": r.choice([r.randrange(-(1 << 31), 1 << 31), 1, None]),
            "note": "".join(r.choice("abcdefghij klmnopqrstuvwxyz,é") for _ in range(40)),
            "updated_at": EPOCH + dt.timedelta(microseconds=r.randrange(0, 10**13)),
        }

    def event(self, key, op):
        self.pos += self.rnd.randrange(1, 5)
        row = dict.fromkeys(schema().names) if op == "d" else self.values(key)
        row["id"] = key
        row["_cdc_position"] = position(self.pos)
        row["_cdc_op"] = op
        row["_cdc_commit_time"] = EPOCH + dt.timedelta(seconds=self.pos)
        return row

    def base(self):
        rows = []
        for key in range(1, BASE_ROWS + 1):
            row = self.values(key)
            p = 10**15 if key <= STALE_KEYS else 1000 + key
            row.update(_cdc_position=position(p), _cdc_op="r",
                       _cdc_commit_time=EPOCH + dt.timedelta(seconds=p % 10**9))
            rows.append(row)
        return rows

    def batch(self, live, next_key):
        """About 800 events against the live key set; returns (events, next key)."""
        r = self.rnd
        events = []
        keys = sorted(live)
        for _ in range(300):  # plain updates of existing keys
            events.append(self.event(r.choice(keys), "u"))
        for _ in range(150):  # inserts of new keys
            events.append(self.event(next_key, "c"))
            next_key += 1
        for _ in range(60):  # deletes of existing keys
            events.append(self.event(r.choice(keys), "d"))
        for _ in range(20):  # deletes of keys that never existed
            events.append(self.event(10**9 + r.randrange(1000), "d"))
        for _ in range(30):  # stale events: the stored row is newer
            events.append(self.event(r.randrange(1, STALE_KEYS + 1), r.choice("ud")))
        for _ in range(40):  # chains on new keys: insert, updates, maybe delete
            k = next_key
            next_key += 1
            events.append(self.event(k, "c"))
            for _ in range(r.randrange(1, 3)):
                events.append(self.event(k, "u"))
            if r.random() < 0.5:
                events.append(self.event(k, "d"))
        for _ in range(40):  # chains on existing keys: updates then maybe delete
            k = r.choice(keys)
            for _ in range(r.randrange(1, 3)):
                events.append(self.event(k, "u"))
            if r.random() < 0.5:
                events.append(self.event(k, "d"))
            if r.random() < 0.3:  # and resurrect
                events.append(self.event(k, "c"))
        r.shuffle(events)
        return events, next_key


def apply_model(table, events):
    """cdc2delta's semantics on a dict key -> row, the reference for every system."""
    last = {}
    for e in events:
        if e["id"] not in last or e["_cdc_position"] > last[e["id"]]["_cdc_position"]:
            last[e["id"]] = e
    for key, e in last.items():
        have = table.get(key)
        if have is not None:
            if e["_cdc_position"] > have["_cdc_position"]:
                if e["_cdc_op"] == "d":
                    del table[key]
                else:
                    table[key] = e
        elif e["_cdc_op"] != "d":
            table[key] = e


def arrow(rows):
    import pyarrow as pa

    s = schema()
    return pa.Table.from_pylist(rows, schema=s)


def write_delta(path, rows, parts=3):
    """A legacy-protocol Delta table of rows in parts commits (several files)."""
    import deltalake

    step = (len(rows) + parts - 1) // parts
    for i in range(parts):
        chunk = rows[i * step:(i + 1) * step]
        deltalake.write_deltalake(path, arrow(chunk), mode="append")


class Failures:
    def __init__(self, log):
        self.log = log
        self.items = []

    def expect(self, ok, what):
        self.log(f"selftest: {'ok' if ok else 'FAILED'}: {what}")
        if not ok:
            self.items.append(what)


def unit_checks(fail, base_rows, events):
    """Checksum and dedup properties that need no Delta table."""
    import pyarrow as pa

    import bench_batches

    t = arrow(base_rows[:500])
    n, want = bench_check.checksum(t)
    fail.expect(n == 500, f"checksum counts rows ({n})")
    shuffled = t.take(pa.array(random.Random(1).sample(range(500), 500)))
    fail.expect(bench_check.checksum(shuffled)[1] == want, "checksum ignores row order")
    reordered = t.select(list(reversed(t.column_names)))
    fail.expect(bench_check.checksum(reordered)[1] == want, "checksum ignores column order")
    other_types = t.cast(pa.schema([
        pa.field(f.name, pa.large_string() if f.type == pa.string() else
                 pa.timestamp("us", tz="+00:00") if pa.types.is_timestamp(f.type) else f.type,
                 f.nullable)
        for f in t.schema
    ]))
    fail.expect(bench_check.checksum(other_types)[1] == want,
                "checksum ignores string/large_string and the UTC zone spelling")
    changed = [dict(r) for r in base_rows[:500]]
    changed[7]["amount"] = math.nextafter(changed[7]["amount"] or 1.0, math.inf)
    fail.expect(bench_check.checksum(arrow(changed))[1] != want,
                "checksum changes with the last bit of a double")
    nulled = [dict(r) for r in base_rows[:500]]
    nulled[3]["status"] = None if nulled[3]["status"] is not None else "new"
    fail.expect(bench_check.checksum(arrow(nulled))[1] != want, "checksum sees a null")
    dup = arrow(base_rows[:500] + base_rows[:1])
    fail.expect(bench_check.checksum(dup)[1] != want, "checksum counts duplicate rows")

    got = bench_batches.dedup(arrow(events)).to_pylist()
    last = {}
    for e in events:
        if e["id"] not in last or e["_cdc_position"] > last[e["id"]]["_cdc_position"]:
            last[e["id"]] = e
    fail.expect(sorted(r["_cdc_position"] for r in got)
                == sorted(e["_cdc_position"] for e in last.values()),
                f"dedup keeps the newest event of each of {len(last)} keys "
                f"(from {len(events)} events)")


def upload(local, bucket, prefix, endpoint):
    """Copy a local table directory to s3://bucket/prefix."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint)
    s3.create_bucket(Bucket=bucket)
    for root, _, files in os.walk(local):
        for f in files:
            full = os.path.join(root, f)
            s3.upload_file(full, bucket, prefix + "/" + os.path.relpath(full, local))
    return s3


def remove_bucket(s3, bucket):
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for o in page.get("Contents", []):
            s3.delete_object(Bucket=bucket, Key=o["Key"])
    s3.delete_bucket(Bucket=bucket)


def run_cli(script, args, log):
    cmd = [sys.executable, script] + args
    log("selftest: $ " + " ".join(cmd[1:]))
    return subprocess.run(cmd, stdin=subprocess.DEVNULL).returncode


def run(script, systems, s3_endpoint, keep, log):
    import pyarrow.parquet as pq

    known = {"deltars", "spark-dv", "spark-cow"}
    if set(systems) - known:
        raise SystemExit(f"selftest: unknown systems {sorted(set(systems) - known)}")
    s3_endpoint = s3_endpoint or os.environ.get("CDC2DELTA_S3_ENDPOINT")
    root = keep or tempfile.mkdtemp(prefix="bench-selftest-")
    if keep:
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
    fail = Failures(log)
    s3 = bucket = None
    try:
        gen = Generator(seed=6)
        base_rows = gen.base()
        model = {r["id"]: r for r in base_rows}
        batch_dir = os.path.join(root, "batches")
        os.makedirs(batch_dir)
        next_key = BASE_ROWS + 1
        all_events = []
        sizes = []  # model rows before each batch
        for i in range(1, BATCHES + 1):
            events, next_key = gen.batch(model, next_key)
            pq.write_table(arrow(events), os.path.join(batch_dir, "%06d.parquet" % i))
            sizes.append(len(model))
            apply_model(model, events)
            all_events.extend(events)

        unit_checks(fail, base_rows, all_events[:800])

        base = os.path.join(root, "base")
        write_delta(base, base_rows)
        expected = os.path.join(root, "expected")
        write_delta(expected, sorted(model.values(), key=lambda r: r["id"]))
        tables = [("expected", expected)]
        outputs = {}
        for system in systems:
            path = os.path.join(root, system, "table")
            shutil.copytree(base, path)
            out = os.path.join(root, system, "result.json")
            rc = run_cli(script, ["run", "--system", system, "--table", path,
                                  "--batches", batch_dir, "--out", out], log)
            fail.expect(rc == 0, f"run {system} exits 0 (got {rc})")
            if rc == 0:
                outputs[system] = check_result(fail, system, out, all_events)
                tables.append((system, path))
        if s3_endpoint and "deltars" in systems:
            bucket = "h28-bench-selftest-" + uuid.uuid4().hex[:8]
            s3 = upload(base, bucket, "table", s3_endpoint)
            uri = f"s3://{bucket}/table"
            out = os.path.join(root, "deltars-s3", "result.json")
            rc = run_cli(script, ["run", "--system", "deltars", "--table", uri, "--batches",
                                  batch_dir, "--out", out, "--s3-endpoint", s3_endpoint], log)
            fail.expect(rc == 0, f"run deltars on S3 exits 0 (got {rc})")
            if rc == 0:
                outputs["deltars-s3"] = check_result(fail, "deltars", out, all_events)
                tables.append(("deltars-s3", uri))

        check_out = os.path.join(root, "check.json")
        args = ["check", "--out", check_out, "--strict"]
        for name, path in tables:
            args += ["--table", f"{name}={path}"]
        if s3_endpoint:
            args += ["--s3-endpoint", s3_endpoint]
        rc = run_cli(script, args, log)
        with open(check_out) as f:
            checked = json.load(f)
        fail.expect(rc == 0 and checked["equal"],
                    f"check: every table equals the model ({bench_check.describe_mismatch(checked)})")
        fail.expect(checked["tables"]["expected"]["rows"] == len(model),
                    f"check counts the model's {len(model)} rows")
        fail.expect(all(r["read_seconds"] and r["read_seconds"] > 0
                        for r in checked["tables"].values() if not r["error"]),
                    "check reports read times")
        counts = {len(r["read_seconds_all"]) for r in checked["tables"].values() if not r["error"]}
        fail.expect(len(counts) == 1 and min(counts) >= bench_check.READS,
                    f"check times every table the same number of warm reads, at least {bench_check.READS} ({counts})")

        plot_results(fail, script, root, outputs, sizes, log)
    finally:
        if s3 is not None:
            try:
                remove_bucket(s3, bucket)
            except Exception as e:  # cleanup only; the verdict stands
                log(f"selftest: removing bucket {bucket}: {e}")
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    if fail.items:
        log(f"selftest: {len(fail.items)} FAILED: " + "; ".join(fail.items))
        return 1
    log("selftest: PASS")
    return 0


def check_result(fail, system, path, events):
    """The run's JSON follows the contract; returns it."""
    with open(path) as f:
        res = json.load(f)
    batches = res.get("batches") or []
    fail.expect(res.get("system") == system, f"{system}: result names the system")
    fail.expect([b.get("index") for b in batches] == list(range(1, BATCHES + 1)),
                f"{system}: result has batches 1..{BATCHES}")
    fail.expect(sum(b.get("rows", 0) for b in batches) == len(events),
                f"{system}: result counts {len(events)} events")
    fail.expect(all(isinstance(b.get("seconds"), float) and b["seconds"] > 0 for b in batches),
                f"{system}: every batch has a positive time")
    fail.expect(isinstance(res.get("setup_seconds"), float), f"{system}: setup_seconds")
    fail.expect(bool(res.get("versions", {}).get("deltalake")), f"{system}: versions recorded")
    return res


def plot_results(fail, script, root, outputs, sizes, log):
    """Plot the runs as the orchestrator would and check the PNG files."""
    if not outputs:
        return
    systems = []
    for name, res in outputs.items():
        batches = [dict(b, table_rows_before=sizes[b["index"] - 1]) for b in res["batches"]]
        systems.append({"system": name, "batches": batches})
    results = os.path.join(root, "results.json")
    with open(results, "w") as f:
        json.dump({"workloads": [{"name": "selftest mixed", "systems": systems},
                                 {"name": "empty", "systems": []}]}, f)
    out = os.path.join(root, "plots")
    rc = run_cli(script, ["plot", "--results", results, "--out", out], log)
    png = os.path.join(out, "selftest_mixed.png")
    ok = rc == 0 and os.path.exists(png)
    if ok:
        with open(png, "rb") as f:
            head = f.read(8)
        ok = head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 5000
    fail.expect(ok, "plot writes a PNG per workload with data")
    fail.expect(sorted(os.listdir(out)) == ["selftest_mixed.png"] if os.path.isdir(out) else False,
                "plot skips a workload without data")
