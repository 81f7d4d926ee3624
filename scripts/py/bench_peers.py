#!/usr/bin/env python3
"""The Python side of the cdc2delta benchmark (issue #6): the peer systems.

cmd/cdc2bench (the Go orchestrator) builds the tables and batches, runs each
system as a subprocess while sampling its process tree, and calls this script
for the peers, the final equality check and the plots. The contract between
the two is /work/notes/bench-contract.md, summarized here:

  run --system deltars|spark-dv|spark-cow --table DIR --batches DIR --out FILE.json
      [--s3-endpoint URL] [--s3-commit etag|unsafe-rename]
      Applies every batch file (DIR/*.parquet, in name order) to the Delta
      table with the peer's MERGE, timing dedup + MERGE + commit per batch.
      Writes {"system", "setup_seconds", "batches": [{"index", "rows",
      "seconds", "merge"}], "versions", "settings", "table_version"}.
      deltars also takes s3://bucket/path tables.

  check --table NAME=DIR ... --out FILE.json [--s3-endpoint URL]
      Per table: rows, order-independent row-set checksum, full-scan read
      time (delta-rs to pyarrow, median of 3). Writes {"tables": {NAME:
      {"rows", "checksum", "read_seconds", "error", ...}}, "equal", "groups",
      "failed", "versions"}. A table that cannot be read has an "error" and
      null figures. Exits 0 when the tables differ or fail to read (the
      orchestrator decides); --strict exits 1 then.

  plot --results results.json --out DIR
      One PNG per workload: per-batch time (log) against table size.

  selftest [--systems deltars,spark-dv,spark-cow] [--s3-endpoint URL] [--keep DIR]
      Builds small tables and batches, runs the systems and check and plot
      through this CLI, and compares every table with a Python model of the
      semantics. Exits non-zero on any mismatch.

Progress goes to stderr; the JSON files are the results.
"""

import argparse
import json
import os
import sys
import time


def log(msg):
    print(f"{time.strftime('%H:%M:%S')} bench_peers: {msg}", file=sys.stderr, flush=True)


def write_json(path, value):
    """Write value to path atomically, so a reader never sees half a file."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=1, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)


def cmd_run(args):
    if args.system == "deltars":
        import bench_deltars

        res = bench_deltars.run(args.table, args.batches, args.s3_endpoint, args.s3_commit, log)
    else:
        import bench_spark

        res = bench_spark.run(args.system, args.table, args.batches, log)
    write_json(args.out, res)
    total = sum(b["seconds"] for b in res["batches"])
    rows = sum(b["rows"] for b in res["batches"])
    log(f"{args.system}: {len(res['batches'])} batches, {rows} events, {total:.2f}s "
        f"({rows / total if total else 0:.0f} events/s)")
    return 0


def parse_tables(specs):
    tables = []
    for spec in specs:
        name, sep, uri = spec.partition("=")
        if not sep or not name or not uri:
            raise SystemExit(f"bench_peers: --table wants NAME=DIR, got {spec!r}")
        tables.append((name, uri))
    names = [n for n, _ in tables]
    if len(set(names)) != len(names):
        raise SystemExit(f"bench_peers: duplicate table names in {names}")
    return tables


def cmd_check(args):
    import bench_batches
    import bench_check

    res = bench_check.check(parse_tables(args.table), args.s3_endpoint)
    res["versions"] = bench_batches.versions()
    write_json(args.out, res)
    for name, r in res["tables"].items():
        if r["error"]:
            log(f"check: {name}: ERROR {r['error']}")
        else:
            log(f"check: {name}: {r['rows']} rows, checksum {r['checksum']}, "
                f"read {r['read_seconds']:.3f}s")
    if not res["equal"]:
        log(f"check: TABLES DIFFER: {bench_check.describe_mismatch(res)}")
        return 1 if args.strict else 0
    return 0


def cmd_plot(args):
    import bench_plot

    with open(args.results) as f:
        results = json.load(f)
    written = bench_plot.plot(results, args.out)
    log(f"plot: wrote {len(written)} PNG files to {args.out}")
    return 0


def cmd_selftest(args):
    import bench_selftest

    systems = [s for s in args.systems.split(",") if s]
    return bench_selftest.run(os.path.abspath(__file__), systems, args.s3_endpoint, args.keep, log)


def parser():
    p = argparse.ArgumentParser(prog="bench_peers.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="apply the batches with a peer system")
    r.add_argument("--system", required=True, choices=["deltars", "spark-dv", "spark-cow"])
    r.add_argument("--table", required=True, help="Delta table directory (or s3://, deltars)")
    r.add_argument("--batches", required=True, help="directory of batch Parquet files")
    r.add_argument("--out", required=True, help="result JSON file")
    r.add_argument("--s3-endpoint", help="S3 endpoint URL (default $CDC2DELTA_S3_ENDPOINT)")
    r.add_argument("--s3-commit", default="etag", choices=["etag", "unsafe-rename"],
                   help="delta-rs commit on S3: conditional put or unsafe rename")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("check", help="row counts, checksums and read times of tables")
    c.add_argument("--table", required=True, action="append", metavar="NAME=DIR")
    c.add_argument("--out", required=True)
    c.add_argument("--s3-endpoint")
    c.add_argument("--strict", action="store_true", help="exit 1 when the tables differ or fail to read")
    c.set_defaults(func=cmd_check)

    g = sub.add_parser("plot", help="PNG per workload from results.json")
    g.add_argument("--results", required=True)
    g.add_argument("--out", required=True, help="directory for the PNG files")
    g.set_defaults(func=cmd_plot)

    s = sub.add_parser("selftest", help="run the peers on small generated tables")
    s.add_argument("--systems", default="deltars,spark-dv,spark-cow")
    s.add_argument("--s3-endpoint", help="also run deltars on this S3 endpoint "
                   "(default $CDC2DELTA_S3_ENDPOINT if set)")
    s.add_argument("--keep", help="build in this directory and keep it")
    s.set_defaults(func=cmd_selftest)
    return p


def main(argv):
    os.environ["TZ"] = "UTC"
    time.tzset()
    args = parser().parse_args(argv[1:])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
