package datafile

import (
	"context"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// FlatKind is how ReadFlat returns a column's values.
type FlatKind uint8

// Flat kinds.
const (
	// FlatInt holds byte, short, integer, date and long columns in Ints,
	// each converted as Read converts it (a byte column's value is an int8).
	FlatInt FlatKind = iota + 1
	// FlatString and FlatBinary hold string and binary columns in Bytes.
	FlatString
	FlatBinary
)

// FlatColumn is one column of a data file as ReadFlat returns it: a value per
// physical row, typed rather than boxed.
type FlatColumn struct {
	Kind  FlatKind
	Ints  []int64
	Bytes [][]byte // slices of one buffer per column
	// Null marks null rows; nil when no row is null.
	Null []bool
}

// ReadFlat reads the named top-level columns of the data file add, every
// physical row (add's deletion vector is not applied), without making Go
// values of them: what a caller that visits millions of rows for a few
// columns needs (the MERGE engine's key index). ok is false, with nothing
// read, when a column is not a flat integer, string or binary column of the
// file (a partition column, one the file lacks, another type, a nested or
// repeated one); Read then reads it. A malformed file is a CorruptFileError,
// as for Read. OpenFlat reads the same a row group at a time.
func ReadFlat(ctx context.Context, store deltalog.Store, add *deltalog.Add, schema *deltalog.StructType, columns []string, opts ReadOptions) (cols []FlatColumn, rows int64, ok bool, err error) {
	f, ok, err := OpenFlat(ctx, store, add, schema, columns, opts)
	if err != nil || !ok {
		return nil, 0, ok, err
	}
	cols, err = f.read(ctx, -1)
	if err != nil {
		return nil, 0, false, err
	}
	return cols, f.Rows(), true, nil
}

// FlatFile is a data file opened by OpenFlat: its bytes, held, and the
// columns to read from them.
type FlatFile struct {
	key    string
	f      *parquet.File
	leaves []*parquet.Column
	kinds  []FlatKind
	toInts []func(parquet.Value) int64
	starts []int64 // the first row of each row group
}

// OpenFlat opens the data file add for reading the named columns as ReadFlat
// does, a row group at a time (ReadGroup), so that a caller holds one group's
// values and not a file's; ok is false as for ReadFlat.
func OpenFlat(ctx context.Context, store deltalog.Store, add *deltalog.Add, schema *deltalog.StructType, columns []string, opts ReadOptions) (*FlatFile, bool, error) {
	if add == nil || schema == nil {
		return nil, false, fmt.Errorf("%w: nil add or schema", ErrSchema)
	}
	mode, err := parseMappingMode(opts.Properties)
	if err != nil {
		return nil, false, err
	}
	fields, err := selectFields(schema, columns)
	if err != nil {
		return nil, false, err
	}
	kinds := make([]FlatKind, len(fields))
	for i, f := range fields {
		if kinds[i] = flatKind(f.Type); kinds[i] == 0 {
			return nil, false, nil
		}
	}
	parts, err := partitionConsts(schema, add, fields, mode, opts.PartitionColumns)
	if err != nil {
		return nil, false, fmt.Errorf("data file %s: %w", add.Path, err)
	}
	for _, p := range parts {
		if p != nil {
			return nil, false, nil
		}
	}
	key, err := objectKey(store, add.Path)
	if err != nil {
		return nil, false, err
	}
	data, err := fetch(ctx, store, key, add.Size)
	if err != nil {
		return nil, false, err
	}
	ff, ok, err := openFlat(data, fields, kinds, mode)
	if err != nil {
		return nil, false, decodeError(ctx, key, err)
	}
	if ok {
		ff.key = key
	}
	return ff, ok, nil
}

// Rows returns the file's physical rows.
func (ff *FlatFile) Rows() int64 { return ff.f.NumRows() }

// Groups returns the file's row groups.
func (ff *FlatFile) Groups() int { return len(ff.starts) }

// ReadGroup reads row group g: its columns, a value per physical row, and
// the file row of its first row.
func (ff *FlatFile) ReadGroup(ctx context.Context, g int) (cols []FlatColumn, first int64, err error) {
	if g < 0 || g >= len(ff.starts) {
		return nil, 0, fmt.Errorf("datafile: row group %d of %d", g, len(ff.starts))
	}
	cols, err = ff.read(ctx, g)
	return cols, ff.starts[g], err
}

// read reads row group g, or every row when g < 0; a panic of parquet-go on
// malformed input becomes a CorruptFileError.
func (ff *FlatFile) read(ctx context.Context, g int) (cols []FlatColumn, err error) {
	defer func() {
		if r := recover(); r != nil {
			cols, err = nil, &deltalog.CorruptFileError{Path: ff.key, Err: fmt.Errorf("malformed parquet: %v", r)}
		}
	}()
	rows := ff.f.NumRows()
	if g >= 0 {
		rows = ff.f.RowGroups()[g].NumRows()
	}
	cols = make([]FlatColumn, len(ff.leaves))
	for i, c := range ff.leaves {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pages := c.Pages()
		if g >= 0 {
			pages = ff.f.RowGroups()[g].ColumnChunks()[c.Index()].Pages()
		}
		cols[i] = FlatColumn{Kind: ff.kinds[i]}
		if err := cols[i].read(pages, c.MaxDefinitionLevel(), ff.toInts[i], rows); err != nil {
			return nil, decodeError(ctx, ff.key, fmt.Errorf("column %s: %w", c.Name(), err))
		}
	}
	return cols, nil
}

// flatKind is the kind ReadFlat returns a column of type t as; 0: none.
func flatKind(t deltalog.Type) FlatKind {
	switch t {
	case deltalog.TypeByte, deltalog.TypeShort, deltalog.TypeInteger, deltalog.TypeDate, deltalog.TypeLong:
		return FlatInt
	case deltalog.TypeString:
		return FlatString
	case deltalog.TypeBinary:
		return FlatBinary
	}
	return 0
}

// flatInt converts an integer value of physical kind k as converter does for
// type t; nil when converter would refuse the pair.
func flatInt(t deltalog.Type, k parquet.Kind) func(parquet.Value) int64 {
	switch {
	case t == deltalog.TypeByte && k == parquet.Int32:
		return func(v parquet.Value) int64 { return int64(int8(v.Int32())) }
	case t == deltalog.TypeShort && k == parquet.Int32:
		return func(v parquet.Value) int64 { return int64(int16(v.Int32())) }
	case (t == deltalog.TypeInteger || t == deltalog.TypeDate || t == deltalog.TypeLong) && k == parquet.Int32:
		return func(v parquet.Value) int64 { return int64(v.Int32()) }
	case t == deltalog.TypeLong && k == parquet.Int64:
		return parquet.Value.Int64
	}
	return nil
}

// openFlat opens a file held in memory and finds the leaves of fields; ok
// is false when one is not flat. A panic of parquet-go on malformed input
// becomes an error.
func openFlat(data []byte, fields []*deltalog.StructField, kinds []FlatKind, mode mappingMode) (ff *FlatFile, ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			ff, ok, err = nil, false, fmt.Errorf("malformed parquet: %v", r)
		}
	}()
	f, err := openChecked(data)
	if err != nil {
		return nil, false, err
	}
	rows := f.NumRows()
	ff = &FlatFile{f: f, kinds: kinds, leaves: make([]*parquet.Column, len(fields)), toInts: make([]func(parquet.Value) int64, len(fields))}
	var groupRows int64
	for _, rg := range f.RowGroups() {
		ff.starts = append(ff.starts, groupRows)
		groupRows += rg.NumRows()
	}
	if rows < 0 || groupRows != rows {
		return nil, false, fmt.Errorf("footer claims %d rows, row groups %d", rows, groupRows)
	}
	p := &planner{mode: mode}
	for i, fd := range fields {
		c := p.findColumn(f.Root(), fd)
		if c == nil || !c.Leaf() || c.MaxRepetitionLevel() != 0 {
			return nil, false, nil
		}
		k := c.Type().Kind()
		if kinds[i] == FlatInt {
			ff.toInts[i] = flatInt(fd.Type, k)
		}
		if kinds[i] == FlatInt && ff.toInts[i] == nil ||
			kinds[i] != FlatInt && k != parquet.ByteArray && k != parquet.FixedLenByteArray {
			return nil, false, nil
		}
		ff.leaves[i] = c
	}
	return ff, true, nil
}

