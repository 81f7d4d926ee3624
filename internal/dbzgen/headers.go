package dbzgen

import (
	"encoding/json"
	"fmt"
)

// The record headers Debezium's relational emitter sets on the two halves
// of a primary-key update.
const (
	HeaderNewKey = "__debezium.newkey"
	HeaderOldKey = "__debezium.oldkey"
)

// Header is one Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// Headers returns the record headers Debezium sends with ev: none, or, on
// the halves of a primary-key update, HeaderNewKey (the delete and its
// tombstone) or HeaderOldKey (the create). The value is the other key as
// Kafka Connect's default SimpleHeaderConverter writes a struct: its fields
// as a JSON object, decimals as plain numbers.
func (g *Generator) Headers(ev Event) ([]Header, error) {
	var out []Header
	for _, h := range []struct {
		name string
		key  Row
	}{{HeaderNewKey, ev.NewKey}, {HeaderOldKey, ev.OldKey}} {
		if h.key == nil {
			continue
		}
		if ev.Table == nil {
			return nil, fmt.Errorf("%w: header %s without table", ErrBadEvent, h.name)
		}
		native, err := ev.Table.keyNative(h.key)
		if err != nil {
			return nil, fmt.Errorf("encoding header %s of %s: %w", h.name, ev.Table.topic, err)
		}
		msg, err := ConnectJSON(ev.Table.keySchema, native, DecimalNumeric)
		if err != nil {
			return nil, fmt.Errorf("encoding header %s of %s: %w", h.name, ev.Table.topic, err)
		}
		var env struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(msg, &env); err != nil {
			return nil, fmt.Errorf("encoding header %s of %s: %w", h.name, ev.Table.topic, err)
		}
		out = append(out, Header{Key: h.name, Value: env.Payload})
	}
	return out, nil
}
