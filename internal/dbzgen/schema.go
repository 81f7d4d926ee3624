package dbzgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/linkedin/goavro/v2"
)

// Table is a table definition compiled under the generator's options: its
// topic, Avro schemas and codecs. Build it with [Generator.Table]; it
// remembers the schema ids of the generator's registry, so encode it only
// with that generator. It is safe for concurrent use.
type Table struct {
	def     TableDef
	opts    Options
	topic   string
	columns []tableColumn
	key     []int // indexes into columns, in key order

	keySchema, valueSchema string
	keyCodec, valueCodec   *goavro.Codec

	mu struct {
		sync.Mutex
		keyID, valueID int // 0 until registered
	}
}

// tableColumn is a captured column.
type tableColumn struct {
	Column
	field string // the Avro field name after adjustment
	sql   sqlType
	typ   columnType
	// keyParams are the connect.parameters of the column's key field:
	// Debezium builds key fields without column mappers, so without the
	// propagated source type.
	keyParams object
}

func newTable(def TableDef, o Options) (*Table, error) {
	t := &Table{def: def, opts: o, topic: topicName(o.Prefix, def)}
	seen := map[string]bool{}
	for _, c := range def.Columns {
		st, err := parseType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		ct, captured, err := newColumnType(st, o)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		if !captured {
			continue // sql_variant: Debezium drops it with a warning
		}
		field, err := adjustName(c.Name, o.NameAdjustment)
		if err != nil {
			return nil, err
		}
		if seen[field] {
			return nil, fmt.Errorf("%w: two columns adjust to field %q", ErrBadTable, field)
		}
		seen[field] = true
		keyParams := ct.connect.params
		if o.PropagateSourceTypes {
			ct.connect.params = append(append(object{}, ct.connect.params...), sourceParams(c, st)...)
		}
		if c.Default != nil {
			if ct.connect.def, err = defaultValue(ct, c.Default); err != nil {
				return nil, fmt.Errorf("column %q: %w", c.Name, err)
			}
			ct.connect.hasDef = true
		}
		t.columns = append(t.columns, tableColumn{Column: c, field: field, sql: st, typ: ct, keyParams: keyParams})
	}
	for _, k := range def.Key {
		i := t.column(k)
		if i < 0 {
			return nil, fmt.Errorf("%w: key column %q is not a captured column", ErrBadTable, k)
		}
		t.key = append(t.key, i)
	}
	if err := t.compile(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Table) column(name string) int {
	for i, c := range t.columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// topicName is <prefix>.<db>.<schema>.<table> with characters Kafka refuses
// replaced by '_' (brief §1.1).
func topicName(prefix string, def TableDef) string {
	name := strings.Join([]string{prefix, def.Database, def.Schema, def.Name}, ".")
	return strings.Map(func(r rune) rune {
		if isLetter(r) || isDigit(r) || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, name)
}

// Topic is the Kafka topic Debezium writes the table's changes to.
func (t *Table) Topic() string { return t.topic }

// Def returns the definition the table was built from.
func (t *Table) Def() TableDef { return t.def }

// KeySchema is the key's Avro schema text, or "" for a table without key.
func (t *Table) KeySchema() string { return t.keySchema }

// ValueSchema is the envelope's Avro schema text.
func (t *Table) ValueSchema() string { return t.valueSchema }

// KeySubject is the subject the key schema is registered under
// (TopicNameStrategy).
func (t *Table) KeySubject() string { return t.topic + "-key" }

// ValueSubject is the subject the envelope schema is registered under.
func (t *Table) ValueSubject() string { return t.topic + "-value" }

// FieldName returns the Avro field name of a SQL Server column, and false
// for a column the table does not capture.
func (t *Table) FieldName(column string) (string, bool) {
	i := t.column(column)
	if i < 0 {
		return "", false
	}
	return t.columns[i].field, true
}

func (t *Table) compile() error {
	var err error
	if len(t.key) > 0 {
		fields := make([]any, len(t.key))
		for i, k := range t.key {
			fields[i] = t.columns[k].keyFieldSchema()
		}
		key := object{}.set("type", "record").set("name", "Key").set("namespace", t.topic).
			set("fields", fields).set("connect.name", t.topic+".Key")
		if t.keySchema, t.keyCodec, err = compileSchema(key); err != nil {
			return fmt.Errorf("key schema of %s: %w", t.topic, err)
		}
	}
	if t.valueSchema, t.valueCodec, err = compileSchema(t.envelope()); err != nil {
		return fmt.Errorf("value schema of %s: %w", t.topic, err)
	}
	return nil
}

func compileSchema(o object) (string, *goavro.Codec, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return "", nil, err
	}
	c, err := goavro.NewCodec(string(b))
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrBadTable, err)
	}
	return string(b), c, nil
}

