package control

import (
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Row kinds, the table's partition column.
const (
	KindTable   = "table"
	KindGroup   = "group"
	KindVersion = "version"
)

// Column names.
const (
	colKind             = "kind"
	colName             = "name"
	colTablePath        = "table_path"
	colDeltaVersion     = "delta_version"
	colCompleteThrough  = "complete_through"
	colCompleteLSN      = "complete_through_lsn"
	colCompleteCommitTS = "complete_through_commit_ts"
	colLastApplied      = "last_applied"
	colLastCommitTS     = "last_applied_commit_ts"
	colScanFrom         = "scan_from_version"
	colFinalizedUntil   = "finalized_until"
	colUpdatedAt        = "updated_at"
)

func field(name string, t deltalog.PrimitiveType, nullable bool, comment string) deltalog.StructField {
	return deltalog.StructField{Name: name, Type: t, Nullable: nullable, Metadata: map[string]any{"comment": comment}}
}

// schema is the control table's: typed and every column commented; every
// time column is TIMESTAMP_NTZ in UTC, so that differences between them do
// not depend on a reader's session time zone.
func schema() *deltalog.StructType {
	return &deltalog.StructType{Fields: []deltalog.StructField{
		field(colKind, deltalog.TypeString, false, "table: one row per source table; group: one row per configured group of tables; version: the Delta version at which a table first became complete through a position (append-only)"),
		field(colName, deltalog.TypeString, false, "the source table (database.schema.table) or the group's name"),
		field(colTablePath, deltalog.TypeString, true, "the Delta table's path (table and version rows)"),
		field(colDeltaVersion, deltalog.TypeLong, true, "table: the latest Delta version read; version: the version to read for complete_through (VERSION AS OF)"),
		field(colCompleteThrough, deltalog.TypeString, true, "every source change at or below this position (commit_lsn, change_lsn, event_serial_no as 56 hex digits that order as text, like _cdc_position) is applied; compare _cdc_position <= complete_through"),
		field(colCompleteLSN, deltalog.TypeString, true, "the commit LSN of complete_through, as SQL Server writes it"),
		field(colCompleteCommitTS, deltalog.TypeTimestampNTZ, true, "UTC source commit time at complete_through; commits share milliseconds, so only changes committed before it are surely complete"),
		field(colLastApplied, deltalog.TypeString, true, "the highest position applied (table and version rows), as complete_through; above complete_through the table may hold part of a transaction"),
		field(colLastCommitTS, deltalog.TypeTimestampNTZ, true, "UTC source commit time at last_applied"),
		field(colScanFrom, deltalog.TypeLong, true, "table rows: the Delta version from which cdc2delta reads the table's log after a restart: the earliest holding a change of a transaction the table is not yet complete through, else the one after delta_version"),
		field(colFinalizedUntil, deltalog.TypeTimestampNTZ, true, "group rows: UTC source commit time through which every table of the group is complete; never moves backwards"),
		field(colUpdatedAt, deltalog.TypeTimestampNTZ, false, "UTC time the row was written"),
	}}
}
