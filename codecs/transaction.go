package codecs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/linkedin/goavro/v2"
)

// TxStatus is a transaction topic event's status.
type TxStatus string

// Statuses of the transaction topic's events (brief §7).
const (
	TxBegin TxStatus = "BEGIN"
	TxEnd   TxStatus = "END"
)

// TxEvent is one event of Debezium's transaction topic
// (<topic.prefix>.transaction, provide.transaction.metadata=true). Commit
// is the transaction's key in the order of positions ([TxCommit]): every
// change of the transaction is at or below the position
// {Commit, max, max}, every change of a later one above it.
type TxEvent struct {
	Status TxStatus
	// ID is the transaction id as Debezium writes it.
	ID string
	// Name is the PostgreSQL transaction's name as its data events'
	// [Change.TxID] gives it, "postgres:<txId>"; empty for SQL Server, whose
	// data events give the ID.
	Name string
	// Commit is the transaction's key: SQL Server's commit LSN (the ID);
	// for a PostgreSQL END the LSN of its commit less one, tagged as
	// positions are (see txKey); zero for a PostgreSQL BEGIN.
	Commit LSN
	// EventCount is the number of data events of the transaction; END only.
	EventCount int64
	// Counts are the data events per source table; END only. A
	// PostgreSQL END names schema.table: Database is then empty.
	Counts map[TableID]int64
	// Millis is ts_ms: when the connector processed the event.
	Millis int64
}

// isTransactionValue recognises the TransactionMetadataValue record by its
// fields, as the connector names it differently across versions.
func isTransactionValue(rec map[string]any) bool {
	return hasField(rec, "status") && hasField(rec, "id") && hasField(rec, "data_collections") && !hasField(rec, "op")
}

func compileTransaction(c *compiled, root any, rec map[string]any) (*compiled, error) {
	name, _ := rec["name"].(string)
	c.transaction = true
	c.layout = &Layout{SchemaID: c.id, Name: name}
	stripLogicalTypes(root)
	plain, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("%w: schema %d: %v", ErrUnsupportedSchema, c.id, err)
	}
	if c.codec, err = goavro.NewCodec(string(plain)); err != nil {
		return nil, fmt.Errorf("%w: schema %d: %v", ErrUnsupportedSchema, c.id, err)
	}
	return c, nil
}

// DecodeTransaction decodes one record of the transaction topic. Every
// error is a *[DecodeError] carrying the record's coordinates.
func (d *Decoder) DecodeTransaction(ctx context.Context, topic string, partition int32, offset int64, value []byte) (TxEvent, error) {
	fail := func(id int, err error) (TxEvent, error) {
		return TxEvent{}, &DecodeError{Topic: topic, Partition: partition, Offset: offset, SchemaID: id, Err: err}
	}
	if d.opts.Converter == ConverterJSON {
		ev, err := d.decodeJSONTransaction(value)
		if err != nil {
			return fail(-1, err)
		}
		return ev, nil
	}
	id, body, err := SplitHeader(value)
	if err != nil {
		return fail(-1, err)
	}
	c, err := d.schemas.get(ctx, id)
	if err != nil {
		return fail(id, err)
	}
	if !c.transaction {
		return fail(id, fmt.Errorf("%w: value schema %s is not Debezium's transaction metadata", ErrUnsupportedSchema, c.layout.Name))
	}
	native, _, err := c.codec.NativeFromBinary(body)
	if err != nil {
		return fail(id, fmt.Errorf("%w: %v", ErrBadBody, err))
	}
	ev, err := txEventFrom(native)
	if err != nil {
		return fail(id, err)
	}
	return ev, nil
}

func txEventFrom(native any) (TxEvent, error) {
	m, _ := unwrap(native).(map[string]any)
	var ev TxEvent
	status, _ := m["status"].(string)
	ev.Status = TxStatus(status)
	if ev.Status != TxBegin && ev.Status != TxEnd {
		return TxEvent{}, fmt.Errorf("%w: transaction status %q, want BEGIN or END", ErrBadEnvelope, status)
	}
	ev.ID, _ = m["id"].(string)
	var err error
	if err = txKey(&ev); err != nil {
		return TxEvent{}, err
	}
	ev.Millis, _ = unwrap(m["ts_ms"]).(int64)
	if ev.Status == TxBegin {
		return ev, nil
	}
	n, ok := unwrap(m["event_count"]).(int64)
	if !ok || n < 0 {
		return TxEvent{}, fmt.Errorf("%w: END of transaction %s without an event_count", ErrBadEnvelope, ev.ID)
	}
	ev.EventCount = n
	cols, _ := unwrap(m["data_collections"]).([]any)
	ev.Counts = make(map[TableID]int64, len(cols))
	var sum int64
	for _, c := range cols {
		cm, _ := unwrap(c).(map[string]any)
		name, _ := cm["data_collection"].(string)
		count, ok := unwrap(cm["event_count"]).(int64)
		parts := strings.Split(name, ".")
		if len(parts) == 2 {
			// PostgreSQL names schema.table: the database is the
			// connector's, which the reader of the topic knows.
			parts = append([]string{""}, parts...)
		}
		if len(parts) != 3 || !ok || count < 0 {
			return TxEvent{}, fmt.Errorf("%w: END of transaction %s: data collection %q with event_count %v", ErrBadEnvelope, ev.ID, name, cm["event_count"])
		}
		ev.Counts[TableID{Database: parts[0], Schema: parts[1], Table: parts[2]}] += count
		sum += count
	}
	if sum != ev.EventCount {
		return TxEvent{}, fmt.Errorf("%w: END of transaction %s counts %d events by table, %d in all", ErrBadEnvelope, ev.ID, sum, ev.EventCount)
	}
	return ev, nil
}

