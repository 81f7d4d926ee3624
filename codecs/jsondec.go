package codecs

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
)

// jsonSchemas caches compiled Connect schemas by their exact text, which
// JsonConverter repeats in every message. Texts that differ only in
// spacing or member order share one compiled schema (one Layout) through
// their canonical form.
type jsonSchemas struct {
	mu      sync.RWMutex
	byText  map[string]*compiled
	byCanon map[string]*compiled
	// recent lists the texts seen, newest first, for probe: a repeated
	// schema is recognised by comparing bytes, without scanning it, which
	// would cost most of the decode (schemas are most of a message).
	recent atomic.Pointer[[]jsonText]
}

type jsonText struct {
	text string
	c    *compiled
}

// maxRecentSchemas bounds the probe; more distinct schemas than this are
// still decoded, by scanning and a map lookup.
const maxRecentSchemas = 128

// probe returns the compiled schema whose exact text b starts with, and
// that text's length. A complete JSON value cannot be the prefix of a
// different value, so a match is the whole schema member.
func (js *jsonSchemas) probe(b []byte) (*compiled, int) {
	if r := js.recent.Load(); r != nil {
		for _, t := range *r {
			if len(b) >= len(t.text) && string(b[:len(t.text)]) == t.text {
				return t.c, len(t.text)
			}
		}
	}
	return nil, 0
}

func (d *Decoder) jsonSchema(text []byte) (*compiled, error) {
	js := &d.json
	js.mu.RLock()
	c := js.byText[string(text)]
	js.mu.RUnlock()
	if c != nil {
		return c, nil
	}
	var v any
	if err := json.Unmarshal(text, &v); err != nil {
		return nil, &JSONError{Path: "$.schema", Reason: err.Error()}
	}
	canon, _ := json.Marshal(v) // sorted keys, no spacing
	js.mu.Lock()
	defer js.mu.Unlock()
	if c = js.byCanon[string(canon)]; c == nil {
		var err error
		if c, err = compileJSON(len(js.byCanon)+1, v, &d.opts); err != nil {
			return nil, err
		}
		if js.byCanon == nil {
			js.byText, js.byCanon = map[string]*compiled{}, map[string]*compiled{}
		}
		js.byCanon[string(canon)] = c
	}
	js.byText[string(text)] = c
	if old := js.recent.Load(); old == nil || len(*old) < maxRecentSchemas {
		r := []jsonText{{text: string(text), c: c}}
		if old != nil {
			r = append(r, *old...)
		}
		js.recent.Store(&r)
	}
	return c, nil
}

// jsonMessage reads the {"schema": ..., "payload": ...} envelope of a
// schemas.enable=true message. It returns the compiled schema and a scanner
// over the payload; a nil schema with a null payload is a null message.
func (d *Decoder) jsonMessage(b []byte) (*compiled, jscan, error) {
	s := jscan{b: b}
	var schema, payload jscan
	var haveSchema, havePayload bool
	var c *compiled
	err := s.object(func(k []byte) error {
		var err error
		switch string(k) {
		case "schema":
			haveSchema = true
			s.ws()
			if hit, n := d.json.probe(b[s.i:]); hit != nil {
				c = hit
				s.i += n
				return nil
			}
			c = nil
			schema, err = s.window()
		case "payload":
			payload, err = s.window()
			havePayload = true
		case "before", "after", "op", "source":
			return inKey(s.errAt("a record without a schema (schemas.enable=false): declare its topic's columns"), k)
		default:
			return inKey(s.errAt("a schemas.enable=true message has only schema and payload"), k)
		}
		return inKey(err, k)
	})
	if err == nil {
		err = s.end()
	}
	if err == nil && (!haveSchema || !havePayload) {
		err = &JSONError{Offset: len(b), Reason: "want an object with schema and payload (JsonConverter with schemas.enable=true)"}
	}
	if err != nil {
		return nil, jscan{}, rooted(err)
	}
	if c != nil {
		return c, payload, nil
	}
	if isNull, _ := schema.null(); isNull {
		if isNull, _ := payload.null(); isNull {
			return nil, payload, nil
		}
		return nil, jscan{}, &JSONError{Path: "$.schema", Offset: schema.i, Reason: "null schema: a record written with schemas.enable=false; declare its topic's columns"}
	}
	c, err = d.jsonSchema(schema.b[schema.i:])
	return c, payload, err
}

