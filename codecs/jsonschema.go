package codecs

import (
	"fmt"
	"maps"
	"reflect"
	"strconv"
)

// jkind is a Kafka Connect schema type as JsonConverter writes it
// ("type": "int32", ...), with Decimal singled out: its JSON value is
// either base64 (decimal.format=BASE64) or a number (NUMERIC).
type jkind uint8

const (
	jBool jkind = iota
	jInt8
	jInt16
	jInt32
	jInt64
	jFloat32
	jFloat64
	jString
	jBytes
	jDecimal
	jStruct
	jArray
	jMap
	// jAny is any JSON value, read untyped (a declared table's source
	// and transaction blocks).
	jAny
)

var jkinds = map[string]jkind{
	"boolean": jBool, "int8": jInt8, "int16": jInt16, "int32": jInt32, "int64": jInt64,
	"float": jFloat32, "double": jFloat64, // Kafka JsonConverter's names for FLOAT32, FLOAT64
	"string": jString, "bytes": jBytes,
	"struct": jStruct, "array": jArray, "map": jMap,
}

// jnode is one compiled Connect schema.
type jnode struct {
	kind     jkind
	optional bool
	// strict refuses struct members that are not fields (declared
	// tables); JsonConverter ignores them.
	strict  bool
	name    string
	version any
	params  map[string]any
	scale   int // jDecimal
	fields  []jfield
	byName  map[string]int
	elem    *jnode // jArray items, jMap values
	key     *jnode // jMap keys
}

type jfield struct {
	name string
	node *jnode
}

// connectNode compiles a Connect schema object, per Kafka's JsonConverter
// (asConnectSchema): type, optional, name, version, parameters, and fields
// (each with "field"), items, keys, values.
func connectNode(v any, depth int) (*jnode, error) {
	if depth > 64 {
		return nil, fmt.Errorf("%w: connect schema nested deeper than 64", ErrUnsupportedSchema)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: connect schema is %T, not an object", ErrUnsupportedSchema, v)
	}
	typ, _ := m["type"].(string)
	k, ok := jkinds[typ]
	if !ok {
		return nil, fmt.Errorf("%w: connect type %q", ErrUnsupportedSchema, m["type"])
	}
	n := &jnode{kind: k, version: m["version"]}
	n.optional, _ = m["optional"].(bool)
	n.name, _ = m["name"].(string)
	if p, ok := m["parameters"].(map[string]any); ok {
		n.params = p
	}
	switch k {
	case jBytes:
		if n.name == nameDecimal {
			n.kind = jDecimal
			s, _ := n.params["scale"].(string)
			sc, err := strconv.Atoi(s)
			if err != nil || sc < 0 || sc > 38 {
				return nil, fmt.Errorf("%w: decimal scale %q", ErrUnsupportedSchema, s)
			}
			n.scale = sc
		}
	case jStruct:
		fields, _ := m["fields"].([]any)
		n.byName = make(map[string]int, len(fields))
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			name, ok := fm["field"].(string)
			if !ok {
				return nil, fmt.Errorf("%w: struct %s: field without a name", ErrUnsupportedSchema, n.name)
			}
			if _, dup := n.byName[name]; dup {
				return nil, fmt.Errorf("%w: struct %s: field %q twice", ErrUnsupportedSchema, n.name, name)
			}
			child, err := connectNode(fm, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", name, err)
			}
			n.byName[name] = len(n.fields)
			n.fields = append(n.fields, jfield{name: name, node: child})
		}
	case jArray:
		var err error
		if n.elem, err = connectNode(m["items"], depth+1); err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
	case jMap:
		var err error
		if n.key, err = connectNode(m["keys"], depth+1); err != nil {
			return nil, fmt.Errorf("keys: %w", err)
		}
		if n.elem, err = connectNode(m["values"], depth+1); err != nil {
			return nil, fmt.Errorf("values: %w", err)
		}
	}
	return n, nil
}

