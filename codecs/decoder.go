package codecs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// Decoder turns Kafka record keys and values into [Change]s. It is safe for
// concurrent use; schemas are fetched once per id and then shared.
type Decoder struct {
	opts    Options
	ph      placeholders
	schemas schemaCache
	// keyIndex caches key-to-row column mappings per (key id, value id),
	// and synthesized key layouts per value id for keyless tables.
	keyIndex sync.Map // uint64 → []int
	nullKeys sync.Map // int → *nullKey
}

// nullKey is the key layout synthesized from configured key columns.
type nullKey struct {
	layout *Layout
	index  []int
}

// NewDecoder returns a Decoder reading schemas from src.
func NewDecoder(src SchemaSource, opts Options) (*Decoder, error) {
	if src == nil {
		return nil, errors.New("codecs: nil schema source")
	}
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	d := &Decoder{opts: opts, ph: newPlaceholders(opts.Placeholder)}
	d.schemas = schemaCache{src: src, opts: &d.opts}
	return d, nil
}

// Layout returns the row layout of a value schema id (or the layout of a
// key schema id), fetching the schema if needed. The processor uses it to
// create a table before the first change arrives or to check evolution.
func (d *Decoder) Layout(ctx context.Context, id int) (*Layout, error) {
	c, err := d.schemas.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return c.layout, nil
}

// Decode decodes one record. An empty value is a tombstone: the Change has
// Op [OpTombstone] and only the key. Every error is a *[DecodeError].
func (d *Decoder) Decode(ctx context.Context, key, value []byte) (Change, error) {
	var ch Change
	if len(value) == 0 {
		ch.Op = OpTombstone
		if len(key) == 0 {
			return ch, nil
		}
		kc, id, err := d.keySchema(ctx, key)
		if err != nil {
			return Change{}, &DecodeError{SchemaID: id, Err: err}
		}
		if ch.Key, err = d.decodeKey(kc, key[headerLen:]); err != nil {
			return Change{}, &DecodeError{SchemaID: id, Err: err}
		}
		ch.KeyLayout = kc.layout
		return ch, nil
	}

	id, body, err := SplitHeader(value)
	if err != nil {
		return Change{}, &DecodeError{SchemaID: -1, Err: err}
	}
	vc, err := d.schemas.get(ctx, id)
	if err != nil {
		return Change{}, &DecodeError{SchemaID: id, Err: err}
	}
	if !vc.envelope {
		return Change{}, &DecodeError{SchemaID: id, Err: fmt.Errorf("%w: value schema is not a Debezium envelope", ErrUnsupportedSchema)}
	}
	if err := d.decodeEnvelope(vc, body, &ch); err != nil {
		return Change{}, &DecodeError{SchemaID: id, Err: err}
	}
	if ch.Op == OpTruncate {
		// A truncate concerns the whole table and carries no row or key.
		return ch, nil
	}

	if len(key) == 0 {
		if err := d.keyFromRow(vc, &ch); err != nil {
			return Change{}, &DecodeError{SchemaID: id, Err: err}
		}
		return ch, nil
	}
	kc, kid, err := d.keySchema(ctx, key)
	if err != nil {
		return Change{}, &DecodeError{SchemaID: kid, Err: err}
	}
	if ch.Key, err = d.decodeKey(kc, key[headerLen:]); err != nil {
		return Change{}, &DecodeError{SchemaID: kid, Err: err}
	}
	ch.KeyLayout = kc.layout
	if ch.KeyIndex, err = d.keyIndexFor(kc, vc); err != nil {
		return Change{}, &DecodeError{SchemaID: kid, Err: err}
	}
	return ch, nil
}

func (d *Decoder) keySchema(ctx context.Context, key []byte) (*compiled, int, error) {
	id, _, err := SplitHeader(key)
	if err != nil {
		return nil, -1, fmt.Errorf("key: %w", err)
	}
	kc, err := d.schemas.get(ctx, id)
	if err != nil {
		return nil, id, fmt.Errorf("key: %w", err)
	}
	if kc.envelope {
		return nil, id, fmt.Errorf("%w: key schema is an envelope", ErrUnsupportedSchema)
	}
	return kc, id, nil
}

