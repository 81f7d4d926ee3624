package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/readers"
)

func describeCommand() command {
	return command{
		name:    "describe",
		args:    "TABLE",
		summary: "show a table's schema with comments, protocol, properties, files, size, txn positions and which readers open it",
		example: "cdc2delta describe ./tables/sales/dbo/orders\ncdc2delta describe --version 3 --json s3://lake/sales/dbo/orders",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			tt := addTimeTravelFlags(fs)
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				// A table with absolute data file paths is described, with those
				// files named, instead of refused: describe is how one sees why.
				t, err := sf.openReader(ctx, loc)
				if err != nil {
					return err
				}
				snap, err := tt.snapshot(ctx, t, loc)
				if err != nil {
					return err
				}
				d := describeSnapshot(loc, snap)
				// The time --timestamp resolves, as history shows it.
				if d.CommitTime, err = t.CommitTime(ctx, snap.Version()); err != nil {
					return fmt.Errorf("reading the commit time of %s version %d: %w", loc, snap.Version(), err)
				}
				if *asJSON {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					enc.SetEscapeHTML(false) // types print as "array<string>", not "array\u003cstring\u003e"
					return enc.Encode(d)
				}
				return d.print(e.stdout)
			}
		},
	}
}

// tableDescription is what describe prints.
type tableDescription struct {
	Location         string            `json:"location"`
	Version          int64             `json:"version"`
	CommitTime       time.Time         `json:"commitTime"`
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Protocol         deltalog.Protocol `json:"protocol"`
	PartitionColumns []string          `json:"partitionColumns"`
	Properties       map[string]string `json:"properties"`
	Columns          []columnInfo      `json:"columns"`
	NumFiles         int               `json:"numFiles"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	NumRows          *int64            `json:"numRows,omitempty"`
	DeletionVectors  int               `json:"numDeletionVectors"`
	Txns             []deltalog.Txn    `json:"txns"`
	// AbsolutePaths are the live data files named by absolute path, for which
	// every other command refuses the table.
	AbsolutePaths []absolutePath `json:"absolutePaths,omitempty"`
	// Readers says which reader APIs open the table, and why (internal/readers,
	// tested by the full tier's reader matrix, docs/readers.md).
	Readers []readerInfo `json:"readers"`
}

// absolutePath is a live data file with an absolute path and the log file that added it.
type absolutePath struct {
	Path    string `json:"path"`
	AddedIn string `json:"addedIn,omitempty"`
}

// readerInfo is one reader API's verdict on the table.
type readerInfo struct {
	Reader  string `json:"reader"`
	API     string `json:"api"`
	Outcome string `json:"outcome"` // reads, refuses, wrong, n/a
	Why     string `json:"why,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// readerInfos describes what the tested reader APIs do with a table.
func readerInfos(p deltalog.Protocol, meta deltalog.Metadata) []readerInfo {
	var out []readerInfo
	for _, v := range readers.Verdicts(readers.TableOf(p, meta)) {
		out = append(out, readerInfo{Reader: v.API.Reader, API: v.API.Name, Outcome: string(v.Outcome), Why: v.Why, Fix: v.Fix})
	}
	return out
}

// columnInfo is one column; fields of struct columns follow with dotted names. Type is
// spelled in full (see typeString).
type columnInfo struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
	Comment  string `json:"comment,omitempty"`
}

func describeSnapshot(loc string, snap *deltalog.Snapshot) tableDescription {
	meta := snap.Metadata()
	if meta.PartitionColumns == nil {
		meta.PartitionColumns = []string{} // JSON [], not null
	}
	d := tableDescription{
		Location: loc, Version: snap.Version(), CommitTime: snap.CommitTimestamp().UTC(),
		ID: meta.ID, Name: meta.Name, Description: meta.Description, Protocol: snap.Protocol(),
		PartitionColumns: meta.PartitionColumns, Properties: meta.Configuration,
		Columns: columnsOf("", snap.Schema()), NumFiles: snap.NumFiles(),
	}
	rows, rowsKnown := int64(0), true
	for _, f := range snap.Files() {
		d.SizeInBytes += f.Size
		n, ok, err := f.LiveRows()
		if !ok || err != nil {
			rowsKnown = false
		}
		rows += n
		if f.DeletionVector != nil {
			d.DeletionVectors++
		}
	}
	if rowsKnown {
		d.NumRows = &rows
	}
	txns := snap.Txns()
	for _, id := range slices.Sorted(maps.Keys(txns)) {
		d.Txns = append(d.Txns, txns[id])
	}
	for _, a := range snap.AbsolutePaths() {
		d.AbsolutePaths = append(d.AbsolutePaths, absolutePath{Path: a.Path, AddedIn: a.File})
	}
	d.Readers = readerInfos(snap.Protocol(), meta)
	return d
}

func columnsOf(prefix string, st *deltalog.StructType) []columnInfo {
	if st == nil {
		return nil
	}
	var out []columnInfo
	for _, f := range st.Fields {
		comment, _ := f.Metadata["comment"].(string)
		out = append(out, columnInfo{Name: prefix + f.Name, Type: typeString(f.Type), Nullable: f.Nullable, Comment: comment})
		if sub, ok := f.Type.(*deltalog.StructType); ok {
			out = append(out, columnsOf(prefix+f.Name+".", sub)...)
		}
	}
	return out
}