// keyFieldSchema is the column's field in the key record.
func (c tableColumn) keyFieldSchema() object {
	c.typ.connect.params = c.keyParams
	return c.fieldSchema()
}

// fieldSchema is the record field. Nullable columns are ["null", T] with
// default null, or [T, "null"] with the SQL default when there is one
// (AvroData puts the branch matching the default first).
func (c tableColumn) fieldSchema() object {
	f := object{}.set("name", c.field)
	t := c.typ.connect
	switch {
	case c.Nullable && t.hasDef:
		return f.set("type", []any{t.schema(), "null"}).set("default", t.def)
	case c.Nullable:
		return f.set("type", []any{"null", t.schema()}).set("default", nil)
	case t.hasDef:
		return f.set("type", t.schema()).set("default", t.def)
	}
	return f.set("type", t.schema())
}

// defaultValue encodes a SQL default as the Avro JSON default.
func defaultValue(ct columnType, v any) (any, error) {
	n, err := ct.encode(v)
	if err != nil {
		return nil, fmt.Errorf("%w: default: %v", ErrBadTable, err)
	}
	switch n.(type) {
	case bool, int32, int64, float32, float64, string:
		return n, nil
	}
	return nil, fmt.Errorf("%w: defaults of %s columns are not supported", ErrBadTable, ct.connect.branch())
}

func optional(t any) []any { return []any{"null", t} }

func nullField(name string, t any) object {
	return object{}.set("name", name).set("type", optional(t)).set("default", nil)
}

func field(name string, t any) object { return object{}.set("name", name).set("type", t) }

// envelope builds the value schema for the table under the layout.
func (t *Table) envelope() object {
	l := t.opts.Layout
	fields := make([]any, len(t.columns))
	for i, c := range t.columns {
		fields[i] = c.fieldSchema()
	}
	value := object{}.set("type", "record").set("name", "Value").set("fields", fields).
		set("connect.name", t.topic+".Value")

	env := []any{
		nullField("before", value),
		nullField("after", "Value"),
		field("source", sourceSchema(l)),
	}
	tx := nullField("transaction", transactionSchema())
	ts := []any{nullField("ts_ms", "long")}
	if l != Layout25 {
		ts = append(ts, nullField("ts_us", "long"), nullField("ts_ns", "long"))
	}
	switch l {
	case Layout25, Layout26:
		env = append(append(append(env, field("op", "string")), ts...), tx)
	default:
		env = append(append(env, tx, field("op", "string")), ts...)
	}
	version := 2
	if l == Layout25 {
		version = 1
	}
	return object{}.set("type", "record").set("name", "Envelope").set("namespace", t.topic).
		set("fields", env).set("connect.version", version).set("connect.name", t.topic+".Envelope")
}

// sourceSchema is io.debezium.connector.sqlserver.Source (brief §2.1).
func sourceSchema(l Layout) object {
	allowed := "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"
	if l != Layout31 {
		allowed = "true,last,false,incremental"
	}
	enum := object{}.set("type", "string").set("connect.version", 1).
		set("connect.parameters", object{}.set("allowed", allowed)).
		set("connect.default", "false").set("connect.name", nameEnum)
	fields := []any{
		field("version", "string"),
		field("connector", "string"),
		field("name", "string"),
		field("ts_ms", "long"),
		object{}.set("name", "snapshot").set("type", []any{enum, "null"}).set("default", "false"),
		field("db", "string"),
		nullField("sequence", "string"),
	}
	switch l {
	case Layout25:
	case Layout26:
		fields = append(fields, field("ts_us", "long"), field("ts_ns", "long"))
	default:
		fields = append(fields, nullField("ts_us", "long"), nullField("ts_ns", "long"))
	}
	fields = append(fields,
		field("schema", "string"),
		field("table", "string"),
		nullField("change_lsn", "string"),
		nullField("commit_lsn", "string"),
		nullField("event_serial_no", "long"),
	)
	s := object{}.set("type", "record").set("name", "Source").set("namespace", "io.debezium.connector.sqlserver").
		set("fields", fields)
	if l == Layout31 {
		s = s.set("connect.version", 1)
	}
	return s.set("connect.name", "io.debezium.connector.sqlserver.Source")
}

// transactionSchema is the event.block record (brief §7).
func transactionSchema() object {
	return object{}.set("type", "record").set("name", "block").set("namespace", "event").
		set("fields", []any{
			field("id", "string"),
			field("total_order", "long"),
			field("data_collection_order", "long"),
		}).
		set("connect.version", 1).set("connect.name", "event.block")
}
