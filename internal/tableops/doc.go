// Package tableops runs the table maintenance operations Spark users know, without
// Spark: OPTIMIZE (compaction), VACUUM (deleting unreferenced files) and RESTORE (back
// to an earlier version, txn positions included); it also reconciles a table with an
// export by key, and reads a CSV or Parquet file's rows as a table's (FileRows).
//
// Each operation is a function over a [deltalog.Table] and a snapshot, configured by an
// options struct and answering with a typed result, as delta-rs keeps its operations
// apart from its kernel. The commitInfo each operation writes carries Spark's
// operationParameters and operationMetrics, names and values, so DESCRIBE HISTORY reads
// the same as for a table Spark maintains.
//
// It sits above deltalog and deltalog/datafile and below cmd (and, for automatic
// maintenance, the processor); it knows nothing of Kafka or of the key columns the
// processor records: callers pass the columns to order by. It carries no API-stability
// promise.
package tableops
