package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// ErrSchema means a table cannot take a new source schema; errors.As a
// *SchemaError for the details.
var ErrSchema = errors.New("merge: table cannot take the new source schema")

// SchemaError stops one table: its source schema changed in a way the table
// cannot follow. The batch's offsets stay unapplied, so nothing is lost.
type SchemaError struct {
	Table  string
	Reason string
	// Remedy says what the operator can do.
	Remedy string
	Err    error
	// Record is the first record of the batch with the schema the table
	// cannot take (nil when the error is not about a record's schema).
	Record *Record
}

func (e *SchemaError) Error() string {
	msg := fmt.Sprintf("table %s: %s; %s", e.Table, e.Reason, e.Remedy)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrSchema and the cause.
func (e *SchemaError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrSchema}
	}
	return []error{ErrSchema, e.Err}
}

// deltaType maps a codecs type 1:1 onto a Delta primitive.
func deltaType(t codecs.Type) deltalog.Type {
	if t.Kind == codecs.KindDecimal {
		return deltalog.DecimalType{Precision: t.Precision, Scale: t.Scale}
	}
	return deltalog.PrimitiveType(t.DeltaName())
}

// sourceType recovers the codecs type of a table field.
func sourceType(f deltalog.StructField) (codecs.Type, bool) {
	name, _ := f.Metadata[cdctable.FieldMetaType].(string)
	if name == "" {
		name = f.Type.String()
	}
	if rest, ok := strings.CutPrefix(name, "decimal("); ok {
		p, s, ok := strings.Cut(strings.TrimSuffix(rest, ")"), ",")
		pi, err1 := strconv.Atoi(p)
		si, err2 := strconv.Atoi(s)
		if !ok || err1 != nil || err2 != nil {
			return codecs.Type{}, false
		}
		return codecs.DecimalType(pi, si), true
	}
	for k := codecs.KindBoolean; k <= codecs.KindTime; k++ {
		if k.String() == name && k != codecs.KindDecimal {
			return codecs.Type{Kind: k}, true
		}
	}
	return codecs.Type{}, false
}

// sourceField is the table field of source column c, named name: c.Name, or
// its portable name, which the field's metadata and comment then record.
func sourceField(c codecs.Column, name string, nullable bool) deltalog.StructField {
	meta := map[string]any{cdctable.FieldMetaType: c.Type.String()}
	comment := c.Comment
	if comment == "" && c.SourceType != "" {
		comment = "SQL Server " + c.SourceType
	}
	switch {
	case name != c.Name:
		meta[cdctable.FieldMetaSource] = c.Name
		if comment == "" {
			comment = renamedComment(c.Name, "") + " (" + c.Type.String() + ")"
		} else {
			comment = renamedComment(c.Name, comment)
		}
	case comment == "":
		// Without a propagated source type, say at least where it came from.
		comment = "source column " + c.Name + " (" + c.Type.String() + ")"
	}
	meta["comment"] = comment
	return deltalog.StructField{Name: name, Type: deltaType(c.Type), Nullable: nullable, Metadata: meta}
}

