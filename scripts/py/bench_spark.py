"""The Spark (delta-spark) runners of the benchmark: spark-dv and spark-cow.

One SparkSession per run, local[2], driver memory 2g, 2 shuffle partitions.
Each batch is read and cached (untimed); the timed part deduplicates with a
window (row_number over the key by descending position) and runs one MERGE
INTO with cdc2delta's semantics. spark-dv turns deletion vectors on (so MERGE
marks rows deleted instead of rewriting files); spark-cow turns them off.
Setting the property is untimed setup, and skipped when it already holds.
"""

import importlib.metadata
import os
import re
import shutil
import tempfile
import time

import bench_batches
import bench_storage
import deltaread

DRIVER_MEMORY = "2g"

SETTINGS = {
    "spark.master": "local[2]",
    "spark.driver.memory": DRIVER_MEMORY,
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    # Delta rebuilds snapshot state with 50 tasks by default; 2 cores.
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # A loaded 2-core box can stall the local executor's heartbeat past the
    # defaults (10s / 120s); a lost heartbeat would fail the run, not time it.
    "spark.executor.heartbeatInterval": "60s",
    "spark.network.timeout": "600s",
}

MERGE_SQL = """
MERGE INTO delta.`{path}` t
USING bench_src s
ON t.id = s.id
WHEN MATCHED AND s._cdc_op = 'd' AND s._cdc_position > t._cdc_position THEN DELETE
WHEN MATCHED AND s._cdc_position > t._cdc_position THEN UPDATE SET *
WHEN NOT MATCHED AND s._cdc_op <> 'd' THEN INSERT *
"""

SYSTEMS = {"spark-dv": "true", "spark-cow": "false"}


class Session:
    """A local SparkSession with delta-spark, set up like scripts/py/deltaread.py."""

    def __init__(self):
        import pyspark
        from pyspark.sql import SparkSession

        self.tmp = tempfile.mkdtemp(prefix="bench-spark-")
        log4j = os.path.join(self.tmp, "log4j2.properties")
        with open(log4j, "w") as f:
            f.write(deltaread.SPARK_LOG4J)
        cache = os.environ.get(
            "CDC2DELTA_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "cdc2delta")
        )
        builder = SparkSession.builder.appName("cdc2delta-bench")
        for k, v in SETTINGS.items():
            builder = builder.config(k, v) if k != "spark.master" else builder.master(v)
        builder = (
            builder.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog",
                    "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .config("spark.jars.ivy", os.path.join(cache, "ivy"))
            .config("spark.local.dir", self.tmp)
            .config("spark.sql.warehouse.dir", os.path.join(self.tmp, "warehouse"))
            .config("spark.driver.extraJavaOptions",
                    f"-Dlog4j2.configurationFile=file:{log4j} -Dderby.system.home={self.tmp}")
        )
        spark_minor = ".".join(pyspark.__version__.split(".")[:2])
        packages = (f"io.delta:delta-spark_{spark_minor}_2.13:"
                    f"{importlib.metadata.version('delta-spark')}")
        # deltaread.py caches the jar list Ivy resolved; reuse it when present.
        resolved = os.path.join(cache, "ivy", "resolved-" + re.sub(r"[^\w.-]", "_", packages))
        jars = deltaread.read_jar_list(resolved)
        if jars:
            builder = builder.config("spark.jars", jars)
        else:
            builder = builder.config("spark.jars.packages", packages)
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")

    def java_version(self):
        return str(self.spark.sparkContext._jvm.System.getProperty("java.version"))

    def close(self):
        try:
            self.spark.stop()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


def table_property(spark, path, key):
    row = spark.sql(f"DESCRIBE DETAIL delta.`{path}`").collect()[0]
    return (row["properties"] or {}).get(key)


def set_deletion_vectors(spark, path, want):
    """Set delta.enableDeletionVectors to want ('true'/'false') unless it already is.

    A table without the property has deletion vectors off.
    """
    have = table_property(spark, path, "delta.enableDeletionVectors") or "false"
    if have.lower() == want:
        return False
    spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES "
              f"('delta.enableDeletionVectors' = '{want}')")
    return True


def run(system, table_path, batches_dir, log=None):
    """Apply every batch with Spark; the result dict of the contract."""
    if system not in SYSTEMS:
        raise ValueError(f"unknown Spark system {system!r}; want one of {sorted(SYSTEMS)}")
    if bench_storage.is_s3(table_path):
        raise ValueError("spark: S3 is not set up (hadoop-aws is not installed)")
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    path = os.path.abspath(table_path)
    files = bench_batches.batch_files(batches_dir)
    setup_start = time.perf_counter()
    session = Session()
    try:
        spark = session.spark
        altered = set_deletion_vectors(spark, path, SYSTEMS[system])
        setup = time.perf_counter() - setup_start
        by_position = Window.partitionBy("id").orderBy(F.col("_cdc_position").desc())
        results = []
        for i, f in enumerate(files, 1):
            batch = spark.read.parquet(os.path.abspath(f)).cache()
            n = batch.count()  # materializes the cache before the timer
            start = time.perf_counter()
            src = (batch.withColumn("_bench_rn", F.row_number().over(by_position))
                   .where("_bench_rn = 1").drop("_bench_rn"))
            src.createOrReplaceTempView("bench_src")
            out = spark.sql(MERGE_SQL.format(path=path.replace("`", "``")))
            took = time.perf_counter() - start
            results.append({"index": i, "rows": n, "seconds": took, "merge": merge_metrics(out)})
            batch.unpersist()
            if log:
                log(f"{system}: batch {i}/{len(files)}: {n} events in {took:.3f}s")
        vers = bench_batches.versions()
        vers["java"] = session.java_version()
        version = spark.sql(f"DESCRIBE HISTORY delta.`{path}` LIMIT 1").collect()[0]["version"]
        return {
            "system": system,
            "setup_seconds": setup,
            "batches": results,
            "versions": vers,
            "settings": dict(SETTINGS, **{
                "delta.enableDeletionVectors": SYSTEMS[system],
                "property_altered": altered,
                "dedup": "row_number() over (partition by id order by _cdc_position desc) = 1",
            }),
            "table_version": int(version),
        }
    finally:
        session.close()


def merge_metrics(out):
    """MERGE INTO's result row (affected, updated, deleted, inserted row counts)."""
    rows = out.collect()
    if not rows:
        return {}
    r = rows[0].asDict()
    return {
        "updated": r.get("num_updated_rows"),
        "deleted": r.get("num_deleted_rows"),
        "inserted": r.get("num_inserted_rows"),
    }
