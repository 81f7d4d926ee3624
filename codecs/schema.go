package codecs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/linkedin/goavro/v2"
)

// compiled is everything derived from one registry schema id: built once,
// then read concurrently without locks.
type compiled struct {
	id    int
	codec *goavro.Codec
	// layout is the row layout for an envelope, or the record's own layout
	// for a key schema.
	layout   *Layout
	envelope bool
	// plan decodes envelopes without materializing unused parts; nil when
	// the envelope has a shape the plan does not cover.
	plan *envPlan
	// row decodes a key record without goavro; nil for envelopes and
	// shapes it does not cover.
	row *rowDecoder
	// transaction marks a transaction topic's value schema
	// (TransactionMetadataValue); its layout has no columns.
	transaction bool
	// json is set instead of codec, plan and row for a Kafka Connect
	// schema read from a JsonConverter message.
	json *jsonPlan
}

// compile parses the Avro schema text of one id and derives its layout.
func compile(id int, text string, opts *Options) (*compiled, error) {
	var root any
	if err := json.Unmarshal([]byte(text), &root); err != nil {
		return nil, fmt.Errorf("%w: schema %d: %v", ErrUnsupportedSchema, id, err)
	}
	rec, ok := root.(map[string]any)
	if !ok || rec["type"] != "record" {
		return nil, fmt.Errorf("%w: schema %d: top level is not a record", ErrUnsupportedSchema, id)
	}
	names := map[string]map[string]any{}
	collectNames(root, "", names)

	c := &compiled{id: id}
	if isTransactionValue(rec) {
		return compileTransaction(c, root, rec)
	}
	rowRec := rec
	if env := envelopeRow(rec, names); env != nil {
		c.envelope = true
		rowRec = env
	} else if hasField(rec, "op") {
		return nil, fmt.Errorf("%w: schema %d: envelope without a row record", ErrUnsupportedSchema, id)
	}
	layout, err := deriveLayout(id, rowRec, namespaceOf(rec), opts)
	if err != nil {
		return nil, fmt.Errorf("schema %d: %w", id, err)
	}
	c.layout = layout
	if c.envelope && binlogSource(avroSourceFields(rec, names)) {
		binlogDurations(layout)
	}

	// goavro would turn decimals into *big.Rat and timestamps into
	// time.Time; this package converts those itself from the raw
	// bytes/longs, so the codec is built from a copy without logical types.
	stripLogicalTypes(root)
	plain, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("%w: schema %d: %v", ErrUnsupportedSchema, id, err)
	}
	if c.codec, err = goavro.NewCodec(string(plain)); err != nil {
		return nil, fmt.Errorf("%w: schema %d: %v", ErrUnsupportedSchema, id, err)
	}
	if !c.envelope {
		if c.row, err = newRowDecoder(rec, namespaceOf(rec), names, layout); err != nil {
			opts.Logger.Info("key decoded by goavro", "schema_id", id, "reason", err)
		}
		return c, nil
	}
	var rowErr error
	if c.plan, rowErr, err = buildPlan(rec, names, layout); err != nil {
		opts.Logger.Info("envelope decoded by goavro alone", "schema_id", id, "reason", err)
		c.plan = nil
	} else if rowErr != nil {
		opts.Logger.Info("row images decoded by goavro", "schema_id", id, "reason", rowErr)
	}
	return c, nil
}

func hasField(rec map[string]any, name string) bool {
	fields, _ := rec["fields"].([]any)
	for _, f := range fields {
		if fm, ok := f.(map[string]any); ok && fm["name"] == name {
			return true
		}
	}
	return false
}

// envelopeRow returns the row record of a Debezium envelope (the type of
// its before/after fields), or nil when rec is not an envelope.
func envelopeRow(rec map[string]any, names map[string]map[string]any) map[string]any {
	if !hasField(rec, "op") || !hasField(rec, "source") {
		return nil
	}
	fields, _ := rec["fields"].([]any)
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		if fm == nil || (fm["name"] != "after" && fm["name"] != "before") {
			continue
		}
		branches, ok := fm["type"].([]any)
		if !ok {
			continue
		}
		for _, b := range branches {
			switch t := b.(type) {
			case map[string]any:
				if t["type"] == "record" {
					return t
				}
			case string:
				if r := names[t]; r != nil {
					return r
				}
				if r := names[namespaceOf(rec)+"."+t]; r != nil {
					return r
				}
			}
		}
	}
	return nil
}

