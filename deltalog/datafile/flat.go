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
// as for Read.
func ReadFlat(ctx context.Context, store deltalog.Store, add *deltalog.Add, schema *deltalog.StructType, columns []string, opts ReadOptions) (cols []FlatColumn, rows int64, ok bool, err error) {
	if add == nil || schema == nil {
		return nil, 0, false, fmt.Errorf("%w: nil add or schema", ErrSchema)
	}
	mode, err := parseMappingMode(opts.Properties)
	if err != nil {
		return nil, 0, false, err
	}
	fields, err := selectFields(schema, columns)
	if err != nil {
		return nil, 0, false, err
	}
	kinds := make([]FlatKind, len(fields))
	for i, f := range fields {
		if kinds[i] = flatKind(f.Type); kinds[i] == 0 {
			return nil, 0, false, nil
		}
	}
	parts, err := partitionConsts(schema, add, fields, mode, opts.PartitionColumns)
	if err != nil {
		return nil, 0, false, fmt.Errorf("data file %s: %w", add.Path, err)
	}
	for _, p := range parts {
		if p != nil {
			return nil, 0, false, nil
		}
	}
	key, err := objectKey(store, add.Path)
	if err != nil {
		return nil, 0, false, err
	}
	data, err := fetch(ctx, store, key, add.Size)
	if err != nil {
		return nil, 0, false, err
	}
	cols, rows, ok, err = decodeFlat(ctx, data, fields, kinds, mode)
	if err != nil {
		return nil, 0, false, decodeError(ctx, key, err)
	}
	return cols, rows, ok, nil
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

// decodeFlat is ReadFlat's decoding of one file held in memory; a panic of
// parquet-go on malformed input becomes an error.
func decodeFlat(ctx context.Context, data []byte, fields []*deltalog.StructField, kinds []FlatKind, mode mappingMode) (cols []FlatColumn, rows int64, ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			cols, rows, ok, err = nil, 0, false, fmt.Errorf("malformed parquet: %v", r)
		}
	}()
	f, err := openChecked(data)
	if err != nil {
		return nil, 0, false, err
	}
	rows = f.NumRows()
	var groupRows int64
	for _, rg := range f.RowGroups() {
		groupRows += rg.NumRows()
	}
	if rows < 0 || groupRows != rows {
		return nil, 0, false, fmt.Errorf("footer claims %d rows, row groups %d", rows, groupRows)
	}
	p := &planner{mode: mode}
	leaves := make([]*parquet.Column, len(fields))
	toInts := make([]func(parquet.Value) int64, len(fields))
	for i, fd := range fields {
		c := p.findColumn(f.Root(), fd)
		if c == nil || !c.Leaf() || c.MaxRepetitionLevel() != 0 {
			return nil, 0, false, nil
		}
		k := c.Type().Kind()
		if kinds[i] == FlatInt {
			toInts[i] = flatInt(fd.Type, k)
		}
		if kinds[i] == FlatInt && toInts[i] == nil ||
			kinds[i] != FlatInt && k != parquet.ByteArray && k != parquet.FixedLenByteArray {
			return nil, 0, false, nil
		}
		leaves[i] = c
	}
	cols = make([]FlatColumn, len(fields))
	for i, c := range leaves {
		if err := ctx.Err(); err != nil {
			return nil, 0, false, err
		}
		cols[i] = FlatColumn{Kind: kinds[i]}
		if err := cols[i].read(c, toInts[i], rows); err != nil {
			return nil, 0, false, fmt.Errorf("column %s: %w", c.Name(), err)
		}
	}
	return cols, rows, true, nil
}

// read decodes every page of column c into fc, which must end with rows
// values. Byte values are copied into one buffer: page buffers are reused.
func (fc *FlatColumn) read(c *parquet.Column, toInt func(parquet.Value) int64, rows int64) error {
	maxDef := c.MaxDefinitionLevel()
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
	err := eachValues(c.Pages(), make([]parquet.Value, 1024), func(page []parquet.Value) error {
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
