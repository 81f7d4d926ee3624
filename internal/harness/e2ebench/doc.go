// Package e2ebench measures the whole pipeline against a real Kafka broker:
// Debezium Avro events (internal/dbzgen) are produced to the broker first,
// untimed, then a processor in a fresh consumer group consumes them into
// Delta tables on local disk while the package measures sustained events/s
// until caught up, peak memory, and where the CPU time goes (decode, merge,
// Parquet, commit, Kafka), taken from a CPU profile. A second, live phase
// produces at a fixed rate with each event's source commit time set to its
// produce time and measures source-commit-to-visible latency from the
// tables' commit timestamps.
//
// It is a benchmark helper: the integration-tagged Go benchmark and the
// bench harness (cmd/cdc2bench) call Run and write its Result as JSON.
package e2ebench
