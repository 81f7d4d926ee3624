package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/parquet-go/parquet-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// ReadOptions configure Read and ReadColumns.
type ReadOptions struct {
	// Properties is metaData.configuration; it supplies the column mapping mode.
	Properties map[string]string
	// PartitionColumns are the table's partition columns (logical names). When nil, the
	// fields whose physical names are keys of add.PartitionValues are partition columns.
	PartitionColumns []string
	// DeletedRows, when set, are the row indexes to drop instead of those of
	// add.DeletionVector.
	DeletedRows *roaring64.Bitmap
}

// Read returns the live rows of the logical file add, aligned with schema's fields:
// partition columns come from add.PartitionValues, columns the file lacks read as null,
// and rows deleted by the file's deletion vector are left out.
func Read(ctx context.Context, store deltalog.Store, add *deltalog.Add, schema *deltalog.StructType, opts ReadOptions) ([][]any, error) {
	return ReadColumns(ctx, store, add, schema, nil, opts)
}

// ReadColumns is Read restricted to the named top-level columns (logical names), in that
// order; only their Parquet columns are decoded. nil columns means all of them.
func ReadColumns(ctx context.Context, store deltalog.Store, add *deltalog.Add, schema *deltalog.StructType, columns []string, opts ReadOptions) ([][]any, error) {
	if add == nil || schema == nil {
		return nil, fmt.Errorf("%w: nil add or schema", ErrSchema)
	}
	mode, err := parseMappingMode(opts.Properties)
	if err != nil {
		return nil, err
	}
	fields, err := selectFields(schema, columns)
	if err != nil {
		return nil, err
	}
	key, err := objectKey(store, add.Path)
	if err != nil {
		return nil, err
	}
	deleted := opts.DeletedRows
	if deleted == nil && add.DeletionVector != nil {
		if deleted, err = loadDeletionVector(ctx, store, add.DeletionVector); err != nil {
			return nil, fmt.Errorf("reading deletion vector of %s: %w", key, err)
		}
	}
	parts, err := partitionConsts(schema, add, fields, mode, opts.PartitionColumns)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", key, err)
	}
	data, err := fetch(ctx, store, key, add.Size)
	if err != nil {
		return nil, err
	}
	rows, err := decode(ctx, data, fields, parts, mode, deleted)
	if err != nil {
		return nil, decodeError(ctx, key, err)
	}
	return rows, nil
}

// decodeError is err from decoding the data file key: the context's own
// error as it is, anything else a CorruptFileError.
func decodeError(ctx context.Context, key string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	return &deltalog.CorruptFileError{Path: key, Err: err}
}

func selectFields(schema *deltalog.StructType, columns []string) ([]*deltalog.StructField, error) {
	if columns == nil {
		out := make([]*deltalog.StructField, len(schema.Fields))
		for i := range schema.Fields {
			out[i] = &schema.Fields[i]
		}
		return out, nil
	}
	out := make([]*deltalog.StructField, 0, len(columns))
	for _, c := range columns {
		i := fieldIndex(schema, c)
		if i < 0 {
			return nil, fmt.Errorf("%w: no column %q", ErrSchema, c)
		}
		out = append(out, &schema.Fields[i])
	}
	return out, nil
}

// fieldIndex finds a top-level field, case-insensitively as Delta column names are.
func fieldIndex(schema *deltalog.StructType, name string) int {
	for i := range schema.Fields {
		if schema.Fields[i].Name == name {
			return i
		}
	}
	for i := range schema.Fields {
		if strings.EqualFold(schema.Fields[i].Name, name) {
			return i
		}
	}
	return -1
}

// objectKey percent-decodes add.path into a store key. An absolute URI is passed as it
// is to a store that resolves them (deltalog.ResolveAbsolutePaths), which decodes it;
// other stores refuse it, as snapshots do (see deltalog.AbsolutePathError).
func objectKey(store deltalog.Store, p string) (string, error) {
	if deltalog.IsAbsolutePath(p) {
		if deltalog.ResolvesAbsolutePaths(store) {
			return p, nil
		}
		return "", &deltalog.AbsolutePathError{Version: -1, Path: p}
	}
	k, err := url.PathUnescape(p)
	if err != nil {
		return "", fmt.Errorf("%w: bad data file path %q: %w", ErrSchema, p, err)
	}
	return k, nil
}

// partitionConsts parses the partition values of the selected fields; nil entries are
// data columns.
func partitionConsts(schema *deltalog.StructType, add *deltalog.Add, fields []*deltalog.StructField, mode mappingMode, partCols []string) ([]*rnode, error) {
	isPart := map[string]bool{}
	for _, c := range partCols {
		if i := fieldIndex(schema, c); i >= 0 {
			isPart[schema.Fields[i].Name] = true
		}
	}
	out := make([]*rnode, len(fields))
	for i, f := range fields {
		phys := physicalName(f, mode)
		s, inAdd := add.PartitionValues[phys]
		if partCols != nil && !isPart[f.Name] || partCols == nil && !inAdd {
			continue
		}
		v, err := ParsePartitionValue(f.Type, s)
		if err != nil {
			return nil, fmt.Errorf("partition value of %s: %w", f.Name, err)
		}
		out[i] = &rnode{kind: nodeConst, constVal: v}
	}
	return out, nil
}

