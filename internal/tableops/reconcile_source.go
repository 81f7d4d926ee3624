package tableops

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// ErrExpectedFormat: the expected rows' file is neither CSV nor Parquet,
// or is malformed.
var ErrExpectedFormat = errors.New("reconcile: unreadable expected file")

// expected is the file of expected rows.
type expected struct {
	path string
	f    *os.File
	info os.FileInfo
	cols []string
	csv  *csv.Reader   // nil for Parquet
	pq   *parquet.File // nil for CSV
}

// openExpected opens a CSV file (with a header) or a Parquet file and
// reads its column names.
func openExpected(path string) (*expected, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	e := &expected{path: path, f: f, info: info}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".csv":
		e.csv = csv.NewReader(f)
		e.csv.ReuseRecord = true
		header, err := e.csv.Read()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: %s: reading the header: %v", ErrExpectedFormat, path, err)
		}
		e.cols = append([]string(nil), header...)
	case ".parquet":
		pf, err := parquet.OpenFile(f, info.Size())
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: %s: %v", ErrExpectedFormat, path, err)
		}
		e.pq = pf
		for _, c := range pf.Schema().Fields() {
			e.cols = append(e.cols, c.Name())
		}
	default:
		f.Close()
		return nil, fmt.Errorf("%w: %s: want a .csv or .parquet file, not %q", ErrExpectedFormat, path, ext)
	}
	return e, nil
}

func (e *expected) columns() []string { return e.cols }
func (e *expected) size() int64       { return e.info.Size() }
func (e *expected) close()            { e.f.Close() }

// spill writes the file's rows, typed by the table's columns, to sp.
func (e *expected) spill(ctx context.Context, cols reconciled, sp *spill) (int64, error) {
	if e.csv == nil {
		return e.spillParquet(ctx, cols, sp)
	}
	idx := make([]int, len(cols.fields))
	for i, f := range cols.fields {
		idx[i] = -1
		for j, c := range e.cols {
			if c == f.Name {
				idx[i] = j
			}
		}
	}
	vals := make([]any, len(cols.fields))
	var n int64
	for line := 2; ; line++ {
		if line%4096 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		rec, err := e.csv.Read()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, fmt.Errorf("%w: %s: %v", ErrExpectedFormat, e.path, err)
		}
		for i, f := range cols.fields {
			if vals[i], err = parseText(f.Type, rec[idx[i]]); err != nil {
				return 0, fmt.Errorf("%w: %s line %d column %s: %q is not a %s: %v", ErrFileType, e.path, line, f.Name, rec[idx[i]], f.Type, err)
			}
		}
		key, cells, err := cols.row(vals)
		if err != nil {
			return 0, fmt.Errorf("%s line %d: %w", e.path, line, err)
		}
		if err := sp.write(sideFile, key, cells); err != nil {
			return 0, err
		}
		n++
	}
}

// spillParquet reads the Parquet file as a data file of the table's
// columns: a column whose Parquet type is not readable as the table's
// type fails with ErrFileType.
func (e *expected) spillParquet(ctx context.Context, cols reconciled, sp *spill) (int64, error) {
	if err := checkParquetColumns(e.pq, cols.fields); err != nil {
		return 0, fmt.Errorf("%s: %w", e.path, err)
	}
	store, err := localstore.New(localstore.Options{Dir: filepath.Dir(e.path)})
	if err != nil {
		return 0, err
	}
	schema := &deltalog.StructType{Fields: cols.fields}
	add := &deltalog.Add{Path: filepath.Base(e.path), Size: e.info.Size()}
	rows, err := datafile.ReadColumns(ctx, store, add, schema, cols.names(), datafile.ReadOptions{})
	if errors.Is(err, datafile.ErrSchema) {
		return 0, fmt.Errorf("%w: %s: %v", ErrFileType, e.path, err)
	}
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", e.path, err)
	}
	for i, vals := range rows {
		key, cells, err := cols.row(vals)
		if err != nil {
			return 0, fmt.Errorf("%s row %d: %w", e.path, i, err)
		}
		if err := sp.write(sideFile, key, cells); err != nil {
			return 0, err
		}
	}
	return int64(len(rows)), nil
}
