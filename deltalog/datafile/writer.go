package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Defaults of Options.
const (
	DefaultTargetFileSize = 128 << 20
	DefaultRowGroupSize   = 64 << 20
	// DefaultRowGroupRows is pyarrow's default row group length (1Mi rows):
	// narrow, well-compressed rows reach it long before DefaultRowGroupSize,
	// and readers that work a row group at a time (Spark and DuckDB
	// parallelise by row group) then never hold tens of millions at once.
	DefaultRowGroupRows = 1 << 20
	propDeletionVectors = "delta.enableDeletionVectors"
	writeBatchRows      = 1024
)

// Options configure a Writer.
type Options struct {
	// Schema is the table schema (logical names). Required.
	Schema *deltalog.StructType
	// PartitionColumns are top-level logical column names, as in metaData.
	PartitionColumns []string
	// Properties is metaData.configuration: it supplies the codec
	// (delta.parquet.compression.codec, default DefaultCodec), column mapping,
	// statistics columns and whether deletion vectors are enabled (tightBounds).
	Properties map[string]string
	// TargetFileSize starts a new file once a file reaches about this many bytes
	// (estimated before compression, so files come out smaller). Default 128 MiB.
	TargetFileSize int64
	// RowGroupSize closes a row group at about this many buffered bytes. Default 64 MiB.
	RowGroupSize int64
	// RowGroupRows closes a row group once it holds this many rows, whichever
	// of it and RowGroupSize comes first. Default DefaultRowGroupRows. Copies
	// of several files (CopyLiveWith) close a group only between the inputs'
	// row groups: one input group that alone holds more stays whole.
	RowGroupRows int64
	// NoDataChange marks the adds dataChange=false (compaction, rewrites that keep rows).
	NoDataChange bool
	// Dir is a directory under the table root for the files, e.g. "_change_data" for
	// change data files. Default: the table root.
	Dir string
	// NamePrefix starts each file name; default "part" ("cdc" for change data files).
	NamePrefix string
	// Now stamps modificationTime; default time.Now.
	Now func() time.Time
	// DeltaEncodings writes strings and binaries DELTA_BYTE_ARRAY and
	// integers, dates and timestamps DELTA_BINARY_PACKED, where the default
	// is PLAIN (DELTA_LENGTH_BYTE_ARRAY for strings). Columns whose
	// neighbouring values share prefixes or differ by little (positions,
	// offsets, times in order) then leave less for the codec to compress:
	// smaller files for less CPU. delta-rs, DuckDB and Spark read both.
	DeltaEncodings bool
}

// Writer writes rows as Parquet data files and describes them as add actions. A Writer
// is not safe for concurrent use; it reuses its buffers between calls.
type Writer struct {
	opts      Options
	mode      mappingMode
	schema    *parquet.Schema
	codec     codec
	plan      *wnode
	shred     *shredder
	stats     []*colStats
	tight     bool
	dataIdx   []int // schema field index of each data column
	partIdx   []int // schema field index of each partition column
	partNames []string
	partTypes []deltalog.Type
	//lint:ignore SA1019 the untyped row writer is what a schema known only at run time needs; GenericWriter is for Go struct rows
	pw *parquet.Writer
	// rgStart is w.pw.Size() when the open row group began; rgRows
	// counts its rows.
	rgStart, rgRows int64
	buf             bytes.Buffer
	rows            []parquet.Row
	dataRow         []any
}

