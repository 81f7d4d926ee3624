package codecs

import (
	"fmt"
	"slices"
	"strconv"
)

// DeclaredTable types the records of a topic written by Kafka's
// JsonConverter with schemas.enable=false, which carry no schema: the row's
// columns and the key columns, by name. A payload field that is not
// declared is refused, never guessed.
type DeclaredTable struct {
	// Key names the key columns, in the order of the record key's fields.
	Key []string
	// Columns are the row's columns in table order.
	Columns []DeclaredColumn
}

// DeclaredColumn is one column as a Kafka Connect schema would describe it.
type DeclaredColumn struct {
	Name string
	// Type is the Connect type: boolean, int8, int16, int32, int64,
	// float, double, string or bytes (JsonConverter's names).
	Type string
	// Logical is the Connect or Debezium semantic type name the connector
	// writes as the schema's name (org.apache.kafka.connect.data.Decimal,
	// io.debezium.time.MicroTimestamp, ...); empty for none.
	Logical string
	// Scale and Precision are a Decimal's.
	Scale, Precision int
	Optional         bool
}

// declaredPlan is a declaration compiled like a Connect schema.
type declaredPlan struct {
	value, key *compiled
}

// compileDeclared compiles each topic's declaration under negative ids,
// apart from the ones JsonConverter schemas get (which count from 1).
func compileDeclared(decl map[string]DeclaredTable, opts *Options) (map[string]*declaredPlan, error) {
	out := make(map[string]*declaredPlan, len(decl))
	id := -1
	for _, topic := range sortedKeys(decl) {
		p, err := compileDeclaredTable(topic, decl[topic], &id, opts)
		if err != nil {
			return nil, fmt.Errorf("codecs: declared schema of topic %q: %w", topic, err)
		}
		out[topic] = p
	}
	return out, nil
}

func sortedKeys(m map[string]DeclaredTable) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func compileDeclaredTable(topic string, t DeclaredTable, id *int, opts *Options) (*declaredPlan, error) {
	if len(t.Columns) == 0 {
		return nil, fmt.Errorf("%w: no columns", ErrUnsupportedSchema)
	}
	if len(t.Key) == 0 {
		return nil, fmt.Errorf("%w: no key columns", ErrUnsupportedSchema)
	}
	row := &jnode{kind: jStruct, optional: true, strict: true, name: topic + ".Value", byName: map[string]int{}}
	for _, c := range t.Columns {
		n, err := declaredNode(c)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		if _, dup := row.byName[c.Name]; dup || c.Name == "" {
			return nil, fmt.Errorf("%w: column name %q empty or twice", ErrUnsupportedSchema, c.Name)
		}
		row.byName[c.Name] = len(row.fields)
		row.fields = append(row.fields, jfield{name: c.Name, node: n})
	}
	key := &jnode{kind: jStruct, strict: true, name: topic + ".Key", byName: map[string]int{}}
	for _, k := range t.Key {
		i, ok := row.byName[k]
		if !ok {
			return nil, fmt.Errorf("%w: key column %q is not a declared column", ErrUnsupportedSchema, k)
		}
		n := *row.fields[i].node
		n.optional = false
		key.byName[k] = len(key.fields)
		key.fields = append(key.fields, jfield{name: k, node: &n})
	}
	anything := &jnode{kind: jAny, optional: true}
	env := &jnode{kind: jStruct, name: topic + ".Envelope", byName: map[string]int{}}
	for _, f := range []jfield{{"before", row}, {"after", row}, {"source", anything}, {"op", &jnode{kind: jString}}, {"transaction", anything}} {
		env.byName[f.name] = len(env.fields)
		env.fields = append(env.fields, f)
	}
	p := &declaredPlan{}
	var err error
	if p.value, err = compileConnect(*id, env, opts); err != nil {
		return nil, err
	}
	if p.key, err = compileConnect(*id-1, key, opts); err != nil {
		return nil, err
	}
	p.value.json.bare, p.key.json.bare = true, true
	*id -= 2
	return p, nil
}

func declaredNode(c DeclaredColumn) (*jnode, error) {
	k, ok := jkinds[c.Type]
	if !ok || k >= jStruct {
		return nil, fmt.Errorf("%w: type %q: want boolean, int8, int16, int32, int64, float, double, string or bytes", ErrUnsupportedSchema, c.Type)
	}
	n := &jnode{kind: k, optional: c.Optional, name: c.Logical}
	if c.Logical == nameDecimal {
		if k != jBytes || c.Scale < 0 || c.Precision < 1 || c.Precision > 38 || c.Scale > c.Precision {
			return nil, fmt.Errorf("%w: decimal(%d,%d) of type %s", ErrUnsupportedSchema, c.Precision, c.Scale, c.Type)
		}
		n.kind, n.scale = jDecimal, c.Scale
		n.params = map[string]any{"scale": strconv.Itoa(c.Scale), "connect.decimal.precision": strconv.Itoa(c.Precision)}
	}
	return n, nil
}

// decodeDeclared is Decode for a topic whose records carry no schema.
func (d *Decoder) decodeDeclared(p *declaredPlan, key, value []byte) (Change, error) {
	var ch Change
	if len(value) != 0 {
		if err := d.jsonEnvelope(p.value, jscan{b: value}, &ch); err != nil {
			return Change{}, &DecodeError{SchemaID: -1, Err: err}
		}
		if ch.Op == OpTruncate {
			return ch, nil
		}
	} else {
		ch.Op = OpTombstone
	}
	if len(key) == 0 {
		if ch.Op == OpTombstone {
			return ch, nil
		}
		if err := d.keyFromRow(p.value, &ch); err != nil {
			return Change{}, &DecodeError{SchemaID: -1, Err: err}
		}
		return ch, nil
	}
	vals := make([]any, len(p.key.layout.Columns))
	s := jscan{b: key}
	err := s.row(p.key.json.row, vals)
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return Change{}, &DecodeError{SchemaID: -1, Err: fmt.Errorf("key: %w", rooted(err))}
	}
	if err := d.finishKey(p.key, vals); err != nil {
		return Change{}, &DecodeError{SchemaID: -1, Err: err}
	}
	ch.Key, ch.KeyLayout = vals, p.key.layout
	if ch.Op == OpTombstone {
		return ch, nil
	}
	if ch.KeyLayout, ch.KeyIndex, err = d.keyLayoutFor(p.key, p.value); err != nil {
		return Change{}, &DecodeError{SchemaID: -1, Err: err}
	}
	return ch, nil
}