// ErrTransactionSource means a transaction topic (or a data event's
// transaction block) comes from a source whose transactions completeness
// cannot place among positions: MySQL and MariaDB name a transaction by its
// GTID or by the binlog position of its start, neither of which bounds the
// positions of its changes. Tables of such a source use the watermark rule
// (no control.transaction_topic).
var ErrTransactionSource = errors.New("codecs: transaction metadata of this source cannot bound completeness")

// pgTxPrefix starts the name the decoders give a PostgreSQL transaction
// ([Change.TxID], [TxEvent.Name]): "postgres:<txId>". Debezium's own id,
// "<txId>:<LSN>", carries the LSN each event was seen at, so it differs
// between the events of one transaction.
const pgTxPrefix = "postgres:"

// TxCommit returns the key of a transaction as a table's progress records it
// (a [Change.TxID]). A SQL Server id is its commit LSN: known is true. A
// PostgreSQL name carries no key: known is false, and the key is the Commit
// of the transaction topic's END whose Name it is.
func TxCommit(id string) (commit LSN, known bool, err error) {
	if rest, ok := strings.CutPrefix(id, pgTxPrefix); ok {
		if !isDecimal(rest) {
			return LSN{}, false, fmt.Errorf("%w: transaction %q, want postgres:<txId>", ErrBadEnvelope, id)
		}
		return LSN{}, false, nil
	}
	l, err := ParseLSN(id)
	if err != nil || l.IsZero() {
		return LSN{}, false, fmt.Errorf("%w: transaction id %q is not a commit LSN", ErrBadEnvelope, id)
	}
	return l, true, nil
}

// txKey sets the key and name of a transaction topic event with id.
//
// A PostgreSQL END's id is "<txId>:<L>", L the LSN Debezium had reached at
// the transaction's commit, which is also the last committed LSN the next
// transaction's changes carry (their positions' Commit). The changes of this
// transaction carry an earlier commit's, below L. So the key L-1, tagged as
// positions are, puts {key, max, max} above every change of this
// transaction and below every change of the next (ADR 0044). A BEGIN's
// LSN is not its commit's: its key stays zero.
func txKey(ev *TxEvent) error {
	if l, err := ParseLSN(ev.ID); err == nil && !l.IsZero() {
		ev.Commit = l // SQL Server
		return nil
	}
	txID, lsn, ok := strings.Cut(ev.ID, ":")
	if ok && isDecimal(txID) && isDecimal(lsn) {
		l, err := strconv.ParseUint(lsn, 10, 64)
		if err != nil || l < 2 {
			return fmt.Errorf("%w: PostgreSQL transaction id %q: LSN out of range", ErrBadEnvelope, ev.ID)
		}
		ev.Name = pgTxPrefix + txID
		if ev.Status == TxEnd {
			ev.Commit = taggedUint(tagPostgres, l-1)
		}
		return nil
	}
	return fmt.Errorf("%w: transaction id %q is a MySQL/MariaDB GTID or binlog position, which bounds no change's position; "+
		"remove control.transaction_topic to keep the control table by the watermark rule", ErrTransactionSource, ev.ID)
}

func isDecimal(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// txBlock returns what completeness needs of a data event's transaction
// block m, for a change of source src: its transaction's name as
// [TxCommit] reads it, and its data_collection_order. MySQL's blocks are
// not read ("", 0).
func txBlock(m map[string]any, src Source) (string, int64) {
	order, _ := unwrap(m["data_collection_order"]).(int64)
	id, _ := unwrap(m["id"]).(string)
	switch src {
	case SourceSQLServer:
		return id, order
	case SourcePostgres:
		if txID, _, ok := strings.Cut(id, ":"); ok && isDecimal(txID) {
			return pgTxPrefix + txID, order
		}
	}
	return "", 0
}