func namespaceOf(rec map[string]any) string {
	name, _ := rec["name"].(string)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[:i]
	}
	ns, _ := rec["namespace"].(string)
	return ns
}

// collectNames indexes every named record by full name (and short name),
// so by-name references (after: ["null","Value"]) resolve.
func collectNames(node any, ns string, names map[string]map[string]any) {
	switch n := node.(type) {
	case []any:
		for _, b := range n {
			collectNames(b, ns, names)
		}
	case map[string]any:
		if n["type"] == "record" || n["type"] == "enum" || n["type"] == "fixed" {
			name, _ := n["name"].(string)
			if s, ok := n["namespace"].(string); ok && !strings.Contains(name, ".") {
				ns = s
			}
			full := name
			if !strings.Contains(name, ".") && ns != "" {
				full = ns + "." + name
			} else if i := strings.LastIndexByte(name, '.'); i >= 0 {
				ns = name[:i]
			}
			names[full] = n
			if _, taken := names[name]; !taken {
				names[name] = n
			}
		}
		if fields, ok := n["fields"].([]any); ok {
			for _, f := range fields {
				if fm, ok := f.(map[string]any); ok {
					collectNames(fm["type"], ns, names)
				}
			}
		}
		if t, ok := n["type"].(map[string]any); ok {
			collectNames(t, ns, names)
		}
		if t, ok := n["type"].([]any); ok {
			collectNames(t, ns, names)
		}
	}
}

func stripLogicalTypes(node any) {
	switch n := node.(type) {
	case []any:
		for _, b := range n {
			stripLogicalTypes(b)
		}
	case map[string]any:
		delete(n, "logicalType")
		for _, v := range n {
			stripLogicalTypes(v)
		}
	}
}

// deriveLayout maps every field of a row (or key) record to a Column.
func deriveLayout(id int, rec map[string]any, enclosingNS string, opts *Options) (*Layout, error) {
	name, _ := rec["name"].(string)
	if !strings.Contains(name, ".") {
		ns, ok := rec["namespace"].(string)
		if !ok {
			ns = enclosingNS
		}
		if ns != "" {
			name = ns + "." + name
		}
	}
	fields, _ := rec["fields"].([]any)
	l := &Layout{SchemaID: id, Name: name, Columns: make([]Column, 0, len(fields))}
	for _, f := range fields {
		fm, ok := f.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: record %s: malformed field", ErrUnsupportedSchema, name)
		}
		col, err := deriveColumn(fm, opts)
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", name, err)
		}
		l.Columns = append(l.Columns, col)
	}
	return l, nil
}

// binlogSource reports whether a source block with these fields is one of
// Debezium's binlog connectors' (MySQL, MariaDB).
func binlogSource(has func(string) bool) bool {
	return has("file") && has("pos") && has("row") && !has("lsn")
}

// avroSourceFields returns a lookup of the envelope rec's source record's
// fields.
func avroSourceFields(rec map[string]any, names map[string]map[string]any) func(string) bool {
	var src map[string]any
	fields, _ := rec["fields"].([]any)
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		if fm == nil || fm["name"] != "source" {
			continue
		}
		switch t := fm["type"].(type) {
		case map[string]any:
			src = t
		case string:
			if src = names[t]; src == nil {
				src = names[namespaceOf(rec)+"."+t]
			}
		}
	}
	return func(name string) bool { return src != nil && hasField(src, name) }
}

// binlogDurations retypes the time columns of a MySQL/MariaDB table. Their
// TIME is a duration from -838:59:59 to 838:59:59, which Debezium sends as
// MicroTime like a time of day: a Delta long of microseconds, any sign.
func binlogDurations(l *Layout) {
	const unit = "time of day in microseconds since midnight"
	for i := range l.Columns {
		c := &l.Columns[i]
		if c.Type.Kind != KindTime || c.conv != convTimeMicros {
			continue
		}
		c.Type, c.conv = Type{Kind: KindLong}, convDurationMicros
		c.Comment = strings.Replace(c.Comment, unit, "MySQL TIME: a duration in microseconds, -838:59:59 to 838:59:59", 1)
	}
}

