package dbzgen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/sr"
)

// Registrar registers a schema under a subject and returns its global id.
// *sr.Client implements it.
type Registrar interface {
	RegisterSchema(ctx context.Context, subject string, s sr.Schema, id, version int) (int, error)
}

// Generator encodes events for tables it compiled, registering their schemas
// on first use as the AvroConverter does (auto.register.schemas=true).
type Generator struct {
	reg  Registrar
	opts Options
	tx   txTopic
}

// New returns a generator registering schemas through reg. A nil reg gives
// a generator that compiles tables but cannot Encode.
func New(reg Registrar, opts Options) *Generator {
	return &Generator{reg: reg, opts: opts.withDefaults()}
}

// Options returns the generator's options with defaults applied.
func (g *Generator) Options() Options { return g.opts }

// Table compiles def into key and value schemas. It does not register them.
func (g *Generator) Table(def TableDef) (*Table, error) {
	t, err := newTable(def, g.opts)
	if err != nil {
		return nil, fmt.Errorf("table %s.%s.%s: %w", def.Database, def.Schema, def.Name, err)
	}
	return t, nil
}

// Register registers t's key and value schemas if it has not yet, and
// returns their ids (the key id is 0 for a table without key).
func (g *Generator) Register(ctx context.Context, t *Table) (keyID, valueID int, err error) {
	if g.reg == nil {
		return 0, 0, ErrNoRegistry
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.valueID != 0 {
		return t.mu.keyID, t.mu.valueID, nil
	}
	if t.keySchema != "" {
		if keyID, err = g.reg.RegisterSchema(ctx, t.KeySubject(), sr.Schema{Schema: t.keySchema}, -1, -1); err != nil {
			return 0, 0, fmt.Errorf("registering %s: %w", t.KeySubject(), err)
		}
	}
	if valueID, err = g.reg.RegisterSchema(ctx, t.ValueSubject(), sr.Schema{Schema: t.valueSchema}, -1, -1); err != nil {
		return 0, 0, fmt.Errorf("registering %s: %w", t.ValueSubject(), err)
	}
	t.mu.keyID, t.mu.valueID = keyID, valueID
	return keyID, valueID, nil
}

// ErrNoRegistry is returned by Encode on a generator built without a
// Registrar (which can only compile schemas).
var ErrNoRegistry = errors.New("dbzgen: no schema registry")

// ErrBadEvent is wrapped by the errors Encode returns for an event that does
// not make sense for its op (an update without before image, ...).
var ErrBadEvent = errors.New("dbzgen: invalid event")

// Encode returns the Kafka key and value Debezium would produce for ev, in
// the Confluent wire format, on the topic g.Topic(ev). The key is nil for a
// table without key and for truncate events; the value is nil for a
// tombstone.
func (g *Generator) Encode(ctx context.Context, ev Event) (key, value []byte, err error) {
	if ev.Marker != nil {
		return g.encodeMarker(ctx, ev.Marker)
	}
	t := ev.Table
	if t == nil {
		return nil, nil, fmt.Errorf("%w: no table", ErrBadEvent)
	}
	keyID, valueID, err := g.Register(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	if ev.Op != OpTruncate && len(t.key) > 0 {
		native, err := t.keyNative(ev.keyImage())
		if err != nil {
			return nil, nil, fmt.Errorf("encoding key of %s: %w", t.topic, err)
		}
		if key, err = t.keyCodec.BinaryFromNative(wireHeader(keyID), native); err != nil {
			return nil, nil, fmt.Errorf("encoding key of %s: %w", t.topic, err)
		}
	}
	if ev.Tombstone {
		return key, nil, nil
	}
	native, err := t.valueNative(ev)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding %c event of %s: %w", ev.Op, t.topic, err)
	}
	if value, err = t.valueCodec.BinaryFromNative(wireHeader(valueID), native); err != nil {
		return nil, nil, fmt.Errorf("encoding %c event of %s: %w", ev.Op, t.topic, err)
	}
	return key, value, nil
}

// wireHeader is the Confluent prefix: magic byte 0 and the schema id, big
// endian, with room for a typical body.
func wireHeader(id int) []byte {
	b := make([]byte, 5, 256)
	binary.BigEndian.PutUint32(b[1:], uint32(id))
	return b
}
