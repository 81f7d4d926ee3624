package codecs

import (
	"context"
	"errors"
	"fmt"
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
	keyIndex sync.Map // uint64 → keyMap
	nullKeys sync.Map // int → *nullKey
	// json holds the Connect schemas of JsonConverter records, declared
	// the compiled declarations by topic.
	json     jsonSchemas
	declared map[string]*declaredPlan
	// wholeEnvelope disables the envelope plan, and goavroRows the row
	// decoders: tests compare the paths, benchmarks time them.
	wholeEnvelope, goavroRows bool
}

// NewDecoder returns a Decoder reading schemas from src. Under
// [ConverterJSON] every record carries its schema and src may be nil.
func NewDecoder(src SchemaSource, opts Options) (*Decoder, error) {
	if src == nil && opts.Converter != ConverterJSON {
		return nil, errors.New("codecs: nil schema source")
	}
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	d := &Decoder{opts: opts, ph: newPlaceholders(opts.Placeholder)}
	if len(opts.Declared) > 0 {
		if opts.Converter != ConverterJSON {
			return nil, errors.New("codecs: declared schemas need the json converter")
		}
		var err error
		if d.declared, err = compileDeclared(opts.Declared, &d.opts); err != nil {
			return nil, err
		}
	}
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
	if d.opts.Converter == ConverterJSON {
		return d.decodeJSON(key, value)
	}
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
	if ch.KeyLayout, ch.KeyIndex, err = d.keyLayoutFor(kc, vc); err != nil {
		return Change{}, &DecodeError{SchemaID: kid, Err: err}
	}
	return ch, nil
}

// DecodeRecord is Decode for a record whose coordinates are known: a
// failure's *DecodeError carries topic, partition and offset.
func (d *Decoder) DecodeRecord(ctx context.Context, topic string, partition int32, offset int64, key, value []byte) (Change, error) {
	var ch Change
	var err error
	if p := d.declared[topic]; p != nil {
		ch, err = d.decodeDeclared(p, key, value)
	} else {
		ch, err = d.Decode(ctx, key, value)
	}
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			de.Topic, de.Partition, de.Offset = topic, partition, offset
		}
	}
	return ch, err
}

// decodeEnvelope fills everything but the key.
func (d *Decoder) decodeEnvelope(vc *compiled, body []byte, ch *Change) error {
	if vc.plan == nil || d.wholeEnvelope {
		row, err := d.decodeWhole(vc, body, ch)
		if err != nil || row == nil {
			return err
		}
		ch.Layout, ch.Row = vc.layout, make([]any, len(vc.layout.Columns))
		nativesFromMap(vc.layout, row, ch.Row)
		ch.Unavailable, err = d.convertRow(vc.layout, ch.Row)
		return err
	}
	image, step, err := vc.plan.decode(body, ch)
	if err != nil || step == nil {
		return err
	}
	ch.Layout, ch.Row = vc.layout, make([]any, len(vc.layout.Columns))
	if step.row != nil && !d.goavroRows {
		// The compiled row decoder's values go to convertRaw unboxed.
		var stack [rawStack]rawValue
		raw := rawScratch(&stack, len(step.row.fields))
		if err := step.row.decodeRaw(image, raw); err != nil {
			return imageErr(err, ch.Op)
		}
		ch.Unavailable, err = d.convertRaw(vc.layout, step.row.fields, raw, ch.Row)
		return err
	}
	if err := d.decodeImage(vc.layout, step, image, ch.Row, ch.Op); err != nil {
		return err
	}
	ch.Unavailable, err = d.convertRow(vc.layout, ch.Row)
	return err
}

// nativesFromMap puts the values of a record goavro decoded into vals,
// aligned with l.Columns, with nullable columns' unions unwrapped.
func nativesFromMap(l *Layout, rec map[string]any, vals []any) {
	for i := range l.Columns {
		col := &l.Columns[i]
		v := rec[col.AvroName]
		if u, ok := v.(map[string]any); ok && col.Nullable {
			if inner, ok := u[col.branch]; ok && len(u) == 1 {
				v = inner
			} else {
				v = unwrap(v)
			}
		}
		vals[i] = v
	}
}

// convertRow converts the Avro values of a record, aligned with
// l.Columns, in place into the columns' values. Unavailable columns (the
// unchanged-value placeholder) are left nil and returned.
func (d *Decoder) convertRow(l *Layout, vals []any) (unavailable []int, err error) {
	for i := range l.Columns {
		col := &l.Columns[i]
		v := vals[i]
		if v == nil {
			if !col.Nullable {
				return nil, fmt.Errorf("%w: required column %q is null", ErrBadBody, col.Name)
			}
			continue
		}
		out, err := col.value(v, &d.ph)
		if err == errUnavailable {
			vals[i] = nil
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
