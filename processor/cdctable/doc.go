// Package cdctable is the contract of a Delta table that cdc2delta
// maintains: what such a table is on disk, whichever process reads or
// writes it. It names the source partitions whose offsets the table records
// (TopicPartition, AppID), the metadata columns and table properties
// (names.go), where a table keeps its key and metadata columns (Layout), the
// stored form of a row's key (AppendKey), the tombstone files of deleted
// keys, the commitInfo field recording what a commit applied (Progress), the
// tag naming the partitions whose rows a data file holds and which files
// each writer of a shared table may touch (FileOwners), and the rules of a
// manual UPDATE or DELETE (ManualEdits). A position is stored in the forms of
// codecs.Position: Hex in the ColPosition column and tombstone lines.
//
// The MERGE engine (processor/merge) writes tables by this contract; the
// processor, the operator commands, manual UPDATE and DELETE and the readers
// of a table's progress read them by it, without the engine. The package
// knows Delta (deltalog) and decoded values (codecs), nothing of Kafka
// clients.
//
// The package carries no API-stability promise.
package cdctable