// NewWriter validates the options and prepares the Parquet schema and statistics plan.
func NewWriter(opts Options) (*Writer, error) {
	if opts.Schema == nil || len(opts.Schema.Fields) == 0 {
		return nil, fmt.Errorf("%w: empty table schema", ErrSchema)
	}
	if opts.TargetFileSize <= 0 {
		opts.TargetFileSize = DefaultTargetFileSize
	}
	if opts.RowGroupSize <= 0 {
		opts.RowGroupSize = DefaultRowGroupSize
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = DefaultRowGroupRows
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NamePrefix == "" {
		opts.NamePrefix = "part"
	}
	opts.Dir = strings.Trim(opts.Dir, "/")
	if err := checkName(opts.Dir, true); err != nil {
		return nil, err
	}
	if err := checkName(opts.NamePrefix, false); err != nil {
		return nil, err
	}
	mode, err := parseMappingMode(opts.Properties)
	if err != nil {
		return nil, err
	}
	w := &Writer{opts: opts, mode: mode, tight: opts.Properties[propDeletionVectors] == "true"}
	if w.codec, err = codecFor(opts.Properties[propCodec]); err != nil {
		return nil, err
	}
	partOf := make([]int, len(opts.Schema.Fields)) // 1 + position in PartitionColumns, 0 for data
	for j, p := range opts.PartitionColumns {
		i := fieldIndex(opts.Schema, p)
		if i < 0 {
			return nil, fmt.Errorf("%w: partition column %q not in schema", ErrSchema, p)
		}
		if partOf[i] != 0 {
			return nil, fmt.Errorf("%w: partition column %q listed twice", ErrSchema, p)
		}
		partOf[i] = j + 1
		f := &opts.Schema.Fields[i]
		switch f.Type.(type) {
		case deltalog.PrimitiveType, deltalog.DecimalType:
		default:
			return nil, fmt.Errorf("%w: partition column %q has nested type %s", ErrSchema, p, f.Type)
		}
		w.partIdx = append(w.partIdx, i)
		w.partNames = append(w.partNames, physicalName(f, mode))
		w.partTypes = append(w.partTypes, f.Type)
	}
	var data []deltalog.StructField
	for i := range opts.Schema.Fields {
		if partOf[i] == 0 {
			w.dataIdx = append(w.dataIdx, i)
			data = append(data, opts.Schema.Fields[i])
		}
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: every column is a partition column", ErrSchema)
	}
	if w.schema, err = parquetSchema(data, nodeOptions{mode: mode, delta: opts.DeltaEncodings}); err != nil {
		return nil, err
	}
	po := planOptions{mode: mode, numIndexed: defaultNumIndexed, statsLeaves: &w.stats}
	if s := opts.Properties[propStatsColumns]; s != "" {
		po.statsPaths = parseStatsColumns(s)
	} else if s := opts.Properties[propNumIndexedCols]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < -1 {
			return nil, fmt.Errorf("%w: bad %s %q", ErrSchema, propNumIndexedCols, s)
		}
		po.numIndexed = n
	}
	root, ncols, err := buildPlan(data, po)
	if err != nil {
		return nil, err
	}
	w.plan = root
	w.shred = newShredder(root, ncols)
	w.dataRow = make([]any, len(data))
	return w, nil
}

// pageBufferSize bounds the uncompressed size of a page.
const pageBufferSize = 1 << 20

// newFile starts a fresh file buffer. It builds a new parquet.Writer rather than
// Reset-ing the last one: parquet-go v0.32's Reset leaves path_in_schema empty in the
// next file's footer, which parquet-mr (Spark) refuses.
func (w *Writer) newFile() {
	w.buf.Reset()
	w.rgStart, w.rgRows = 0, 0
	w.pw = parquet.NewWriter(&w.buf, w.schema,
		parquet.Compression(w.codec.Codec),
		parquet.CreatedBy("cdc2delta", "", ""),
		parquet.PageBufferSize(pageBufferSize),
		// Each page's bounds still go to the column index and the row group's
		// statistics, which readers prune with; parquet-java (PARQUET-1365) and
		// arrow-rs no longer write them in page headers too. There parquet-go
		// computed them a second time per page: about 2.5% of the CPU of a
		// process that rewrites small tables' tails.
		parquet.DataPageStatistics(false),
	)
}

// Write stores rows (aligned with the schema fields, partition columns included) as one
// or more new data files and returns their add actions. Nothing is committed: the caller
// puts the adds in a commit. On error some files may already exist; they are orphans
// VACUUM removes.
func (w *Writer) Write(ctx context.Context, store deltalog.Store, rows [][]any) (adds []deltalog.Add, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("datafile: writing parquet: %v", r)
		}
	}()
	for i, r := range rows {
		if len(r) != len(w.opts.Schema.Fields) {
			return nil, &ValueError{Row: i, Column: "*", Err: fmt.Errorf("%w: row has %d values, schema %d columns", ErrSchema, len(r), len(w.opts.Schema.Fields))}
		}
	}
	return w.writeGroups(ctx, store, batch{rows: rows})
}

// writeGroups writes the rows of src, split by partition, each partition's
// rows into files of their own.
func (w *Writer) writeGroups(ctx context.Context, store deltalog.Store, src batch) (adds []deltalog.Add, err error) {
	if len(w.partIdx) == 0 {
		return w.writeGroup(ctx, store, src, allRows(src.len()), nil)
	}
	groups, values, err := w.groupRows(src)
	if err != nil {
		return nil, err
	}
	for g, idx := range groups {
		a, err := w.writeGroup(ctx, store, src, idx, values[g])
		adds = append(adds, a...)
		if err != nil {
			return adds, err
		}
	}
	return adds, nil
}

