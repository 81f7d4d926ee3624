package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

func showCommand() command {
	return command{
		name:    "show",
		args:    "TABLE",
		summary: "print the table's rows at the latest version, or at --version / --timestamp",
		example: "cdc2delta show --limit 10 ./tables/sales/dbo/orders\n" +
			"cdc2delta show --version 3 --format csv --limit 0 s3://lake/sales/dbo/orders > orders_v3.csv",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			tt := addTimeTravelFlags(fs)
			format := fs.String("format", "table", "output format: table, csv or jsonl (one JSON object per row). Values print as\n"+
				"stored: decimals with every digit (JSON numbers in jsonl, never rounded through floating\n"+
				"point); NaN and infinities of float and double columns as NaN, Infinity and -Infinity (JSON\n"+
				"strings in jsonl, as Spark's to_json writes them); timestamps and dates in ISO 8601; binary\n"+
				"as 0x-prefixed hex (base64 in jsonl)")
			limit := fs.Int("limit", 20, "print at most N rows (0: all)")
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				if *format != "table" && *format != "csv" && *format != "jsonl" {
					return usagef("--format %q is not one of table, csv, jsonl", *format)
				}
				if *limit < 0 {
					return usagef("--limit must not be negative")
				}
				t, err := sf.openReader(ctx, loc)
				if err != nil {
					return err
				}
				snap, err := tt.snapshot(ctx, t, loc)
				if err != nil {
					return err
				}
				w := bufio.NewWriter(e.stdout)
				if err := showRows(ctx, t.Store(), snap, *format, *limit, w); err != nil {
					return err
				}
				return w.Flush()
			}
		},
	}
}

// showRows prints the live rows of snap, file by file, with deletion vectors applied.
func showRows(ctx context.Context, s deltalog.Store, snap *deltalog.Snapshot, format string, limit int, w io.Writer) error {
	schema := snap.Schema()
	meta := snap.Metadata()
	names := make([]string, len(schema.Fields))
	for i, f := range schema.Fields {
		names[i] = f.Name
	}
	out := newRowWriter(format, names, w)
	n := 0
	for _, add := range snap.Files() {
		if limit > 0 && n >= limit {
			break
		}
		rows, err := datafile.Read(ctx, s, &add, schema, datafile.ReadOptions{
			Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns,
		})
		if err != nil {
			return fmt.Errorf("reading %s: %w", add.Path, err)
		}
		for _, r := range rows {
			if limit > 0 && n >= limit {
				break
			}
			vals := make([]any, len(r))
			for i, v := range r {
				vals[i] = displayValue(schema.Fields[i].Type, v)
			}
			if err := out.row(vals); err != nil {
				return err
			}
			n++
		}
	}
	return out.end(n)
}

// rowWriter prints rows in one format.
type rowWriter struct {
	format string
	names  []string
	w      io.Writer
	csv    *csv.Writer
	table  *textTable
	json   *json.Encoder
}

func newRowWriter(format string, names []string, w io.Writer) *rowWriter {
	rw := &rowWriter{format: format, names: names, w: w}
	switch format {
	case "csv":
		rw.csv = csv.NewWriter(w)
		_ = rw.csv.Write(names) // errors surface from Flush in end
	case "jsonl":
		rw.json = json.NewEncoder(w)
		rw.json.SetEscapeHTML(false)
	default:
		rw.table = newTextTable(names...)
	}
	return rw
}

func (rw *rowWriter) row(vals []any) error {
	switch {
	case rw.csv != nil:
		cells := make([]string, len(vals))
		for i, v := range vals {
			cells[i] = textValue(v)
		}
		return rw.csv.Write(cells)
	case rw.json != nil:
		obj := make(orderedRow, len(vals))
		for i, v := range vals {
			obj[i] = namedValue{rw.names[i], v}
		}
		return rw.json.Encode(obj)
	}
	cells := make([]string, len(vals))
	for i, v := range vals {
		cells[i] = textValue(v)
		if v == nil {
			cells[i] = "NULL"
		}
	}
	rw.table.add(cells...)
	return nil
}

func (rw *rowWriter) end(n int) error {
	switch {
	case rw.csv != nil:
		rw.csv.Flush()
		return rw.csv.Error()
	case rw.json != nil:
		return nil
	}
	if err := rw.table.write(rw.w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(rw.w, "(%s)\n", plural(n, "row"))
	return err
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// orderedRow marshals as a JSON object keeping the column order.
type orderedRow []namedValue

type namedValue struct {
	name  string
	value any
}

func (r orderedRow) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, nv := range r {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := deltalog.MarshalPlain(nv.name)
		if err != nil {
			return nil, err
		}
		v, err := deltalog.MarshalPlain(nv.value)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}
