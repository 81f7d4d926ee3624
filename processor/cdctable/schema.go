package cdctable

import (
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// metaField is a metadata column, commented for whoever reads the table.
func metaField(name string, t deltalog.PrimitiveType, nullable bool, comment string) deltalog.StructField {
	return deltalog.StructField{Name: name, Type: t, Nullable: nullable, Metadata: map[string]any{"comment": comment}}
}

// MetaFields are the metadata columns of a table, after its source
// columns; soft adds ColDeleted (soft-delete mode).
func MetaFields(soft bool) []deltalog.StructField {
	fs := []deltalog.StructField{
		metaField(ColPosition, deltalog.TypeString, false,
			"cdc2delta: SQL Server position (commit_lsn, change_lsn, event_serial_no) of the change that wrote this row, as hex that orders as text"),
		metaField(ColOp, deltalog.TypeString, false, "cdc2delta: Debezium op of that change (c, u, r, d)"),
		metaField(ColCommitTime, deltalog.TypeTimestamp, true, "cdc2delta: source commit time of that change (source.ts_ms)"),
	}
	if soft {
		fs = append(fs, metaField(ColDeleted, deltalog.TypeBoolean, false, "cdc2delta: true when the source row was deleted (soft-delete mode)"))
	}
	return fs
}

// ChangeLogMetaCount is how many metadata columns (Log*) follow the
// source columns of the change log.
const ChangeLogMetaCount = 13

// ChangeLogMetaFields are the change log's metadata columns (ADR 0031),
// after its source columns.
func ChangeLogMetaFields() []deltalog.StructField {
	return []deltalog.StructField{
		metaField(LogOp, deltalog.TypeString, false, "cdc2delta: Debezium op of the change (c, u, d, r, t)"),
		metaField(LogPosition, deltalog.TypeString, false, "cdc2delta: SQL Server position (commit_lsn, change_lsn, event_serial_no) as hex that orders as text; rows at or below a control table complete_through are a consistent cut"),
		metaField(LogCommitLSN, deltalog.TypeString, true, "source.commit_lsn: the transaction's commit LSN"),
		metaField(LogChangeLSN, deltalog.TypeString, true, "source.change_lsn (NULL for snapshot rows)"),
		metaField(LogSerial, deltalog.TypeLong, true, "source.event_serial_no (NULL for snapshot rows)"),
		metaField(LogCommitTime, deltalog.TypeTimestampNTZ, true, "UTC source commit time (source.ts_ms)"),
		metaField(LogCommitDate, deltalog.TypeDate, true, "UTC date of the source commit: the partition, for time-range reads"),
		metaField(LogTxID, deltalog.TypeString, true, "the transaction block's id (with provide.transaction.metadata=true)"),
		metaField(LogTxOrder, deltalog.TypeLong, true, "the transaction block's data_collection_order"),
		metaField(LogUnavailable, deltalog.TypeString, true, "comma-separated source columns the event did not carry (unchanged LOBs); they are NULL in this row"),
		metaField(LogKafkaTopic, deltalog.TypeString, false, "Kafka topic of the record"),
		metaField(LogKafkaPart, deltalog.TypeInteger, false, "Kafka partition of the record"),
		metaField(LogKafkaOffset, deltalog.TypeLong, false, "Kafka offset of the record"),
	}
}

// IsMetaColumn reports whether name is one of a table's metadata columns.
func IsMetaColumn(name string) bool {
	switch name {
	case ColPosition, ColOp, ColCommitTime, ColDeleted:
		return true
	}
	return false
}
