"""Regenerates the Spark checkpoint fixtures in this folder (only each table's _delta_log).

Run with the full tier's venv (pyspark + delta-spark; jars come from Maven through ivy):
    ~/.cache/cdc2delta/venv/bin/python make_spark_fixtures.py

Tables:
  spark-dv-cm: column mapping (name), deletion vectors, partitioned, stats_parsed and
               partitionValues_parsed (Spark's writeStatsAsStruct default), a txn, and a
               classic checkpoint written after a DELETE that produced DVs.
  spark-v2-json / spark-v2-parquet: delta.checkpointPolicy=v2, a UUID-named top-level
               checkpoint (JSON or Parquet) with sidecars in _delta_log/_sidecars.
"""
import os
import shutil
import tempfile

from delta import pip_utils
from pyspark.sql import SparkSession

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("CDC2DELTA_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "cdc2delta"))

tmp = tempfile.mkdtemp(prefix="h5-spark-")
builder = (
    SparkSession.builder.master("local[2]")
    .appName("cdc2delta-checkpoint-fixtures")
    .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    .config("spark.jars.ivy", os.path.join(CACHE, "ivy"))
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.default.parallelism", "2")
    .config("spark.databricks.delta.snapshotPartitions", "2")
    .config("spark.driver.memory", "1g")
    .config("spark.local.dir", tmp)
    .config("spark.sql.warehouse.dir", os.path.join(tmp, "warehouse"))
)
spark = pip_utils.configure_spark_with_delta_pip(builder).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")


def keep_log(path, name):
    out = os.path.join(HERE, name)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(os.path.join(path, "_delta_log"), os.path.join(out, "_delta_log"),
                    ignore=shutil.ignore_patterns("*.crc", ".*"))


def rows(start, n, part):
    return ", ".join(
        f"(CAST({i} AS BIGINT), CAST({i}.25 AS DECIMAL(10,2)), TIMESTAMP'2024-01-01 00:00:00' + make_interval(0,0,0,0,0,0,{i}.5), "
        f"TIMESTAMP_NTZ'2024-02-01 01:02:03' + make_interval(0,0,0,0,0,{i},0), DATE'2024-01-01' + {i}, "
        f"named_struct('x', CAST({i} AS BIGINT), 'y', 'y{i}'), {'NULL' if part is None else repr(part)})"
        for i in range(start, start + n)
    )


# Column mapping, DVs, partitions, txn, classic checkpoint.
p = os.path.join(tmp, "dvcm")
spark.sql(f"""CREATE TABLE delta.`{p}` (id BIGINT, `Unit Price` DECIMAL(10,2), ts TIMESTAMP, ntz TIMESTAMP_NTZ,
  d DATE, s STRUCT<x: BIGINT, y: STRING>, p STRING) USING delta PARTITIONED BY (p)
  TBLPROPERTIES ('delta.columnMapping.mode'='name', 'delta.enableDeletionVectors'='true',
  'delta.checkpointInterval'='4')""")
spark.sql(f"INSERT INTO delta.`{p}` VALUES {rows(0, 10, 'a')}")
spark.sql(f"INSERT INTO delta.`{p}` VALUES {rows(10, 10, None)}")
spark.sql(f"SELECT * FROM VALUES {rows(20, 5, 'b c')} AS t(id, `Unit Price`, ts, ntz, d, s, p)") \
    .write.format("delta").mode("append").option("txnAppId", "kafka/orders/0").option("txnVersion", 42).save(p)
# Version 4: the DELETE writes DVs, and checkpointInterval=4 makes Spark checkpoint it.
spark.sql(f"DELETE FROM delta.`{p}` WHERE id IN (3, 4, 12)")
keep_log(p, "spark-dv-cm")

# V2 checkpoints with sidecars, JSON and Parquet top-level files.
for fmt in ["json", "parquet"]:
    spark.conf.set("spark.databricks.delta.checkpointV2.topLevelFileFormat", fmt)
    p = os.path.join(tmp, "v2" + fmt)
    spark.sql(f"""CREATE TABLE delta.`{p}` (id BIGINT, p STRING) USING delta PARTITIONED BY (p)
      TBLPROPERTIES ('delta.checkpointPolicy'='v2', 'delta.checkpointInterval'='4')""")
    for i in range(3):
        spark.sql(f"INSERT INTO delta.`{p}` VALUES ({i}, 'x'), ({i + 100}, NULL)")
    spark.sql(f"DELETE FROM delta.`{p}` WHERE id = 1")  # version 4, checkpointed
    keep_log(p, "spark-v2-" + fmt)

spark.stop()
shutil.rmtree(tmp, ignore_errors=True)
