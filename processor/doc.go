// Package processor runs the pipeline: a Kafka consumer group over Debezium
// topics feeding one pipeline per Delta table, each committing MERGE results
// (package merge) with the Kafka offsets in the same commit as txn actions
// (ADR 0020).
//
// # Shape (ADR 0026)
//
// The poll loop (processor.go, ingest.go) polls, decodes each partition's
// records in order (partitions in parallel) and appends them to their
// table's pending work (pending.go). It never waits for a table and never
// does table I/O: between polls it sets start offsets, pauses and resumes
// partitions (assign.go) and lets rebalances through (franz-go's
// BlockRebalanceOnPoll).
//
// Each table has a worker goroutine (worker.go): it opens the table
// (snapshot, key index), reads the txn of newly assigned partitions to find
// where they resume (their partitions stay paused until then), and applies
// and commits its batches one at a time, within hard record and byte caps.
// A slow, retrying or stopped table pauses only its own partitions. Group
// offsets are committed off the tables' paths, coalesced (committer.go).
//
// Errors (retry.go, tableerror.go): transient causes form an allowlist and
// are retried with one backoff; past Options.RetryBudget the table is
// reported stalled and keeps retrying. Anything else stops the table at once
// with a TableError naming the table, the cause and what to do. Decoding
// that waits for the schema registry holds that partition's records, paused,
// and retries them; it holds up nothing else. Bad input follows the table's
// Policy (deadletter.go); schema-level problems stop the table whatever the
// policy.
//
// Beside the pipeline, sharing only the tables, the on-disk contract
// (package cdctable) and the topic routing (package route): package
// controller keeps the control table, and package operator holds the
// operator's commands (skip a record, replay, lag).
//
// Health (health.go, kafkaerrors.go): /readyz fails, naming each cause,
// while Kafka is unreachable, a table is opening, stopped, stalled or waits
// for the registry, or the loop is stuck; /healthz fails when Run failed or
// the loop is stuck. Metrics are in metrics.go.
//
// Locks: Processor.mu guards tables, partitions and pending work; it is
// never held across I/O or a client call.
//
// The package carries no API-stability promise.
package processor
