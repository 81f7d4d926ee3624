package cdctable

// Metadata columns every table carries (ADR 0021).
const (
	// ColPosition holds the position of the source change that wrote the
	// row, as codecs.Position.Hex renders it (text that orders as the
	// positions do).
	ColPosition   = "_cdc_position"
	ColOp         = "_cdc_op"
	ColCommitTime = "_cdc_commit_time"
	ColDeleted    = "_cdc_deleted"
)

// Table properties cdc2delta records.
const (
	PropKeyColumns = "cdc2delta.keyColumns"
	PropDeleteMode = "cdc2delta.deleteMode"
	PropSource     = "cdc2delta.source"
	// PropColumnNames records a table's column naming choice ("mapped" or
	// "portable", ADR 0027). Schema evolution follows it, whatever the
	// sink's options say; a table without it is mapped.
	PropColumnNames = "cdc2delta.columnNames"
	// PropAcceptDropAdd accepts one schema change that drops a column and adds
	// another of its type ("OLD->NEW") as a drop and an add; without it the
	// table stops there, since a source rename takes that shape.
	PropAcceptDropAdd = "cdc2delta.acceptDropAdd"
)

// AcceptDropAdd is PropAcceptDropAdd's value accepting the drop of old and the add
// of new.
func AcceptDropAdd(old, new string) string { return old + "->" + new }

// Field metadata keys cdc2delta records on a table's columns.
const (
	// FieldMetaType keeps the source kind: a time of day is a Delta long,
	// and evolution must still see it as a time.
	FieldMetaType = "cdc2delta.type"
	// FieldMetaSource keeps the source column name of a renamed (portable)
	// column.
	FieldMetaSource = "cdc2delta.sourceName"
)

// The change log's metadata columns (ADR 0031), after the source columns.
const (
	LogOp          = "_cdc_op"
	LogPosition    = "_cdc_position"
	LogCommitLSN   = "_cdc_commit_lsn"
	LogChangeLSN   = "_cdc_change_lsn"
	LogSerial      = "_cdc_event_serial_no"
	LogCommitTime  = "_cdc_commit_time"
	LogCommitDate  = "_cdc_commit_date"
	LogTxID        = "_cdc_tx_id"
	LogTxOrder     = "_cdc_tx_order"
	LogUnavailable = "_cdc_unavailable"
	LogKafkaTopic  = "_kafka_topic"
	LogKafkaPart   = "_kafka_partition"
	LogKafkaOffset = "_kafka_offset"
)

// PartitionsTag names, on a data file cdc2delta writes, the Kafka partitions
// whose rows it holds (TopicPartition.TagName, joined by ","). Debezium keys
// each partition by primary key, so writers sharing a table own disjoint
// keys; folding only their own partitions' files keeps them from rewriting
// each other's (ADR 0036).
const PartitionsTag = "cdc2delta.partitions"
