"""Row-set checksums and full-scan read times of Delta tables (bench_peers.py check).

The benchmark ends by comparing the tables every system produced. Two tables
are equal when they hold the same multiset of rows; row order, file layout,
deletion vectors and physical Arrow types (string vs large_string, the
timestamp zone spelling) do not matter.

checksum: every row is rendered canonically (columns by name; integers as
BIGINT, floating point as its shortest round-trip text, timestamps as UTC
epoch microseconds, strings as they are) and hashed to 64 bits with DuckDB's
hash(); the checksum is the sum of the row hashes mod 2^64, so it does not
depend on order and duplicates count. DuckDB's hash is only stable within
one DuckDB release, so compare checksums from the same run only.
"""

import statistics
import time

import bench_storage

READS = 3  # timed full scans per table at least; the median is reported
MAX_READS = 15  # small tables get more scans, for a steadier median
READ_BUDGET = 1.0  # seconds of scanning per table that decide how many


def read_table(uri, s3_endpoint=None):
    """Open the Delta table at uri and scan it fully into a pyarrow Table.

    The scan goes through delta-rs' DataFusion QueryBuilder because
    DeltaTable.to_pyarrow_table refuses tables with deletion vectors. Opening
    (log replay) is part of the read, as it is for any reader of the table:
    a table with many small commits pays for them here.
    """
    import deltalake
    import pyarrow as pa

    opts = bench_storage.options(uri, s3_endpoint)
    table = deltalake.DeltaTable(bench_storage.deltars_uri(uri), storage_options=opts)
    data = pa.table(deltalake.QueryBuilder().register("t", table).execute("SELECT * FROM t"))
    return table.version(), data


def canonical_sql(schema):
    """The DuckDB expressions rendering each column of schema canonically."""
    import pyarrow as pa

    exprs = []
    for field in sorted(schema, key=lambda f: f.name):
        col = '"' + field.name.replace('"', '""') + '"'
        t = field.type
        if pa.types.is_integer(t):
            exprs.append(f"CAST({col} AS BIGINT)")
        elif pa.types.is_floating(t):
            exprs.append(f"CAST(CAST({col} AS DOUBLE) AS VARCHAR)")
        elif pa.types.is_timestamp(t):
            exprs.append(f"epoch_us({col})")
        else:  # strings of any Arrow layout, and anything else, as text
            exprs.append(f"CAST({col} AS VARCHAR)")
    return exprs


def checksum(data):
    """(rows, checksum as 16 hex digits) of the pyarrow Table data."""
    import duckdb

    if data.num_columns == 0:
        return data.num_rows, "%016x" % 0
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.register("rows_in", data)
        row_hash = "hash(" + ", ".join(canonical_sql(data.schema)) + ")"
        n, total = con.execute(
            f"SELECT count(*), coalesce(sum({row_hash}::HUGEINT) % 18446744073709551616, 0) "
            "FROM rows_in"
        ).fetchone()
    finally:
        con.close()
    return int(n), "%016x" % int(total)


def new_result(name, uri):
    """A table's check result before any read."""
    return {"name": name, "path": uri, "version": None, "rows": None, "checksum": None,
            "read_seconds": None, "read_seconds_all": [], "error": None}


def check(tables, s3_endpoint=None):
    """Check every (name, uri) pair and say whether all tables are equal.

    Every table is read once untimed first (that read gives the checksum),
    then READS to MAX_READS timed rounds (more when every table is fast) read
    the tables in turn, each round in the opposite order of the one before.
    So no table pays for the process's first read (imports, thread pools, a
    cold page cache) or sits always first or last: a timing compares tables,
    not their places in the list.
    """
    results = {name: new_result(name, uri) for name, uri in tables}

    def read(name, uri):
        """Scan one table; the seconds it took, or None after an error."""
        r = results[name]
        if r["error"] is not None:
            return None
        try:
            start = time.perf_counter()
            r["version"], data = read_table(uri, s3_endpoint)
            elapsed = time.perf_counter() - start
            if r["checksum"] is None:
                r["rows"], r["checksum"] = checksum(data)
            return elapsed
        except Exception as e:  # reported per table; the orchestrator fails the run
            r["error"] = f"{type(e).__name__}: {e}"
            return None

    order = list(tables)
    for name, uri in order:
        read(name, uri)
    rounds, rnd = READS, 0
    while rnd < rounds:
        order.reverse()
        times = []
        for name, uri in order:
            t = read(name, uri)
            if t is not None:
                results[name]["read_seconds_all"].append(t)
                times.append(t)
        if rnd == 0:  # the slowest warm table sets the count, so big tables stay at READS
            rounds = max(READS, min(MAX_READS, int(READ_BUDGET / max(max(times, default=0.0), 1e-3))))
        rnd += 1
    for r in results.values():
        if r["error"] is None:
            r["read_seconds"] = statistics.median(r["read_seconds_all"])
    sums = {}
    for name, r in results.items():
        if r["error"] is None:
            sums.setdefault((r["rows"], r["checksum"]), []).append(name)
    failed = sorted(n for n, r in results.items() if r["error"] is not None)
    groups = sorted(sorted(v) for v in sums.values())
    return {
        "tables": results,
        "equal": not failed and len(groups) <= 1,
        "groups": groups,  # tables with the same rows and checksum
        "failed": failed,
    }


def describe_mismatch(result):
    """A one-line account of which tables differ, for error messages."""
    parts = []
    for group in result["groups"]:
        r = result["tables"][group[0]]
        parts.append(f"{'+'.join(group)}: {r['rows']} rows, checksum {r['checksum']}")
    for name in result["failed"]:
        parts.append(f"{name}: {result['tables'][name]['error']}")
    return "; ".join(parts)

