// Package cut says how far each source table's Delta table is complete: the
// position at or below which every change of the table has been applied.
// The least complete of a group of tables gives a consistent cut across
// them: read each table at a version complete through it and no transaction
// is seen in part (ADR 0029).
//
// Two rules, chosen per tracker:
//
//   - With Debezium's transaction metadata (Options.Transactions), a table is
//     complete through the commit of transaction T when every transaction
//     committed at or below T has ended on the transaction topic and every
//     one of its events in the table, by the END's count, has been applied.
//   - Without it, a watermark: the minimum over the table's partitions of the
//     last applied position, where a partition that is caught up counts as
//     the highest position applied in any partition of any table.
//
// Both hold a table at nothing while its snapshot runs.
//
// The package knows positions and transactions, not Kafka or Delta.
package cut
