package codecs

// Op is what a change event does to its row.
type Op byte

// Operations. The letters are Debezium's op codes.
const (
	OpCreate   Op = 'c'
	OpUpdate   Op = 'u'
	OpDelete   Op = 'd'
	OpRead     Op = 'r' // snapshot read: an upsert, never a blind insert
	OpTruncate Op = 't'
	// OpTombstone is a record with an empty value, which Debezium writes
	// after every delete for log compaction. It carries only the key.
	OpTombstone Op = '-'
)

// String names the operation ("create", "tombstone", ...).
func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	case OpRead:
		return "read"
	case OpTruncate:
		return "truncate"
	case OpTombstone:
		return "tombstone"
	}
	return "op(" + string(rune(o)) + ")"
}

// TableID names a source table.
type TableID struct {
	Database string
	Schema   string
	Table    string
}

// String renders the table as database.schema.table.
func (t TableID) String() string { return t.Database + "." + t.Schema + "." + t.Table }

// Change is one decoded Debezium change event.
type Change struct {
	Op Op
	// Table is the source table from the envelope's source block (empty for
	// tombstones, which carry no envelope).
	Table TableID
	// Pos orders the event among the table's events.
	Pos Position
	// CommitMillis is source.ts_ms: the source commit time in ms since the
	// epoch (the snapshot start time for op r). Not an order: many changes
	// share a millisecond.
	CommitMillis int64
	// Snapshot is the source.snapshot marker ("true", "first", "last",
	// "incremental", ...); empty for streaming events ("false" or null).
	Snapshot string
	// TxID names the event's transaction when transaction metadata is on,
	// as [TxCommit] reads it: SQL Server's commit LSN (the block's id);
	// "postgres:<txId>" for PostgreSQL (the block's id carries each
	// event's own LSN). Empty for MySQL/MariaDB.
	TxID string
	// TxOrder is the transaction block's data_collection_order: the event's
	// 1-based place among its transaction's events of this table, so that
	// a re-delivered event is not counted twice against the END's count.
	TxOrder int64

	// Layout describes Row's columns: the value schema's row record. It is
	// shared by every change with the same value schema id, so a pointer
	// comparison detects a schema switch. Nil for tombstones.
	Layout *Layout
	// Row is the row image (after; before for deletes), aligned with
	// Layout.Columns. Nil for truncates and tombstones.
	Row []any
	// Unavailable lists the indexes into Row of columns whose value the
	// event did not carry (Debezium's unavailable-value placeholder, used
	// for unchanged LOB columns). Their Row entries are nil; a MERGE must
	// keep the stored value. Nil when every column is present.
	Unavailable []int

	// KeyLayout describes Key: the key schema's fields, or the configured
	// key columns for tables without a primary key.
	KeyLayout *Layout
	// Key holds the primary-key values, aligned with KeyLayout.Columns.
	Key []any
	// KeyIndex maps each key column to its index in Row (nil for
	// tombstones, which have no Layout).
	KeyIndex []int
}

// IsUnavailable reports whether column i was not carried by the event.
func (c *Change) IsUnavailable(i int) bool {
	for _, u := range c.Unavailable {
		if u == i {
			return true
		}
	}
	return false
}
