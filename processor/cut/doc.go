// Package cut says how far each source table's Delta table is complete: the
// position at or below which every change of the table has been applied.
// The least complete of a group of tables gives a consistent cut across
// them: read each table at a version complete through it and no transaction
// is seen in part (ADR 0029).
//
// A table is complete through X only when every partition of its topic is
// known to hold nothing unapplied at or below X: it applied a change above
// X (a partition receives changes in position order), or it is caught up
// and X was known when it was. Snapshot rows, which share one position and
// carry no transaction, and partitions that have applied nothing, hold the
// table back. Within that bound, one of two rules:
//
//   - With Debezium's transaction metadata (Options.Transactions), the
//     commit of transaction T, when every transaction committed at or below
//     T has ended on the transaction topic and every one of its events in
//     the table, by the END's count, has been applied.
//   - Without it, a watermark: the least of the partitions' bounds.
//
// The package knows positions and transactions, not Kafka or Delta.
package cut
