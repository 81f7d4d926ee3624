"""Regenerates the delta-rs checkpoint fixtures in this folder.

Run: python3 -m venv /tmp/h5venv && /tmp/h5venv/bin/pip install deltalake==1.6.6 pyarrow
     /tmp/h5venv/bin/python make_fixtures.py
Only the _delta_log of each table is kept (checkpoint + JSON commits): the Go tests
compare the checkpoint's actions with the state the JSON commits describe.
"""
import datetime
import decimal
import os
import shutil
import tempfile

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

HERE = os.path.dirname(os.path.abspath(__file__))


def batch(start, n, part):
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "name": pa.array([f"name-{i}" if i % 3 else None for i in range(start, start + n)], pa.string()),
            "small": pa.array([i % 100 for i in range(start, start + n)], pa.int32()),
            "d": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=i) for i in range(start, start + n)], pa.date32()),
            "ts": pa.array(
                [datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=i, microseconds=123456) for i in range(start, start + n)],
                pa.timestamp("us", tz="UTC"),
            ),
            "ntz": pa.array([datetime.datetime(2024, 2, 1, 1, 2, 3) + datetime.timedelta(minutes=i) for i in range(start, start + n)], pa.timestamp("us")),
            "dec": pa.array([decimal.Decimal(i) / 100 for i in range(start, start + n)], pa.decimal128(10, 2)),
            "flt": pa.array([i * 0.5 for i in range(start, start + n)], pa.float64()),
            "ok": pa.array([i % 2 == 0 for i in range(start, start + n)], pa.bool_()),
            "s": pa.array([{"x": i, "y": f"y{i}"} for i in range(start, start + n)], pa.struct([("x", pa.int64()), ("y", pa.string())])),
            "p": pa.array([part] * n, pa.string()),
        }
    )


def make(name, config):
    tmp = tempfile.mkdtemp()
    uri = os.path.join(tmp, name)
    write_deltalake(uri, batch(0, 10, "a"), partition_by=["p"], configuration=config)
    write_deltalake(uri, batch(10, 10, None), mode="append", partition_by=["p"])
    write_deltalake(
        uri,
        batch(20, 10, "b c"),
        mode="append",
        partition_by=["p"],
        commit_properties=CommitProperties(app_transactions=[Transaction("kafka/orders/0", 42, 1712333988110)]),
    )
    dt = DeltaTable(uri)
    dt.delete("id = 3")
    dt = DeltaTable(uri)
    dt.create_checkpoint()
    out = os.path.join(HERE, name)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(os.path.join(uri, "_delta_log"), os.path.join(out, "_delta_log"))
    shutil.rmtree(tmp)


make("deltars-json-and-struct", {"delta.checkpoint.writeStatsAsStruct": "true"})
make("deltars-struct-only", {"delta.checkpoint.writeStatsAsStruct": "true", "delta.checkpoint.writeStatsAsJson": "false"})
make("deltars-json-only", None)