// decodeJSON is Decode for JsonConverter records.
func (d *Decoder) decodeJSON(key, value []byte) (Change, error) {
	var ch Change
	var vc *compiled
	var payload jscan
	if len(value) != 0 {
		var err error
		if vc, payload, err = d.jsonMessage(value); err != nil {
			return Change{}, &DecodeError{SchemaID: -1, Err: err}
		}
	}
	if vc == nil { // an empty value or {"schema":null,"payload":null}
		ch.Op = OpTombstone
		if len(key) == 0 {
			return ch, nil
		}
		kc, k, err := d.jsonKey(key)
		if err != nil {
			return Change{}, &DecodeError{SchemaID: -1, Err: err}
		}
		ch.Key, ch.KeyLayout = k, kc.layout
		return ch, nil
	}
	if !vc.envelope {
		return Change{}, &DecodeError{SchemaID: -1, Err: fmt.Errorf("%w: value schema %s is not a Debezium envelope", ErrUnsupportedSchema, vc.json.root.name)}
	}
	if err := d.jsonEnvelope(vc, payload, &ch); err != nil {
		return Change{}, &DecodeError{SchemaID: -1, Err: err}
	}
	if ch.Op == OpTruncate {
		return ch, nil
	}
	if len(key) == 0 {
		if err := d.keyFromRow(vc, &ch); err != nil {
			return Change{}, &DecodeError{SchemaID: -1, Err: err}
		}
		return ch, nil
	}
	kc, k, err := d.jsonKey(key)
	if err != nil {
		return Change{}, &DecodeError{SchemaID: -1, Err: err}
	}
	ch.Key = k
	if ch.KeyLayout, ch.KeyIndex, err = d.keyLayoutFor(kc, vc); err != nil {
		return Change{}, &DecodeError{SchemaID: -1, Err: err}
	}
	return ch, nil
}

func (d *Decoder) jsonKey(key []byte) (*compiled, []any, error) {
	kc, payload, err := d.jsonMessage(key)
	if err != nil {
		return nil, nil, fmt.Errorf("key: %w", err)
	}
	if kc == nil || kc.envelope || kc.transaction {
		return nil, nil, fmt.Errorf("%w: key is not a struct of key columns", ErrUnsupportedSchema)
	}
	vals := make([]any, len(kc.layout.Columns))
	err = payload.row(kc.json.row, vals)
	if err == nil {
		err = payload.end()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("key: %w", rooted(in(err, "payload")))
	}
	if err := d.finishKey(kc, vals); err != nil {
		return nil, nil, err
	}
	return kc, vals, nil
}

// jsonEnvelope fills ch from a Debezium envelope payload but for the key.
// The image the op does not need is only checked to be JSON.
func (d *Decoder) jsonEnvelope(vc *compiled, s jscan, ch *Change) error {
	root := vc.json.root
	var before, after jscan
	var haveBefore, haveAfter bool
	var op string
	var src, tx any
	err := s.object(func(k []byte) error {
		i, known := root.byName[string(k)]
		if !known {
			return inKey(s.skip(1), k)
		}
		var err error
		switch string(k) {
		case "before":
			before, err = s.window()
			haveBefore = err == nil
		case "after":
			after, err = s.window()
			haveAfter = err == nil
		case "op":
			if s.peek() != '"' {
				return inKey(s.errAt("want a string"), k)
			}
			op, err = s.str()
		case "source":
			src, err = s.value(root.fields[i].node, 1)
		case "transaction":
			tx, err = s.value(root.fields[i].node, 1)
		default:
			err = s.skip(1)
		}
		return inKey(err, k)
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return vc.json.rooted(err)
	}
	if len(op) != 1 {
		return &OpError{Op: op}
	}
	ch.Op = Op(op[0])
	image, have, name := after, haveAfter, "after"
	switch ch.Op {
	case OpCreate, OpRead, OpUpdate:
	case OpDelete:
		image, have, name = before, haveBefore, "before"
	case OpTruncate:
		have = false
	default:
		return &OpError{Op: op}
	}
	// decodeSource reads the envelope's source block as goavro gives it.
	if err := d.decodeSource(map[string]any{"source": src}, ch); err != nil {
		return err
	}
	if t, ok := tx.(map[string]any); ok {
		ch.TxID, ch.TxOrder = txBlock(t, ch.Pos.Source())
	}
	if ch.Op == OpTruncate {
		return nil
	}
	if isNull, _ := image.null(); !have || isNull {
		return fmt.Errorf("%w: op %s without its row image", ErrBadEnvelope, op)
	}
	ch.Layout, ch.Row = vc.layout, make([]any, len(vc.layout.Columns))
	if err := image.row(vc.json.row, ch.Row); err != nil {
		return vc.json.rooted(in(err, name))
	}
	ch.Unavailable, err = d.convertRow(vc.layout, ch.Row)
	return err
}

// decodeJSONTransaction is DecodeTransaction for JsonConverter records.
func (d *Decoder) decodeJSONTransaction(value []byte) (TxEvent, error) {
	c, payload, err := d.jsonMessage(value)
	if err != nil {
		return TxEvent{}, err
	}
	if c == nil || !c.transaction {
		return TxEvent{}, fmt.Errorf("%w: value is not Debezium's transaction metadata", ErrUnsupportedSchema)
	}
	native, err := payload.value(c.json.root, 0)
	if err == nil {
		err = payload.end()
	}
	if err != nil {
		return TxEvent{}, rooted(in(err, "payload"))
	}
	return txEventFrom(native)
}
