"""The delta-rs (Python deltalake) runner of the benchmark.

Each batch is deduplicated and merged with one MERGE whose clauses reproduce
cdc2delta's semantics: a newer delete removes the row, a newer other event
replaces it, an unknown key is inserted unless the event is a delete, and an
event not newer than the stored row changes nothing.

streamed_exec=False: the source is in memory anyway, and only a
materialized source lets delta-rs derive an early pruning predicate from the
source's key range (it skips files outside [min id, max id]); that is
delta-rs' fastest setting for these batches.
"""

import time

import bench_batches
import bench_storage

MERGE_PREDICATE = "t.id = s.id"
NEWER = "s._cdc_position > t._cdc_position"
DELETE_WHEN = f"s._cdc_op = 'd' AND {NEWER}"
UPDATE_WHEN = f"s._cdc_op <> 'd' AND {NEWER}"
INSERT_WHEN = "s._cdc_op <> 'd'"


def run(table_uri, batches_dir, s3_endpoint=None, s3_commit="etag", log=None):
    """Apply every batch to the table; the result dict of the contract."""
    import deltalake

    setup_start = time.perf_counter()
    opts = bench_storage.options(table_uri, s3_endpoint, s3_commit)
    table = deltalake.DeltaTable(bench_storage.deltars_uri(table_uri), storage_options=opts)
    files = bench_batches.batch_files(batches_dir)
    batches = [bench_batches.read_batch(f) for f in files]
    setup = time.perf_counter() - setup_start

    results = []
    for i, batch in enumerate(batches, 1):
        start = time.perf_counter()
        source = bench_batches.dedup(batch)
        metrics = (
            table.merge(
                source=source,
                predicate=MERGE_PREDICATE,
                source_alias="s",
                target_alias="t",
                streamed_exec=False,
            )
            .when_matched_delete(predicate=DELETE_WHEN)
            .when_matched_update_all(predicate=UPDATE_WHEN)
            .when_not_matched_insert_all(predicate=INSERT_WHEN)
            .execute()
        )
        took = time.perf_counter() - start
        results.append({
            "index": i,
            "rows": batch.num_rows,
            "seconds": took,
            "merge": {
                "source_rows": source.num_rows,
                "inserted": metrics.get("num_target_rows_inserted"),
                "updated": metrics.get("num_target_rows_updated"),
                "deleted": metrics.get("num_target_rows_deleted"),
                "files_added": metrics.get("num_target_files_added"),
                "files_removed": metrics.get("num_target_files_removed"),
            },
        })
        if log:
            log(f"deltars: batch {i}/{len(batches)}: {batch.num_rows} events in {took:.3f}s")
        batches[i - 1] = None  # applied; let it go

    settings = {"streamed_exec": False, "dedup": "pyarrow sort + last per key"}
    if opts:
        settings["s3_commit"] = s3_commit
    return {
        "system": "deltars",
        "setup_seconds": setup,
        "batches": results,
        "versions": bench_batches.versions(),
        "settings": settings,
        "table_version": table.version(),
    }