func (d *Decoder) decodeKey(kc *compiled, body []byte) ([]any, error) {
	native, rest, err := kc.codec.NativeFromBinary(body)
	if err != nil {
		return nil, fmt.Errorf("%w: key: %v", ErrBadBody, err)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: key: %d trailing bytes", ErrBadBody, len(rest))
	}
	m, ok := native.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: key is %T, not a record", ErrBadBody, native)
	}
	vals := make([]any, len(kc.layout.Columns))
	unavailable, err := d.fillRow(kc.layout, m, vals)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	if len(unavailable) != 0 {
		return nil, fmt.Errorf("%w: key column %q is unavailable", ErrBadEnvelope, kc.layout.Columns[unavailable[0]].Name)
	}
	for i, v := range vals {
		if v == nil {
			return nil, fmt.Errorf("%w: key column %q is null", ErrMissingKey, kc.layout.Columns[i].Name)
		}
	}
	return vals, nil
}

// keyIndexFor maps key columns to row columns by Avro field name.
func (d *Decoder) keyIndexFor(kc, vc *compiled) ([]int, error) {
	k := uint64(uint32(kc.id))<<32 | uint64(uint32(vc.id))
	if v, ok := d.keyIndex.Load(k); ok {
		return v.([]int), nil
	}
	idx := make([]int, len(kc.layout.Columns))
	for i, kcol := range kc.layout.Columns {
		j := vc.layout.indexAvro(kcol.AvroName)
		if j < 0 {
			return nil, fmt.Errorf("%w: key column %q (schema %d) not in row (schema %d)", ErrUnsupportedSchema, kcol.AvroName, kc.id, vc.id)
		}
		idx[i] = j
	}
	d.keyIndex.Store(k, idx)
	return idx, nil
}

// keyFromRow applies the null-key policy: configured key columns are taken
// from the row image, otherwise the record is an error.
func (d *Decoder) keyFromRow(vc *compiled, ch *Change) error {
	nk, err := d.nullKeyFor(vc, ch.Table)
	if err != nil {
		return err
	}
	ch.KeyLayout, ch.KeyIndex = nk.layout, nk.index
	ch.Key = make([]any, len(nk.index))
	for i, j := range nk.index {
		if ch.IsUnavailable(j) || ch.Row[j] == nil {
			return fmt.Errorf("%w: configured key column %q is null", ErrMissingKey, vc.layout.Columns[j].Name)
		}
		ch.Key[i] = ch.Row[j]
	}
	return nil
}

func (d *Decoder) nullKeyFor(vc *compiled, t TableID) (*nullKey, error) {
	if v, ok := d.nullKeys.Load(vc.id); ok {
		return v.(*nullKey), nil
	}
	cols, ok := d.opts.KeyColumns[t.Schema+"."+t.Table]
	if !ok {
		cols, ok = d.opts.KeyColumns[t.String()]
	}
	if !ok || len(cols) == 0 {
		return nil, fmt.Errorf("%w: table %s has no key and no key columns are configured", ErrMissingKey, t)
	}
	nk := &nullKey{layout: &Layout{Name: vc.layout.Name + ".ConfiguredKey"}}
	for _, name := range cols {
		j := vc.layout.Index(name)
		if j < 0 {
			return nil, fmt.Errorf("%w: configured key column %q not in table %s (schema %d)", ErrMissingKey, name, t, vc.id)
		}
		nk.index = append(nk.index, j)
		nk.layout.Columns = append(nk.layout.Columns, vc.layout.Columns[j])
	}
	d.nullKeys.Store(vc.id, nk)
	return nk, nil
}