// typeString spells a type in full, nested types included: array<string>,
// map<string,integer>, struct<a:integer,`Unit Price`:decimal(10,2)>. It is Spark's
// catalogString layout (field names backquoted unless plain) with the primitive names
// schemaString stores, which the top-level columns show too ("long", not "bigint").
func typeString(t deltalog.Type) string {
	switch t := t.(type) {
	case *deltalog.ArrayType:
		return "array<" + typeString(t.ElementType) + ">"
	case *deltalog.MapType:
		return "map<" + typeString(t.KeyType) + "," + typeString(t.ValueType) + ">"
	case *deltalog.StructType:
		fields := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = quoteIfNeeded(f.Name) + ":" + typeString(f.Type)
		}
		return "struct<" + strings.Join(fields, ",") + ">"
	}
	return t.String()
}

// quoteIfNeeded backquotes a field name unless it is only letters, digits and "_", so
// names with spaces, commas, colons or angle brackets read unambiguously.
func quoteIfNeeded(name string) string {
	plain := name != ""
	for _, r := range name {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func (d tableDescription) print(w io.Writer) error {
	var b strings.Builder
	kv := func(k, v string) { fmt.Fprintf(&b, "%-18s %s\n", k+":", v) }
	kv("Location", d.Location)
	kv("Version", fmt.Sprintf("%d (committed %s)", d.Version, d.CommitTime.Format(time.RFC3339Nano)))
	kv("Table id", d.ID)
	if d.Name != "" {
		kv("Name", d.Name)
	}
	if d.Description != "" {
		kv("Comment", d.Description)
	}
	p := d.Protocol
	kv("Protocol", fmt.Sprintf("reader %d [%s], writer %d [%s]", p.MinReaderVersion,
		strings.Join(p.ReaderFeatureSet(), " "), p.MinWriterVersion, strings.Join(p.WriterFeatureSet(), " ")))
	if len(d.PartitionColumns) == 0 {
		kv("Partitioned by", "none")
	} else {
		kv("Partitioned by", strings.Join(d.PartitionColumns, ", "))
	}
	size := plural(int(d.NumFiles), "file") + ", " + humanBytes(d.SizeInBytes)
	if d.NumRows != nil {
		size += ", " + plural(int(*d.NumRows), "row")
	}
	kv("Data", size+", "+plural(int(d.DeletionVectors), "deletion vector"))
	printAbsolutePaths(&b, d.AbsolutePaths)
	b.WriteString("\nSchema:\n")
	tt := newTextTable("  COLUMN", "TYPE", "NULLABLE", "COMMENT")
	for _, c := range d.Columns {
		tt.add("  "+c.Name, c.Type, strconv.FormatBool(c.Nullable), c.Comment)
	}
	if err := writeTo(&b, tt); err != nil {
		return err
	}
	b.WriteString("\nProperties:\n")
	for _, k := range slices.Sorted(maps.Keys(d.Properties)) {
		fmt.Fprintf(&b, "  %s = %s\n", k, d.Properties[k])
	}
	b.WriteString("\nTransactions (txn):\n")
	if len(d.Txns) == 0 {
		b.WriteString("  none\n")
	} else {
		tt := newTextTable("  APP ID", "VERSION", "LAST UPDATED")
		for _, x := range d.Txns {
			upd := ""
			if x.LastUpdated != nil {
				upd = time.UnixMilli(*x.LastUpdated).UTC().Format(time.RFC3339Nano)
			}
			tt.add("  "+x.AppID, strconv.FormatInt(x.Version, 10), upd)
		}
		if err := writeTo(&b, tt); err != nil {
			return err
		}
	}
	printReaders(&b, d.Readers)
	_, err := io.WriteString(w, b.String())
	return err
}

// printReaders writes the Readers section: one line per reader API, what it does
// and, when it does not read the table, why and which setting would make it.
func printReaders(b *strings.Builder, infos []readerInfo) {
	fmt.Fprintf(b, "\nReaders (%s; tested, docs/readers.md):\n", readers.Versions())
	tt := newTextTable("  READER", "API", "OPENS", "WHY")
	for _, r := range infos {
		opens := map[string]string{"reads": "yes", "refuses": "no", "wrong": "WRONG ROWS", "n/a": "n/a"}[r.Outcome]
		why := r.Why
		if r.Fix != "" && r.Outcome != "n/a" {
			why += "; it reads tables created with " + r.Fix
		}
		tt.add("  "+r.Reader, r.API, opens, why)
	}
	_ = writeTo(b, tt) // a strings.Builder does not fail
}

// printAbsolutePaths names the files for which cdc2delta refuses the table, why, and
// what to do.
func printAbsolutePaths(b *strings.Builder, files []absolutePath) {
	if len(files) == 0 {
		return
	}
	n := "1 live data file has"
	if len(files) > 1 {
		n = fmt.Sprintf("%d live data files have", len(files))
	}
	fmt.Fprintf(b, "\nRead, not written, by cdc2delta: %s an absolute path\n", n)
	for _, f := range files {
		fmt.Fprintf(b, "  %s", f.Path)
		if f.AddedIn != "" {
			fmt.Fprintf(b, " (added in %s)", f.AddedIn)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "commands that write refuse the table: %s\n", deltalog.AbsolutePathRemedy)
}

func writeTo(b *strings.Builder, t *textTable) error { return t.write(b) }

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTPE"[exp], n)
}
