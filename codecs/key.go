package codecs

import (
	"context"
	"fmt"
	"slices"
)

// nullKey is the key layout synthesized from configured key columns.
type nullKey struct {
	layout *Layout
	index  []int
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
	vals := make([]any, len(kc.layout.Columns))
	if kc.row != nil && !d.goavroRows {
		// Unboxed, as a row image: finishKey's conversion, by convertRaw.
		var stack [rawStack]rawValue
		raw := rawScratch(&stack, len(kc.row.fields))
		if err := kc.row.decodeRaw(body, raw); err != nil {
			return nil, fmt.Errorf("%w: key: %v", ErrBadBody, err)
		}
		unavailable, err := d.convertRaw(kc.layout, kc.row.fields, raw, vals)
		if err := checkKey(kc, vals, unavailable, err); err != nil {
			return nil, err
		}
		return vals, nil
	}
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
	nativesFromMap(kc.layout, m, vals)
	if err := d.finishKey(kc, vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// finishKey converts a key's natives in place and checks that every key
// column has a value.
func (d *Decoder) finishKey(kc *compiled, vals []any) error {
	unavailable, err := d.convertRow(kc.layout, vals)
	return checkKey(kc, vals, unavailable, err)
}

// checkKey is finishKey's verdict on a converted key: the conversion's
// error, an unavailable or a null key column.
func checkKey(kc *compiled, vals []any, unavailable []int, err error) error {
	if err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if len(unavailable) != 0 {
		return fmt.Errorf("%w: key column %q is unavailable", ErrBadEnvelope, kc.layout.Columns[unavailable[0]].Name)
	}
	for i, v := range vals {
		if v == nil {
			return fmt.Errorf("%w: key column %q is null", ErrMissingKey, kc.layout.Columns[i].Name)
		}
	}
	return nil
}

// keyMap is a key layout matched to a row layout.
type keyMap struct {
	layout *Layout
	index  []int
}

// keyLayoutFor maps key columns to row columns by Avro field name and
// returns the key layout with each column named as the row names it.
// Debezium builds key schemas without column mappers, so a propagated
// __debezium.source.column.name ("Order ID") reaches the row's field but
// not the key's ("Order_ID"); the key layout takes the row's name.
func (d *Decoder) keyLayoutFor(kc, vc *compiled) (*Layout, []int, error) {
	k := uint64(uint32(kc.id))<<32 | uint64(uint32(vc.id))
	if v, ok := d.keyIndex.Load(k); ok {
		m := v.(keyMap)
		return m.layout, m.index, nil
	}
	m := keyMap{layout: kc.layout, index: make([]int, len(kc.layout.Columns))}
	for i, kcol := range kc.layout.Columns {
		j := vc.layout.indexAvro(kcol.AvroName)
		if j < 0 {
			return nil, nil, fmt.Errorf("%w: key column %q (schema %d) not in row (schema %d)", ErrUnsupportedSchema, kcol.AvroName, kc.id, vc.id)
		}
		m.index[i] = j
		if name := vc.layout.Columns[j].Name; name != kcol.Name {
			if m.layout == kc.layout {
				renamed := *kc.layout
				renamed.Columns = slices.Clone(kc.layout.Columns)
				m.layout = &renamed
			}
			m.layout.Columns[i].Name = name
		}
	}
	d.keyIndex.Store(k, m)
	return m.layout, m.index, nil
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
