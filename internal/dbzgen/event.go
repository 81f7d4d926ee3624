package dbzgen

import "time"

// Op is Debezium's op field.
type Op byte

// The Debezium operations. SQL Server's connector never emits OpTruncate;
// it is here so decoders can be tested against it.
const (
	OpCreate   Op = 'c'
	OpUpdate   Op = 'u'
	OpDelete   Op = 'd'
	OpRead     Op = 'r'
	OpTruncate Op = 't'
)

// Row is a row image keyed by SQL Server column name ("Unit Price", not the
// adjusted "Unit_Price"). A missing column or a nil value is NULL.
type Row map[string]any

// Event is one change to encode, or, with Marker set, one event of the
// transaction topic (Table is then nil).
type Event struct {
	Table  *Table
	Marker *TxMarker
	Op     Op
	// Before is the old row (u, d); After the new one (c, u, r).
	Before, After Row
	Source        Source
	// Transaction is the envelope's transaction block
	// (provide.transaction.metadata=true); nil writes null.
	Transaction *Transaction
	// ProcessedAt is when the connector processed the event: the envelope's
	// ts_ms, ts_us and ts_ns. The zero time writes null.
	ProcessedAt time.Time
	// Tombstone makes Encode return the key of the row image and a nil
	// value, the record Debezium sends after a delete.
	Tombstone bool
	// NewKey, on a delete (and its tombstone) that is the first half of a
	// primary-key update, is the key the row moved to: the record's
	// __debezium.newkey header. OldKey, on the create that is its second
	// half, is the key it left: the __debezium.oldkey header. Both hold the
	// key columns only; nil for any other event. See [Generator.Headers].
	NewKey, OldKey Row
}

// Source is the variable part of the source block.
type Source struct {
	// Time is source.ts_ms (and ts_us, ts_ns): the commit time for
	// streaming events, the snapshot start for snapshot reads. The zero
	// time writes the epoch.
	Time time.Time
	// Snapshot is "true", "first", "first_in_data_collection",
	// "last_in_data_collection", "last" or "incremental" for snapshot
	// events, and "" for streaming ones (written as the schema default
	// "false", or null with IgnoreDefaultForNullables).
	Snapshot string
	// CommitLSN is commit_lsn; ChangeLSN change_lsn (zero, as in snapshot
	// events, writes null).
	CommitLSN, ChangeLSN LSN
	// SerialNo is event_serial_no; 0 (snapshot events) writes null.
	SerialNo int64
}

// Transaction is the envelope's transaction block.
type Transaction struct {
	ID                  string // the commit LSN's text
	TotalOrder          int64  // 1-based position among all events of the transaction
	DataCollectionOrder int64  // 1-based position among this table's events of it
}

// keyImage is the row image the Kafka key is taken from.
func (ev Event) keyImage() Row {
	if ev.Op == OpDelete || ev.After == nil {
		return ev.Before
	}
	return ev.After
}