// groupRows splits the indices of b's rows by partition tuple, in order of
// first appearance. Consecutive rows often share their partition (a batch of
// one day): a row whose partition values w.samePartition finds equal to the
// previous row's joins its group without serializing them.
func (w *Writer) groupRows(b batch) ([][]int, [][]*string, error) {
	var groups [][]int
	var values [][]*string
	seen := map[string]int{}
	var key []byte
	vals := make([]*string, len(w.partIdx))
	prev := -1 // group of the previous row
	for i := range b.len() {
		if prev >= 0 && w.samePartition(b, i) {
			groups[prev] = append(groups[prev], i)
			continue
		}
		key = key[:0]
		for j, fi := range w.partIdx {
			s, err := PartitionValue(w.partTypes[j], w.cell(b, i, fi))
			if err != nil {
				return nil, nil, &ValueError{Row: i, Column: w.opts.Schema.Fields[fi].Name, Err: err}
			}
			if s == nil && !w.opts.Schema.Fields[fi].Nullable {
				return nil, nil, &ValueError{Row: i, Column: w.opts.Schema.Fields[fi].Name, Err: ErrNull}
			}
			vals[j] = s
			if s == nil {
				key = append(key, 0)
			} else {
				key = strconv.AppendInt(append(key, 1), int64(len(*s)), 10)
				key = append(append(key, ':'), *s...)
			}
		}
		g, ok := seen[string(key)]
		if !ok {
			g = len(groups)
			seen[string(key)] = g
			groups = append(groups, nil)
			values = append(values, slices.Clone(vals))
		}
		groups[g] = append(groups[g], i)
		prev = g
	}
	return groups, values, nil
}

// samePartition reports whether row i of b holds the partition values of row
// i-1, for values compared cheaply; false sends a row the slow way, which is
// always right.
func (w *Writer) samePartition(b batch, i int) bool {
	for _, fi := range w.partIdx {
		var same bool
		if b.cols != nil {
			same = b.cols[fi].same(i, i-1)
		} else {
			same = sameScalar(b.rows[i][fi], b.rows[i-1][fi])
		}
		if !same {
			return false
		}
	}
	return true
}

// cell is row i's value of schema field fi, as Write takes it.
func (w *Writer) cell(b batch, i, fi int) any {
	if b.cols != nil {
		return b.cols[fi].at(i, w.leafOf(fi))
	}
	return b.rows[i][fi]
}

