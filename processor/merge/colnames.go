package merge

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// ColumnNames says how a new table names the source columns Delta refuses without
// column mapping (a space or one of ,;{}()= tab newline, as SQL Server's
// [Unit Price]); ADR 0027.
type ColumnNames string

// Column naming choices.
const (
	// ColumnNamesMapped keeps the source name and turns on column mapping
	// (delta.columnMapping.mode = name) when a name needs it, which readers
	// without column mapping support cannot open (delta-rs's to_pandas,
	// polars).
	ColumnNamesMapped ColumnNames = "mapped"
	// ColumnNamesPortable renames such a column (PortableName: "Unit Price"
	// becomes "Unit_Price") and needs no column mapping; the column comment
	// keeps the source name.
	ColumnNamesPortable ColumnNames = "portable"
)

// PortableName is the name a column gets in a portable table: every character
// Delta refuses without column mapping becomes "_", as Debezium's
// field.name.adjustment.mode=avro writes them ("Qty (kg)" becomes "Qty__kg_").
// Other names are returned as they are.
func PortableName(name string) string {
	if !deltalog.NeedsColumnMapping(name) {
		return name
	}
	return strings.Map(func(r rune) rune {
		if deltalog.NeedsColumnMapping(string(r)) {
			return '_'
		}
		return r
	}, name)
}

// sourceName is the source column a table field holds.
func sourceName(f deltalog.StructField) string {
	if s, ok := f.Metadata[cdctable.FieldMetaSource].(string); ok && s != "" {
		return s
	}
	return f.Name
}

// portableTable reports whether new columns of the table get portable names:
// the table says so, or it has no column mapping and the sink is configured
// portable (a name needing column mapping would fail otherwise). A table with
// column mapping keeps source names.
func portableTable(meta *deltalog.Metadata, opts ColumnNames) bool {
	if ColumnNames(meta.Configuration[cdctable.PropColumnNames]) == ColumnNamesPortable {
		return true
	}
	return opts == ColumnNamesPortable && deltalog.ColumnMappingMode(meta) == "none"
}

// namer hands out table column names, unique as Delta compares them (ignoring
// case), among the table's columns and the metadata columns.
type namer struct {
	taken map[string]bool
}

func newNamer(existing []deltalog.StructField) *namer {
	n := &namer{taken: map[string]bool{}}
	for _, m := range []string{cdctable.ColPosition, cdctable.ColOp, cdctable.ColCommitTime, cdctable.ColDeleted} {
		n.taken[strings.ToLower(m)] = true
	}
	for _, f := range existing {
		n.taken[strings.ToLower(f.Name)] = true
	}
	return n
}

// reserve takes name as it is.
func (n *namer) reserve(name string) { n.taken[strings.ToLower(name)] = true }

// portable returns the portable name of source, suffixed "_2", "_3", ... when a
// column already has that name ("Unit Price" beside "Unit_Price" becomes
// "Unit_Price_2"), and takes it.
func (n *namer) portable(source string) string {
	base := PortableName(source)
	name := base
	for i := 2; n.taken[strings.ToLower(name)]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	n.reserve(name)
	return name
}

// tableNames names the columns of a new table: source names, except, in a
// portable table, those that need column mapping, which get portable names
// after every other name is reserved, so that a source column keeps its name
// whenever Delta takes it.
func tableNames(cols []codecs.Column, portable bool) []string {
	out := make([]string, len(cols))
	n := newNamer(nil)
	for i, c := range cols {
		if !portable || !deltalog.NeedsColumnMapping(c.Name) {
			out[i] = c.Name
			n.reserve(c.Name)
		}
	}
	for i, c := range cols {
		if out[i] == "" {
			out[i] = n.portable(c.Name)
		}
	}
	return out
}

// renamedComment is the comment of a column renamed from source: the source
// name, then what the comment would have said.
func renamedComment(source, comment string) string {
	name := "SQL Server column [" + strings.ReplaceAll(source, "]", "]]") + "]"
	if comment == "" {
		return name
	}
	return name + ": " + comment
}

// keySourceNames returns the source names of the key columns of a table.
func keySourceNames(st *deltalog.StructType, keyFields []int) []string {
	out := make([]string, len(keyFields))
	for k, f := range keyFields {
		out[k] = sourceName(st.Fields[f])
	}
	return out
}

// checkColumnNames validates the column naming option.
func checkColumnNames(c ColumnNames) error {
	switch c {
	case ColumnNamesMapped, ColumnNamesPortable:
		return nil
	}
	return fmt.Errorf("merge: unknown column names %q (want %s or %s)", c, ColumnNamesMapped, ColumnNamesPortable)
}