func deriveColumn(field map[string]any, opts *Options) (Column, error) {
	avroName, _ := field["name"].(string)
	col := Column{Name: avroName, AvroName: avroName}
	typ := field["type"]
	if branches, ok := typ.([]any); ok {
		var rest []any
		for _, b := range branches {
			if b == "null" {
				col.Nullable = true
				continue
			}
			rest = append(rest, b)
		}
		if len(rest) != 1 {
			return col, fmt.Errorf("%w: column %q: union %v is not [null, T]", ErrUnsupportedSchema, avroName, branches)
		}
		typ = rest[0]
	}
	props, _ := typ.(map[string]any)
	prim, _ := typ.(string)
	if props != nil {
		prim, _ = props["type"].(string)
	}
	params, _ := props["connect.parameters"].(map[string]any)
	if orig, ok := params["__debezium.source.column.name"].(string); ok && orig != "" {
		col.Name = orig
	}
	src := sourceTypeOf(params)
	col.SourceType = src.render()
	col.Comment = col.SourceType
	if c, ok := params["__debezium.source.column.comment"].(string); ok && c != "" {
		col.Comment = c
		if col.SourceType != "" {
			col.Comment += " (" + col.SourceType + ")"
		}
	}
	col.branch = prim
	t, cv, err := mapType(prim, props, src, opts)
	if err != nil {
		return col, fmt.Errorf("column %q: %w", avroName, err)
	}
	col.Type, col.conv = t, cv
	if t.Kind == KindTime {
		// A Delta long says nothing about its unit; the comment does.
		const unit = "time of day in microseconds since midnight"
		if col.Comment == "" {
			col.Comment = unit
		} else {
			col.Comment += "; " + unit
		}
	}
	return col, nil
}

// sourceType is the SQL Server type the connector propagated, if any.
type sourceType struct {
	name          string // upper case, e.g. "DECIMAL"
	length, scale int
	hasLen, hasSc bool
}

func sourceTypeOf(params map[string]any) sourceType {
	var s sourceType
	s.name, _ = params["__debezium.source.column.type"].(string)
	s.name = strings.ToUpper(s.name)
	if v, ok := params["__debezium.source.column.length"].(string); ok {
		s.length, s.hasLen = atoi(v)
	}
	if v, ok := params["__debezium.source.column.scale"].(string); ok {
		s.scale, s.hasSc = atoi(v)
	}
	return s
}

func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// render prints the type as a DBA would write it.
func (s sourceType) render() string {
	switch s.name {
	case "":
		return ""
	case "DECIMAL", "NUMERIC":
		if s.hasLen {
			return s.name + "(" + strconv.Itoa(s.length) + "," + strconv.Itoa(s.scale) + ")"
		}
	case "CHAR", "VARCHAR", "NCHAR", "NVARCHAR", "BINARY", "VARBINARY":
		if s.hasLen {
			// max types report 2^31-1 (or 2^30-1 for nvarchar(max)).
			if s.length >= 1<<30-1 || s.length <= 0 {
				return s.name + "(max)"
			}
			return s.name + "(" + strconv.Itoa(s.length) + ")"
		}
	case "DATETIME2", "DATETIMEOFFSET", "TIME":
		if s.hasSc {
			return s.name + "(" + strconv.Itoa(s.scale) + ")"
		}
	}
	return s.name
}

func (s sourceType) isDecimal() bool {
	switch s.name {
	case "DECIMAL", "NUMERIC", "MONEY", "SMALLMONEY":
		return true
	}
	return false
}

func (s sourceType) isBinary() bool {
	switch s.name {
	case "BINARY", "VARBINARY", "IMAGE", "TIMESTAMP", "ROWVERSION", "GEOMETRY", "GEOGRAPHY", "HIERARCHYID":
		return true
	}
	return false
}

// decimalShape returns the precision and scale of a propagated decimal type.
func (s sourceType) decimalShape() (p, sc int) {
	switch s.name {
	case "MONEY":
		return 19, 4
	case "SMALLMONEY":
		return 10, 4
	}
	p, sc = 18, 0 // numeric without arguments
	if s.hasLen {
		p = s.length
	}
	if s.hasSc {
		sc = s.scale
	}
	return p, sc
}
