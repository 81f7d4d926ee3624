package tableops

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

// Errors of reading a file's rows as a table's, which callers branch on.
var (
	// ErrFileColumns: a key or file column is not a column of the table.
	ErrFileColumns = errors.New("file and table columns differ")
	// ErrFileType: a file's value cannot be read as its column's type.
	ErrFileType = errors.New("file and table types differ")
)

// ReconcileOptions configure Reconcile.
type ReconcileOptions struct {
	// Against is the expected rows: a CSV file with a header or a Parquet
	// file, by its extension (.csv, .parquet).
	Against string
	// Key are the columns that identify a row on both sides. Required.
	Key []string
	// Ignore are table columns never compared, such as metadata columns.
	Ignore []string
	// DeletedColumn, when set, is a boolean column whose true rows count
	// as absent from the table (soft deletes).
	DeletedColumn string
	// Samples is how many rows of each kind the result lists. Default 10.
	Samples int
	// MemoryBytes bounds the rows held at once: both sides are
	// hash-partitioned by key into spill files sized to fit it. Default
	// 256 MiB.
	MemoryBytes int64
	// TempDir holds the spill files; default os.TempDir().
	TempDir string
}

// ReconcileResult counts and samples the differences by key.
type ReconcileResult struct {
	TableRows, FileRows int64
	// Missing are keys in the file but not the table, Extra keys in the
	// table but not the file, Different keys in both with other values.
	Missing, Extra, Different int64
	// DuplicateTable and DuplicateFile count rows beyond the first of their
	// key on each side; such keys are compared by their first row.
	DuplicateTable, DuplicateFile int64
	// Compared are the columns compared besides the key.
	Compared []string
	// Partitions is how many hash partitions the rows went through, and
	// HeldRows the most table rows held in memory at once (one partition's).
	Partitions int
	HeldRows   int64
	// The first keys of each kind, a different one with its columns.
	MissingSamples, ExtraSamples, DifferentSamples []string
}

// Equal reports whether both sides hold the same rows.
func (r *ReconcileResult) Equal() bool {
	return r.Missing == 0 && r.Extra == 0 && r.Different == 0 && r.DuplicateTable == 0 && r.DuplicateFile == 0
}

// Reconcile compares the live rows of snap with the rows of a file, by
// key, in values of the table's column types.
func Reconcile(ctx context.Context, store deltalog.Store, snap *deltalog.Snapshot, opts ReconcileOptions) (*ReconcileResult, error) {
	if opts.Samples <= 0 {
		opts.Samples = 10
	}
	if opts.MemoryBytes <= 0 {
		opts.MemoryBytes = 256 << 20
	}
	src, err := OpenFileRows(ctx, opts.Against, snap.Schema())
	if err != nil {
		return nil, err
	}
	defer src.Close()
	cols, err := reconcileColumns(snap.Schema(), src.Columns(), opts)
	if err != nil {
		return nil, err
	}
	res := &ReconcileResult{}
	for _, c := range cols.fields[len(opts.Key):] {
		res.Compared = append(res.Compared, c.Name)
	}
	parts := partitionsFor(snap, src.Size(), opts.MemoryBytes)
	sp, err := newSpill(opts.TempDir, parts)
	if err != nil {
		return nil, err
	}
	defer sp.close()
	res.Partitions = parts
	if res.TableRows, err = spillTable(ctx, store, snap, cols, opts.DeletedColumn, sp); err != nil {
		return nil, err
	}
	if res.FileRows, err = spillFile(ctx, src, cols, sp); err != nil {
		return nil, err
	}
	for p := range parts {
		if err := compareRows(ctx, sp, p, cols, res, opts.Samples); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// reconciled are the columns compared: the key first, then the others
// both sides have, as table fields.
type reconciled struct {
	fields []deltalog.StructField
	nkey   int
}

func reconcileColumns(schema *deltalog.StructType, fileCols []string, opts ReconcileOptions) (reconciled, error) {
	if len(opts.Key) == 0 {
		return reconciled{}, fmt.Errorf("%w: no key columns", ErrFileColumns)
	}
	field := func(name string) (deltalog.StructField, bool) {
		for _, f := range schema.Fields {
			if f.Name == name {
				return f, true
			}
		}
		return deltalog.StructField{}, false
	}
	r := reconciled{nkey: len(opts.Key)}
	for _, k := range opts.Key {
		f, ok := field(k)
		if !ok {
			return reconciled{}, fmt.Errorf("%w: key column %q is not in the table", ErrFileColumns, k)
		}
		if !slices.Contains(fileCols, k) {
			return reconciled{}, fmt.Errorf("%w: key column %q is not in %s", ErrFileColumns, k, opts.Against)
		}
		r.fields = append(r.fields, f)
	}
	for _, c := range fileCols {
		if slices.Contains(opts.Key, c) || slices.Contains(opts.Ignore, c) {
			continue
		}
		f, ok := field(c)
		if !ok {
			return reconciled{}, fmt.Errorf("%w: column %q of %s is not in the table", ErrFileColumns, c, opts.Against)
		}
		r.fields = append(r.fields, f)
	}
	return r, nil
}

func (r reconciled) names() []string {
	out := make([]string, len(r.fields))
	for i, f := range r.fields {
		out[i] = f.Name
	}
	return out
}

// row renders typed values (aligned with fields) as a key and cells.
func (r reconciled) row(vals []any) (string, []cell, error) {
	cells := make([]cell, len(vals))
	for i, v := range vals {
		c, err := canonical(r.fields[i].Type, v)
		if err != nil {
			return "", nil, fmt.Errorf("column %s: %w", r.fields[i].Name, err)
		}
		cells[i] = c
	}
	return keyText(cells[:r.nkey]), cells, nil
}

func keyText(cells []cell) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteByte(0)
		}
		if c.null {
			b.WriteByte(1)
		} else {
			b.WriteString(c.text)
		}
	}
	return b.String()
}