// newTableMetadata builds the schema, properties and protocol of a table
// created from its first change.
func (s *Sink) newTableMetadata(c *codecs.Change) (*deltalog.Metadata, deltalog.Protocol, error) {
	names := tableNames(c.Layout.Columns, s.opts.ColumnNames == ColumnNamesPortable)
	tableName := func(source string) string {
		if i := c.Layout.Index(source); i >= 0 {
			return names[i]
		}
		return source
	}
	keyNames := c.KeyLayout.Names()
	for i, k := range keyNames {
		keyNames[i] = tableName(k)
	}
	parts, err := partitionColumns(s.opts.TableName, s.opts.PartitionBy, c.Layout.Columns)
	if err != nil {
		return nil, deltalog.Protocol{}, err
	}
	for i, p := range parts {
		parts[i] = tableName(p)
	}
	st := &deltalog.StructType{}
	mapping := false
	for i, col := range c.Layout.Columns {
		nullable := col.Nullable
		if k := c.KeyLayout.Index(col.Name); k >= 0 && !c.KeyLayout.Columns[k].Nullable {
			nullable = false
		}
		if col.Type.Kind == codecs.KindString && slices.Contains(parts, names[i]) {
			// An empty string partition value is stored, and read, as null.
			nullable = true
		}
		st.Fields = append(st.Fields, sourceField(col, names[i], nullable))
		mapping = mapping || deltalog.NeedsColumnMapping(names[i])
	}
	st.Fields = append(st.Fields, cdctable.MetaFields(s.opts.DeleteMode == DeleteSoft)...)
	keys, err := json.Marshal(keyNames)
	if err != nil {
		return nil, deltalog.Protocol{}, err
	}
	conf := map[string]string{}
	for k, v := range s.opts.Properties {
		conf[k] = v
	}
	conf[cdctable.PropKeyColumns] = string(keys)
	conf[cdctable.PropDeleteMode] = string(s.opts.DeleteMode)
	conf[cdctable.PropSource] = c.Table.String()
	conf[cdctable.PropColumnNames] = string(s.opts.ColumnNames)
	if s.opts.newTableDeletionVectors() {
		conf[deltalog.PropEnableDeletionVectors] = "true"
	}
	if s.opts.EnableChangeDataFeed {
		// MinimalProtocol adds the changeDataFeed writer feature (or writer 4).
		conf[deltalog.PropEnableChangeDataFeed] = "true"
	}
	if cdfEnabled(conf) {
		if err := checkChangeDataColumns(st, s.opts.TableName); err != nil {
			return nil, deltalog.Protocol{}, err
		}
	}
	if mapping {
		var maxID int64
		st, maxID = deltalog.AssignColumnMapping(st, 0)
		conf[deltalog.PropColumnMappingMode] = "name"
		conf[deltalog.PropColumnMappingMaxID] = strconv.FormatInt(maxID, 10)
	}
	if err := st.Validate(); err != nil {
		return nil, deltalog.Protocol{}, &SchemaError{Table: s.opts.TableName, Reason: "the source schema does not make a valid Delta schema", Remedy: "rename the offending columns at the source or with a Debezium transform", Err: err}
	}
	ss, err := st.SchemaString()
	if err != nil {
		return nil, deltalog.Protocol{}, err
	}
	name := s.opts.TableName
	if name == "" {
		name = c.Table.Table
	}
	created := s.opts.Now().UnixMilli()
	meta := &deltalog.Metadata{
		ID:               uuid.NewString(),
		CreatedTime:      &created,
		Name:             name,
		Description:      fmt.Sprintf("Current state of SQL Server table %s, kept by cdc2delta from Debezium change events; key (%s)", c.Table, strings.Join(keyNames, ", ")),
		Format:           deltalog.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     ss,
		PartitionColumns: parts,
		Configuration:    conf,
	}
	// Never legacy reader 2 (ADR 0027): delta-rs's pyarrow reader reads such a
	// table as if it had no column mapping.
	return meta, deltalog.MinimalFeaturesProtocol(st, conf), nil
}

// tableColumns returns the source columns of a table schema (metadata
// columns excluded), for codecs.Evolve.
func tableColumns(st *deltalog.StructType) []codecs.Column {
	var cols []codecs.Column
	for _, f := range st.Fields {
		if cdctable.IsMetaColumn(f.Name) {
			continue
		}
		t, _ := sourceType(f)
		cols = append(cols, codecs.Column{Name: sourceName(f), Type: t, Nullable: f.Nullable})
	}
	return cols
}