func sameScalar(a, b any) bool {
	switch x := a.(type) {
	case int32:
		y, ok := b.(int32)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case int16:
		y, ok := b.(int16)
		return ok && x == y
	case int8:
		y, ok := b.(int8)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}

// writeGroup writes the rows idx of one partition into as many files as the target size needs.
func (w *Writer) writeGroup(ctx context.Context, store deltalog.Store, rows batch, idx []int, part []*string) ([]deltalog.Add, error) {
	var adds []deltalog.Add
	for len(idx) > 0 || len(adds) == 0 {
		n, err := w.fill(ctx, rows, idx)
		if err != nil {
			return adds, err
		}
		idx = idx[n:]
		add, err := w.finish(ctx, store, part, int64(n), len(adds))
		if err != nil {
			return adds, err
		}
		adds = append(adds, add)
		if len(idx) == 0 {
			break
		}
	}
	return adds, nil
}

// fill writes rows into a fresh file buffer until they run out or the file reaches the
// target size, and returns how many it took.
func (w *Writer) fill(ctx context.Context, rows batch, idx []int) (int, error) {
	w.newFile()
	for _, s := range w.stats {
		s.reset()
	}
	return w.writeRows(ctx, rows, idx, w.opts.TargetFileSize)
}

// writeRows writes the rows idx into the open file, a batch at a time, closing
// each row group when it is full, until they run out or the file reaches
// fileSize bytes, and returns how many it took. A batch ends where the row
// group reaches RowGroupRows, so that groups are cut at exactly that many rows.
func (w *Writer) writeRows(ctx context.Context, rows batch, idx []int, fileSize int64) (int, error) {
	done := 0
	for done < len(idx) {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		end := min(done+writeBatchRows, len(idx))
		if room := w.opts.RowGroupRows - w.rgRows; room < int64(end-done) {
			end = done + int(max(room, 1))
		}
		if err := w.writeBatch(rows, idx[done:end]); err != nil {
			return done, err
		}
		w.rgRows += int64(end - done)
		done = end
		size := w.pw.Size()
		if w.groupFull() {
			if err := w.closeGroup(); err != nil {
				return done, err
			}
		}
		if size >= fileSize {
			break
		}
	}
	return done, nil
}

// groupFull reports whether the open row group holds RowGroupRows rows or
// RowGroupSize bytes.
func (w *Writer) groupFull() bool {
	return w.rgRows >= w.opts.RowGroupRows || w.pw.Size()-w.rgStart >= w.opts.RowGroupSize
}

// closeGroup flushes the open row group; the next rows start another.
func (w *Writer) closeGroup() error {
	if err := w.pw.Flush(); err != nil {
		return fmt.Errorf("flushing row group: %w", err)
	}
	w.rgStart, w.rgRows = w.pw.Size(), 0
	return nil
}

// writeBatch shreds and writes the rows idx. Flat schemas go column by column to
// parquet-go's column writers, skipping the row-to-column split of WriteRows; nested
// schemas need whole rows so parquet-go can keep repeated values of a row on one page.
func (w *Writer) writeBatch(b batch, idx []int) error {
	rows := b.rows
	if w.shred.flat {
		for i := range w.shred.cols {
			w.shred.cols[i] = w.shred.cols[i][:0]
		}
		if b.cols != nil {
			if err := w.writeColumns(b.cols, idx); err != nil {
				return err
			}
		} else {
			for _, ri := range idx {
				w.project(rows[ri])
				if err := w.shred.appendColumns(w.dataRow); err != nil {
					return rowErr(err, ri)
				}
			}
		}
		for i, cw := range w.pw.ColumnWriters() {
			if _, err := cw.WriteRowValues(w.shred.cols[i]); err != nil {
				return fmt.Errorf("writing parquet column %d: %w", i, err)
			}
		}
		return nil
	}
	// Rows are reused across batches: WriteRows copies values into column buffers.
	if cap(w.rows) < len(idx) {
		w.rows = append(w.rows[:cap(w.rows)], make([]parquet.Row, len(idx)-cap(w.rows))...)
	}
	w.rows = w.rows[:len(idx)]
	for k, ri := range idx {
		w.project(rows[ri])
		row, err := w.shred.shred(w.rows[k][:0], w.dataRow)
		if err != nil {
			return rowErr(err, ri)
		}
		w.rows[k] = row
	}
	if _, err := w.pw.WriteRows(w.rows); err != nil {
		return fmt.Errorf("writing parquet rows: %w", err)
	}
	return nil
}

// project copies the data columns of a table row into w.dataRow.
func (w *Writer) project(r []any) {
	for j, fi := range w.dataIdx {
		w.dataRow[j] = r[fi]
	}
}

func rowErr(err error, row int) error {
	var ve *ValueError
	if errors.As(err, &ve) {
		ve.Row = row
	}
	return err
}

// finish closes the current file, stores it and builds its add action.
func (w *Writer) finish(ctx context.Context, store deltalog.Store, part []*string, numRows int64, seq int) (deltalog.Add, error) {
	if err := w.pw.Close(); err != nil {
		return deltalog.Add{}, fmt.Errorf("closing parquet file: %w", err)
	}
	id, err := uuid.NewRandom()
	if err != nil {
		return deltalog.Add{}, fmt.Errorf("naming data file: %w", err)
	}
	name := fmt.Sprintf("%s-%05d-%s.c000", w.opts.NamePrefix, seq, id)
	if w.codec.tag != "" {
		name += "." + w.codec.tag
	}
	name += ".parquet"
	var dir string
	switch {
	case w.mode != mappingNone:
		// Spark's layout for column-mapped tables: physical names make Hive directories
		// meaningless, and random prefixes spread S3 load.
		dir = randomPrefix(id) + "/"
	case len(w.partNames) > 0:
		dir = partitionDir(w.partNames, part)
	}
	key := dir + name
	if w.opts.Dir != "" {
		key = w.opts.Dir + "/" + key
	}
	data := w.buf.Bytes()
	if err := store.Put(ctx, key, data); err != nil {
		return deltalog.Add{}, fmt.Errorf("storing data file %s: %w", key, err)
	}
	stats, err := fileStats(numRows, w.stats, w.tight)
	if err != nil {
		return deltalog.Add{}, err
	}
	pv := make(map[string]*string, len(w.partNames))
	for i, n := range w.partNames {
		pv[n] = part[i]
	}
	return deltalog.Add{
		Path:             uriEscapePath(key),
		PartitionValues:  pv,
		Size:             int64(len(data)),
		ModificationTime: w.opts.Now().UnixMilli(),
		DataChange:       !w.opts.NoDataChange,
		Stats:            stats,
	}, nil
}

// checkName keeps Dir and NamePrefix to characters that need no escaping.
func checkName(s string, slashes bool) error {
	for _, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || slashes && c == '/' {
			continue
		}
		return fmt.Errorf("%w: %q may only hold letters, digits, '_', '-', '.'", ErrSchema, s)
	}
	if strings.Contains("/"+s+"/", "/../") || strings.Contains("/"+s+"/", "/./") {
		return fmt.Errorf("%w: %q has a relative segment", ErrSchema, s)
	}
	return nil
}

// randomPrefix derives a two-character alphanumeric directory from the file's UUID.
func randomPrefix(id uuid.UUID) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	return string([]byte{alphabet[int(id[14])%len(alphabet)], alphabet[int(id[15])%len(alphabet)]})
}
