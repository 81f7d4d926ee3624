package codecs

import (
	"context"
	"encoding/json"
	"fmt"
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
// (<topic.prefix>.transaction, provide.transaction.metadata=true). A
// transaction's id is its commit LSN: the Commit of its events' positions.
type TxEvent struct {
	Status TxStatus
	// ID is the transaction id as Debezium writes it.
	ID string
	// Commit is ID parsed: the commit LSN of the transaction's events.
	Commit LSN
	// EventCount is the number of data events of the transaction; END only.
	EventCount int64
	// Counts are the data events per source table; END only.
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
	if ev.Commit, err = ParseLSN(ev.ID); err != nil || ev.Commit.IsZero() {
		return TxEvent{}, fmt.Errorf("%w: transaction id %q is not a commit LSN", ErrBadEnvelope, ev.ID)
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