// evolve returns the metadata (and protocol, when it must grow) that lets the
// table take changes of layout next; nil metadata means no change is needed.
func (s *Sink) evolve(st *tableState, c *codecs.Change) (*deltalog.Metadata, *deltalog.Protocol, error) {
	ev, err := codecs.Evolve(tableColumns(st.Schema), keySourceNames(st.Schema, st.KeyFields), c.Layout.Columns, c.KeyLayout.Names())
	if err != nil {
		return nil, nil, &SchemaError{Table: s.opts.TableName, Reason: "the source schema changed in a way the table cannot follow",
			Remedy: "recreate the table (or migrate it with Spark) and replay from the schema change; the offsets of this batch are not committed", Err: err}
	}
	if ev.Unchanged() {
		return nil, nil, nil
	}
	if dropped, added, ok := ev.SuspectedRename(); ok && st.meta.Configuration[cdctable.PropAcceptDropAdd] != cdctable.AcceptDropAdd(dropped.Name, added.Name) {
		re := &RenameError{Dropped: dropped.Name, Added: added.Name, Type: dropped.Type.DeltaName()}
		return nil, nil, &SchemaError{Table: s.opts.TableName, Reason: "a column may have been renamed at the source", Remedy: re.renameRemedy(), Err: re}
	}
	if len(ev.Widened) > 0 {
		names := make([]string, len(ev.Widened))
		for i, c := range ev.Widened {
			names[i] = c.Name
		}
		return nil, nil, &SchemaError{Table: s.opts.TableName, Reason: "columns " + strings.Join(names, ", ") + " widened their type",
			Remedy: "type widening is not supported yet: recreate the table and replay, the offsets of this batch are not committed"}
	}
	meta := st.meta
	next := &deltalog.StructType{Fields: slices.Clone(st.Schema.Fields)}
	relax := func(source string) {
		for i := range next.Fields {
			if !cdctable.IsMetaColumn(next.Fields[i].Name) && sourceName(next.Fields[i]) == source {
				next.Fields[i].Nullable = true
			}
		}
	}
	for _, c := range ev.Relaxed {
		relax(c.Name)
	}
	for _, c := range ev.Dropped {
		relax(c.Name)
	}
	mapping := deltalog.ColumnMappingMode(&meta) != "none"
	portable := portableTable(&meta, s.opts.ColumnNames)
	nm := newNamer(next.Fields)
	renamed := false
	// Added columns are appended: existing fields keep their positions and
	// names; a new column's portable name avoids every name the table has.
	for _, col := range ev.Added {
		name := col.Name
		switch {
		case portable && (deltalog.NeedsColumnMapping(name) || nm.taken[strings.ToLower(name)]):
			name = nm.portable(col.Name)
			renamed = true
		case !mapping && deltalog.NeedsColumnMapping(name):
			return nil, nil, &SchemaError{Table: s.opts.TableName, Reason: fmt.Sprintf("new column %q needs column mapping, which the table lacks", col.Name),
				Remedy: "enable column mapping on the table (cdc2delta alter TABLE --set delta.columnMapping.mode=name --upgrade-protocol; " +
					"readers and writers on a Delta without column mapping then lose access), " +
					"or set column_names: portable for the table (new columns then get names Delta takes, such as " + PortableName(col.Name) + "), and restart; the offsets of this batch are not committed"}
		default:
			nm.reserve(name)
		}
		next.Fields = append(next.Fields, sourceField(col, name, true))
	}
	conf := maps.Clone(meta.Configuration)
	if renamed {
		// The table's names are portable from now on, whatever the options say.
		conf[cdctable.PropColumnNames] = string(ColumnNamesPortable)
	}
	if mapping {
		var maxID int64
		next, maxID = deltalog.AssignColumnMapping(next, deltalog.MaxColumnID(conf))
		conf[deltalog.PropColumnMappingMaxID] = strconv.FormatInt(maxID, 10)
	}
	ss, err := next.SchemaString()
	if err != nil {
		return nil, nil, err
	}
	if deltalog.SameSchemaString(ss, meta.SchemaString) {
		// An older layout (its columns a subset of the table's) needs nothing.
		return nil, nil, nil
	}
	meta.SchemaString = ss
	meta.Configuration = conf
	var proto *deltalog.Protocol
	cur := st.proto
	need := deltalog.MinimalProtocol(next, conf)
	if cur.MinWriterVersion >= 7 {
		// Features, not the legacy versions that would list every feature they imply.
		need = deltalog.MinimalFeaturesProtocol(next, conf)
	}
	if up := deltalog.UpgradeProtocol(cur, need); !up.Equal(cur) {
		proto = &up
	}
	return &meta, proto, nil
}

// rowMapper turns the rows of one source layout into table rows.
type rowMapper struct {
	// src[i] is the layout column feeding table field i, or -1.
	src []int
}

func newRowMapper(st *deltalog.StructType, l *codecs.Layout) *rowMapper {
	m := &rowMapper{src: make([]int, len(st.Fields))}
	for i, f := range st.Fields {
		m.src[i] = -1
		if !cdctable.IsMetaColumn(f.Name) {
			m.src[i] = l.Index(sourceName(f))
		}
	}
	return m
}