// fetch reads a data file whole. size is the add's, for one buffer of the right size
// (io.ReadAll would double its way up to it); a wrong one costs only a copy.
func fetch(ctx context.Context, store deltalog.Store, key string, size int64) ([]byte, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return nil, &deltalog.CorruptFileError{Path: key, Err: fmt.Errorf("opening data file: %w", err)}
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, max(0, min(size, 1<<30))+bytes.MinRead))
	if _, err := buf.ReadFrom(rc); err != nil {
		return nil, &deltalog.CorruptFileError{Path: key, Err: fmt.Errorf("reading data file: %w", err)}
	}
	return buf.Bytes(), nil
}

// decode parses one Parquet file and assembles the selected rows. parquet-go can panic on
// malformed input, so a panic becomes an error here, at the boundary.
func decode(ctx context.Context, data []byte, fields []*deltalog.StructField, parts []*rnode, mode mappingMode, deleted *roaring64.Bitmap) (rows [][]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("malformed parquet: %v", r)
		}
	}()
	if err := checkFraming(data); err != nil {
		return nil, err
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, err
	}
	if err := checkPages(data, f, pageLimits{uncompressed: maxPageBytes, values: maxPageValues}); err != nil {
		return nil, err
	}
	p := &planner{mode: mode, byCol: map[int]int{}}
	top := make([]*rnode, len(fields))
	for i, fd := range fields {
		if parts[i] != nil {
			top[i] = parts[i]
			continue
		}
		c := p.findColumn(f.Root(), fd)
		if c == nil {
			top[i] = &rnode{kind: nodeNull}
			continue
		}
		if top[i], err = p.field(fd.Type, c); err != nil {
			return nil, err
		}
	}
	numRows := f.NumRows()
	var groupRows int64
	for _, rg := range f.RowGroups() {
		groupRows += rg.NumRows()
	}
	if numRows < 0 || groupRows != numRows {
		return nil, fmt.Errorf("footer claims %d rows, row groups %d", numRows, groupRows)
	}
	if len(p.leaves) == 0 {
		// Decode one column even when no selected column is in the file, so the row
		// count comes from data rather than from the footer alone.
		if l := firstLeaf(f.Root()); l != nil && l != f.Root() {
			p.leafFor(l, nil)
		} else if numRows > 0 {
			return nil, fmt.Errorf("footer claims %d rows but the file has no columns", numRows)
		}
	}
	dropped := droppedRows(deleted, numRows)
	for _, l := range p.leaves {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := l.read(numRows, dropped); err != nil {
			return nil, fmt.Errorf("column %s: %w", strings.Join(l.col.Path(), "."), err)
		}
	}
	return assemble(top, p.leaves, numRows, deleted, dropped), nil
}

// maxPrealloc bounds the values a column's buffers are sized for up front: a footer's
// row count is not trusted with more.
const maxPrealloc = 1 << 20

// rowSet is a set of row numbers of a file, one bit a row.
type rowSet []uint64

func (s rowSet) has(r int) bool { return s[r>>6]&(1<<(r&63)) != 0 }

// droppedRows is deleted as a rowSet over the file's rows (nil: none), when
// it drops most of them: a read of a few rows of a file skips converting
// the others' values.
func droppedRows(deleted *roaring64.Bitmap, numRows int64) rowSet {
	if deleted == nil || numRows <= 0 || deleted.GetCardinality() < uint64(numRows)/2 {
		return nil
	}
	live := roaring64.New()
	live.AddRange(0, uint64(numRows))
	live.AndNot(deleted)
	s := make(rowSet, (numRows+63)/64)
	for i := range s {
		s[i] = ^uint64(0)
	}
	for it := live.Iterator(); it.HasNext(); {
		r := it.Next()
		s[r>>6] &^= 1 << (r & 63)
	}
	return s
}

// read decodes every page of the column, converting values as it goes because page
// buffers are recycled. The values of dropped rows (of a column that is not repeated)
// are left nil: assemble leaves those rows out.
func (l *leafReader) read(numRows int64, dropped rowSet) error {
	flat := l.col.MaxRepetitionLevel() == 0
	if n := min(numRows, maxPrealloc); flat && n > 0 {
		l.vals = make([]any, 0, n)
		l.def = make([]uint8, 0, n)
		l.rep = make([]uint8, 0, n)
	}
	skip := flat && dropped != nil
	err := eachValues(l.col.Pages(), make([]parquet.Value, 1024), func(vals []parquet.Value) error {
		for _, v := range vals {
			d, r := v.DefinitionLevel(), v.RepetitionLevel()
			var x any
			keep := !skip || len(l.vals) >= int(numRows) || !dropped.has(len(l.vals))
			if keep && d == l.maxDef && l.conv != nil && !v.IsNull() {
				var err error
				if x, err = l.conv(v); err != nil {
					return err
				}
			}
			l.vals = append(l.vals, x)
			l.def = append(l.def, uint8(d))
			l.rep = append(l.rep, uint8(r))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if l.col.MaxRepetitionLevel() == 0 {
		if int64(len(l.vals)) != numRows {
			return fmt.Errorf("%d values for %d rows", len(l.vals), numRows)
		}
		return nil
	}
	for i, r := range l.rep {
		if r == 0 {
			l.starts = append(l.starts, i)
		}
	}
	if int64(len(l.starts)) != numRows || len(l.rep) > 0 && l.rep[0] != 0 {
		return fmt.Errorf("%d records for %d rows", len(l.starts), numRows)
	}
	l.starts = append(l.starts, len(l.vals))
	return nil
}