// decodeEnvelope fills everything but the key.
func (d *Decoder) decodeEnvelope(vc *compiled, body []byte, ch *Change) error {
	native, rest, err := vc.codec.NativeFromBinary(body)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadBody, err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrBadBody, len(rest))
	}
	env, ok := native.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: envelope is %T", ErrBadBody, native)
	}
	op, _ := env["op"].(string)
	if len(op) != 1 {
		return &OpError{Op: op}
	}
	ch.Op = Op(op[0])
	imageField := "after"
	switch ch.Op {
	case OpCreate, OpRead, OpUpdate:
	case OpDelete:
		imageField = "before"
	case OpTruncate:
		imageField = ""
	default:
		return &OpError{Op: op}
	}
	if err := d.decodeSource(env, ch); err != nil {
		return err
	}
	if tx, ok := unwrap(env["transaction"]).(map[string]any); ok {
		ch.TxID, _ = tx["id"].(string)
	}
	if imageField == "" {
		return nil
	}
	row, ok := unwrap(env[imageField]).(map[string]any)
	if !ok {
		return fmt.Errorf("%w: op %s without %s image", ErrBadEnvelope, op, imageField)
	}
	ch.Layout = vc.layout
	ch.Row = make([]any, len(vc.layout.Columns))
	ch.Unavailable, err = d.fillRow(vc.layout, row, ch.Row)
	return err
}

// fillRow converts a decoded record into vals, aligned with l.Columns.
func (d *Decoder) fillRow(l *Layout, rec map[string]any, vals []any) (unavailable []int, err error) {
	for i := range l.Columns {
		col := &l.Columns[i]
		v := rec[col.AvroName]
		if col.Nullable {
			v = unwrap(v)
		}
		if v == nil {
			if !col.Nullable {
				return nil, fmt.Errorf("%w: required column %q is null", ErrBadBody, col.Name)
			}
			continue
		}
		out, err := col.value(v, &d.ph)
		if err == errUnavailable {
			unavailable = append(unavailable, i)
			continue
		}
		if err != nil {
			return nil, err
		}
		vals[i] = out
	}
	return unavailable, nil
}

// unwrap returns the branch value of a goavro union ({typeName: value}),
// or v itself when it is not a union wrapper.
func unwrap(v any) any {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return v
	}
	for _, inner := range m {
		return inner
	}
	return nil
}

func (d *Decoder) decodeSource(env map[string]any, ch *Change) error {
	src, ok := env["source"].(map[string]any)
	if !ok {
		return fmt.Errorf("%w: no source block", ErrBadEnvelope)
	}
	ch.Table.Database, _ = src["db"].(string)
	ch.Table.Schema, _ = src["schema"].(string)
	ch.Table.Table, _ = src["table"].(string)
	ch.CommitMillis, _ = unwrap(src["ts_ms"]).(int64)
	if s, _ := unwrap(src["snapshot"]).(string); s != "false" {
		ch.Snapshot = s
	}
	var err error
	if s, ok := unwrap(src["commit_lsn"]).(string); ok {
		if ch.Pos.Commit, err = ParseLSN(s); err != nil {
			return fmt.Errorf("commit_lsn: %w", err)
		}
	}
	if s, ok := unwrap(src["change_lsn"]).(string); ok {
		if ch.Pos.Change, err = ParseLSN(s); err != nil {
			return fmt.Errorf("change_lsn: %w", err)
		}
	}
	switch n := unwrap(src["event_serial_no"]).(type) {
	case int64:
		ch.Pos.Serial = n
	case string: // documentation examples (and Debezium 1.x) show a string
		if ch.Pos.Serial, err = strconv.ParseInt(n, 10, 64); err != nil {
			return fmt.Errorf("%w: event_serial_no %q", ErrBadEnvelope, n)
		}
	}
	if ch.Pos.Serial < 0 {
		return fmt.Errorf("%w: negative event_serial_no %d", ErrBadEnvelope, ch.Pos.Serial)
	}
	return nil
}
