package tableops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// FileRows reads the rows of a CSV (with a header) or Parquet file as
// values of a table's column types, by column name: a column the table
// lacks fails with ErrFileColumns, a value or Parquet type the column's
// type cannot hold with ErrFileType. CSV streams; a Parquet file is read
// whole.
type FileRows struct {
	e      *expected
	fields []deltalog.StructField // the file's columns, as table fields
	pq     [][]any                // a Parquet file's rows, nil for CSV
	line   int
}

// OpenFileRows opens path for the table of schema.
func OpenFileRows(ctx context.Context, path string, schema *deltalog.StructType) (*FileRows, error) {
	e, err := openExpected(path)
	if err != nil {
		return nil, err
	}
	r := &FileRows{e: e, line: 1}
	for _, c := range e.cols {
		f, ok := fieldNamed(schema, c)
		if !ok {
			e.close()
			return nil, fmt.Errorf("%w: column %q of %s is not in the table", ErrFileColumns, c, path)
		}
		r.fields = append(r.fields, f)
	}
	if e.pq != nil {
		if err := checkParquetColumns(e.pq, r.fields); err != nil {
			e.close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		store, err := localstore.New(localstore.Options{Dir: filepath.Dir(path)})
		if err == nil {
			add := &deltalog.Add{Path: filepath.Base(path), Size: e.info.Size()}
			r.pq, err = datafile.ReadColumns(ctx, store, add, &deltalog.StructType{Fields: r.fields}, e.cols, datafile.ReadOptions{})
		}
		if err != nil {
			e.close()
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	return r, nil
}

func fieldNamed(schema *deltalog.StructType, name string) (deltalog.StructField, bool) {
	for _, f := range schema.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return deltalog.StructField{}, false
}

// Columns are the file's columns, in its order; rows are aligned with them.
func (r *FileRows) Columns() []string { return r.e.cols }

// Size is the file's size in bytes.
func (r *FileRows) Size() int64 { return r.e.info.Size() }

// Offset is how many bytes of the file have been read.
func (r *FileRows) Offset() int64 {
	if r.e.csv == nil {
		return r.Size()
	}
	return r.e.csv.InputOffset()
}

// Next returns up to n more rows, none at the end.
func (r *FileRows) Next(ctx context.Context, n int) ([][]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.e.csv == nil {
		k := min(n, len(r.pq))
		out := r.pq[:k]
		r.pq = r.pq[k:]
		return out, nil
	}
	var out [][]any
	for len(out) < n {
		rec, err := r.e.csv.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		r.line++
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrFileFormat, r.e.path, err)
		}
		row := make([]any, len(r.fields))
		for i, f := range r.fields {
			if row[i], err = parseText(f.Type, rec[i]); err != nil {
				return nil, fmt.Errorf("%w: %s line %d column %s: %q is not a %s: %v", ErrFileType, r.e.path, r.line, f.Name, rec[i], f.Type, err)
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// Close closes the file.
func (r *FileRows) Close() { r.e.close() }
