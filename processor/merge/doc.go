// Package merge is the MERGE engine: it applies micro-batches of decoded
// Debezium changes to one Delta table, exactly once.
//
// A Sink owns one table. Apply groups a Batch by key in source order, folds
// each key's events into one effect (ADR 0025), plans it against the key
// index (key → file, row, position),
// marks replaced rows in deletion vectors or rewrites their files, writes
// the new rows, change data feed files and delete tombstones, and commits
// all of it with one txn action per source partition (ADR 0020, 0023). The
// engine knows Delta and the decoded changes of package codecs; it knows
// nothing of Kafka clients, consumer groups or Avro. What a table is on
// disk — its columns and properties, key encoding, tombstone file format,
// the progress a commit records — is package cdctable's contract.
//
// Files: sink.go (Sink, Options, Batch, Result), merge.go (planning and
// writing one batch), dedup.go (in-batch order), fold.go (a key's chain of
// events), keyindex*.go and keytable.go (the key index), tombstones*.go
// (ADR 0022), cdf.go (ADR 0024), partition.go (partitioned tables),
// tableschema.go (typed tables and schema evolution), state.go (what a Sink
// knows between batches). The oracle (oracle_test.go) compares the engine
// with internal/harness/cdcmodel.
//
// The package carries no API-stability promise.
package merge
