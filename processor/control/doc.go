// Package control keeps the control table: a Delta table that says, per
// source table, how far its Delta table is complete, per group of tables
// the consistent cut finalized_until, and the Delta versions at which each
// table became complete through each position (ADR 0029).
//
// Rows only move forward: an update that would move a position or a time
// back is ignored, so processes that share the table, and a restart that
// recomputes what a crash lost, never undo each other. Writers are
// serialized by Delta's optimistic concurrency.
package control