// showKey renders a key for a sample: name=value pairs.
func (r reconciled) showKey(cells []cell) string {
	parts := make([]string, r.nkey)
	for i := range r.nkey {
		parts[i] = r.fields[i].Name + "=" + cells[i].String()
	}
	return strings.Join(parts, ", ")
}

// partitionsFor picks how many hash partitions make one partition's rows
// fit in budget, from the sizes on disk (compressed Parquet grows about
// fourfold in memory; a CSV about twofold).
func partitionsFor(snap *deltalog.Snapshot, fileBytes, budget int64) int {
	var tableBytes int64
	for _, f := range snap.Files() {
		tableBytes += f.Size
	}
	need := (4*tableBytes + 2*fileBytes) / budget
	return int(min(max(need+1, 1), maxPartitions))
}

// maxPartitions bounds the spill files, two per partition, open at once.
const maxPartitions = 256

func partitionOf(key string, parts int) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64() % uint64(parts))
}

// spillTable writes the table's live rows to the spill, file by file.
func spillTable(ctx context.Context, store deltalog.Store, snap *deltalog.Snapshot, cols reconciled, deleted string, sp *spill) (int64, error) {
	names := cols.names()
	if deleted != "" {
		names = append(names, deleted)
	}
	meta := snap.Metadata()
	var n int64
	for _, f := range snap.Files() {
		rows, err := datafile.ReadColumns(ctx, store, &f, snap.Schema(), names, datafile.ReadOptions{
			Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns,
		})
		if err != nil {
			return 0, fmt.Errorf("reading %s: %w", f.Path, err)
		}
		for _, vals := range rows {
			if deleted != "" {
				if gone, _ := vals[len(vals)-1].(bool); gone {
					continue
				}
				vals = vals[:len(vals)-1]
			}
			key, cells, err := cols.row(vals)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", f.Path, err)
			}
			if err := sp.write(sideTable, key, cells); err != nil {
				return 0, err
			}
			n++
		}
	}
	return n, nil
}

// spillFile writes the file's rows to the spill.
func spillFile(ctx context.Context, src *FileRows, cols reconciled, sp *spill) (int64, error) {
	at := make([]int, len(cols.fields)) // each field's column in the file
	for i, f := range cols.fields {
		at[i] = slices.Index(src.Columns(), f.Name)
	}
	vals := make([]any, len(at))
	var n int64
	for {
		chunk, err := src.Next(ctx, 4096)
		if err != nil || len(chunk) == 0 {
			return n, err
		}
		for _, r := range chunk {
			for i, j := range at {
				vals[i] = r[j]
			}
			key, cells, err := cols.row(vals)
			if err != nil {
				return 0, fmt.Errorf("%s row %d: %w", src.e.path, n+1, err)
			}
			if err := sp.write(sideFile, key, cells); err != nil {
				return 0, err
			}
			n++
		}
	}
}