// avroField renders a struct field as the Avro field Confluent's
// AvroConverter writes for it (AvroData.fromConnectSchema): the primitive,
// connect.type for int8/int16, connect.name, connect.version and
// connect.parameters, and [null, T] when optional. deriveColumn then maps
// it exactly as it maps a registry schema, so both converters give one
// layout.
func avroField(f jfield) map[string]any {
	n := f.node
	prim := map[jkind]string{
		jBool: "boolean", jInt8: "int", jInt16: "int", jInt32: "int", jInt64: "long",
		jFloat32: "float", jFloat64: "double", jString: "string", jBytes: "bytes", jDecimal: "bytes",
		jStruct: "record", jArray: "array", jMap: "map",
	}[n.kind]
	props := map[string]any{"type": prim}
	switch n.kind {
	case jInt8:
		props["connect.type"] = connectTypeInt8
	case jInt16:
		props["connect.type"] = connectTypeInt16
	}
	if n.name != "" {
		props["connect.name"] = n.name
	}
	if n.version != nil {
		props["connect.version"] = n.version
	}
	if n.params != nil {
		props["connect.parameters"] = n.params
	}
	var typ any = props
	if n.optional {
		typ = []any{"null", props}
	}
	return map[string]any{"name": f.name, "type": typ}
}

// sameImages reports whether an envelope's before and after fields, when
// both are present, have one schema: the layout is derived from one of them
// and decodes both.
func sameImages(schema any) bool {
	fields, _ := schema.(map[string]any)["fields"].([]any)
	var images []map[string]any
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		if name := fm["field"]; name == "before" || name == "after" {
			img := maps.Clone(fm)
			delete(img, "field")
			images = append(images, img)
		}
	}
	return len(images) != 2 || reflect.DeepEqual(images[0], images[1])
}

// jsonPlan is what a Connect schema compiles to besides its layout.
type jsonPlan struct {
	root *jnode
	// row is the row struct of an envelope (the type of before/after),
	// the key struct for a key schema.
	row *jnode
	// bare marks a declared table's records: the payload is the whole
	// record, not the payload member.
	bare bool
}

// rooted finishes the path of an error inside a payload.
func (p *jsonPlan) rooted(err error) error {
	if !p.bare {
		err = in(err, "payload")
	}
	return rooted(err)
}

// compileJSON compiles one Connect schema (the "schema" member of a
// JsonConverter message, as encoding/json parsed it) under a decoder-local
// id.
func compileJSON(id int, v any, opts *Options) (*compiled, error) {
	root, err := connectNode(v, 0)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if !sameImages(v) {
		return nil, fmt.Errorf("%w: envelope %s: before and after have different schemas", ErrUnsupportedSchema, root.name)
	}
	if root.kind != jStruct {
		return nil, fmt.Errorf("%w: top-level connect schema is %s, not a struct", ErrUnsupportedSchema, v.(map[string]any)["type"])
	}
	return compileConnect(id, root, opts)
}

func compileConnect(id int, root *jnode, opts *Options) (*compiled, error) {
	c := &compiled{id: id, json: &jsonPlan{root: root, row: root}}
	has := func(n string) bool { _, ok := root.byName[n]; return ok }
	if has("status") && has("id") && has("data_collections") && !has("op") {
		c.transaction = true
		c.layout = &Layout{SchemaID: id, Name: root.name}
		return c, nil
	}
	if has("op") && has("source") {
		c.envelope = true
		c.json.row = nil
		for _, name := range []string{"after", "before"} {
			if i, ok := root.byName[name]; ok && root.fields[i].node.kind == jStruct {
				c.json.row = root.fields[i].node
				break
			}
		}
		if c.json.row == nil {
			return nil, fmt.Errorf("%w: envelope %s without a row struct", ErrUnsupportedSchema, root.name)
		}
	}
	l := &Layout{SchemaID: id, Name: c.json.row.name, Columns: make([]Column, 0, len(c.json.row.fields))}
	for _, f := range c.json.row.fields {
		col, err := deriveColumn(avroField(f), opts)
		if err != nil {
			return nil, fmt.Errorf("struct %s: %w", l.Name, err)
		}
		l.Columns = append(l.Columns, col)
	}
	if src, ok := root.byName["source"]; ok && c.envelope {
		node := root.fields[src].node
		if binlogSource(func(n string) bool { _, ok := node.byName[n]; return ok }) {
			binlogDurations(l)
		}
	}
	c.layout = l
	return c, nil
}