// read decodes pages of a column whose values are defined at maxDef into
// fc, which must end with rows values. Byte values are copied into one
// buffer: page buffers are reused.
func (fc *FlatColumn) read(pages parquet.Pages, maxDef int, toInt func(parquet.Value) int64, rows int64) error {
	var (
		n    int64
		vals []byte // the byte values, one after the other
		ends []int  // where each row's value ends in vals
	)
	if fc.Kind == FlatInt {
		fc.Ints = make([]int64, 0, rows)
	} else {
		ends = make([]int, 0, rows)
	}
	err := eachValues(pages, make([]parquet.Value, 1024), func(page []parquet.Value) error {
		if n += int64(len(page)); n > rows {
			return fmt.Errorf("more than %d values", rows)
		}
		for _, v := range page {
			null := v.DefinitionLevel() != maxDef || v.IsNull()
			if null {
				if fc.Null == nil {
					fc.Null = make([]bool, rows)
				}
				fc.Null[len(fc.Ints)+len(ends)] = true
			}
			switch {
			case fc.Kind == FlatInt && null:
				fc.Ints = append(fc.Ints, 0)
			case fc.Kind == FlatInt:
				fc.Ints = append(fc.Ints, toInt(v))
			default:
				if !null {
					vals = append(vals, v.ByteArray()...)
				}
				ends = append(ends, len(vals))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != rows {
		return fmt.Errorf("%d values for %d rows", n, rows)
	}
	if fc.Kind != FlatInt {
		fc.Bytes = make([][]byte, len(ends))
		start := 0
		for i, end := range ends {
			fc.Bytes[i] = vals[start:end:end]
			start = end
		}
	}
	return nil
}
