package tableops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

// OptimizeOptions configure [Optimize].
type OptimizeOptions struct {
	// TargetSize is the size in bytes of the compacted files; files smaller than it are
	// compacted. It must be positive.
	TargetSize int64
	// TargetRows bounds the rows of the compacted files too (0: no bound): a file
	// whose statistics count at least TargetRows rows is full, as one of TargetSize
	// bytes is, and a bin closes before a file would take it past TargetRows. Narrow
	// rows make a file of TargetSize bytes hold tens of millions of them, and every
	// row a compaction rewrites is one a writer's key index must index again. A file
	// without statistics is weighed by its bytes only. ZOrderBy ignores it.
	TargetRows int64
	// OrderBy sorts the rows of every compacted file by these columns (matched without
	// regard to case), nulls first; the commit records them as Spark's zOrderBy. Empty:
	// rows keep the order of the files they come from.
	OrderBy []string
	// ZOrderBy rewrites every file of each partition, its rows along Delta's Z-order
	// curve over these data columns (see zOrderRows), into files of the target size, as
	// Spark's OPTIMIZE ZORDER BY does; the commit records them as zOrderBy. A partition's
	// rows are held at once. Exclusive with OrderBy.
	ZOrderBy []string
	// PurgeRatio is the fraction of its rows a deletion vector must hide for a file of
	// the target size or more to be rewritten, and for a small file to be rewritten
	// alone (0: any deletion vector is purged, as Spark's OPTIMIZE does). Automatic
	// maintenance sets it, so that a large file a stream keeps touching is not
	// rewritten for every few deleted rows.
	PurgeRatio float64
	// MaxInputBytes bounds the bytes one run rewrites (0: no bound): bins are taken
	// smallest first until it is reached, so an automatic run stays short and bounded.
	MaxInputBytes int64
	// MaxInputRows bounds the rows one run rewrites (0: no bound), as their
	// statistics count them: bins are taken smallest first while their rows stay
	// within it, and at least one. It bounds what one commit hands a writer of the
	// table to index again.
	MaxInputRows int64
	// Select, when set, picks the files the run may compact: writers that share a
	// table each compact their own.
	Select func(*deltalog.Add) bool
	// UnionTag names a tag whose value is a ","-separated set: a compacted file
	// carries the union of its inputs' values, or none if one of them has none.
	UnionTag string
	// MovedTags, when set, gives tags for a compacted file whose rows moved
	// unsorted from its inputs (OptimizeMetrics.Moved), from those moves: a
	// writer that indexes rows by file and row can follow them from the log.
	MovedTags func(moves []Moved) map[string]string
	// DeltaEncodings writes the compacted files with datafile's delta
	// encodings (datafile.Options.DeltaEncodings), as a change log's own
	// appends are written, so that compaction keeps their smaller files.
	DeltaEncodings bool
}

// purge reports whether f's deletion vector is worth a rewrite on its own.
func (o OptimizeOptions) purge(f *deltalog.Add) bool {
	dv := f.DeletionVector
	if dv == nil {
		return false
	}
	if o.PurgeRatio <= 0 {
		return true
	}
	st, ok, err := deltalog.ParseStatsSummary(f.Stats)
	if err != nil || !ok || st.NumRecords <= 0 {
		return true // unknown size: purge, as OPTIMIZE would
	}
	return float64(dv.Cardinality) >= o.PurgeRatio*float64(st.NumRecords)
}

// OptimizeMetrics are an OPTIMIZE's results, Spark's operationMetrics. A zero
// OptimizeMetrics means there was nothing to compact and nothing was committed.
type OptimizeMetrics struct {
	// Version is the OPTIMIZE commit.
	Version                   int64
	NumAddedFiles             int
	NumRemovedFiles           int
	NumAddedBytes             int64
	NumRemovedBytes           int64
	NumDeletionVectorsRemoved int
	// The sizes of the added files: the smallest, the quartiles and the largest.
	MinFileSize, P25FileSize, P50FileSize, P75FileSize, MaxFileSize int64
	// Rebases counts the concurrent commits the rewrite was carried past
	// (their deletion vectors marked in its files); not one of Spark's.
	Rebases int
	// Moved says where the rows of the removed files went, where a writer
	// can follow them without reading the added files; not one of Spark's.
	Moved []Moved
}

// operationMetrics renders m under Spark's names.
func (m OptimizeMetrics) operationMetrics() map[string]string {
	return map[string]string{
		"numAddedFiles": strconv.Itoa(m.NumAddedFiles), "numRemovedFiles": strconv.Itoa(m.NumRemovedFiles),
		"numAddedBytes": strconv.FormatInt(m.NumAddedBytes, 10), "numRemovedBytes": strconv.FormatInt(m.NumRemovedBytes, 10),
		"minFileSize": strconv.FormatInt(m.MinFileSize, 10), "p25FileSize": strconv.FormatInt(m.P25FileSize, 10),
		"p50FileSize": strconv.FormatInt(m.P50FileSize, 10), "p75FileSize": strconv.FormatInt(m.P75FileSize, 10),
		"maxFileSize":               strconv.FormatInt(m.MaxFileSize, 10),
		"numDeletionVectorsRemoved": strconv.Itoa(m.NumDeletionVectorsRemoved),
	}
}

// Optimize bin-packs, per partition, the files of snap smaller than the target size and
// every file with a deletion vector into files of about the target size, and commits
// the swap with dataChange=false, as Spark's OPTIMIZE does: readers see the same rows,
// and streaming readers skip the commit. Bins are bounded by the target size so memory
// stays bounded: the rows of one bin are held at once; with TargetRows, by rows too.
func Optimize(ctx context.Context, t *deltalog.Table, snap *deltalog.Snapshot, opts OptimizeOptions) (OptimizeMetrics, error) {
	if opts.TargetSize <= 0 {
		return OptimizeMetrics{}, fmt.Errorf("tableops: optimize target size %d is not positive", opts.TargetSize)
	}
	meta, schema := snap.Metadata(), snap.Schema()
	order, err := columnIndexes(schema, opts.OrderBy)
	if err != nil {
		return OptimizeMetrics{}, err
	}
	sortFn := func(rows [][]any) { sortRows(rows, order) }
	recorded := opts.OrderBy
	if len(opts.ZOrderBy) > 0 {
		if len(opts.OrderBy) > 0 {
			return OptimizeMetrics{}, errors.New("tableops: optimize orders by key or by Z-order, not both")
		}
		if order, err = columnIndexes(schema, opts.ZOrderBy); err != nil {
			return OptimizeMetrics{}, err
		}
		for _, i := range order {
			if slices.ContainsFunc(meta.PartitionColumns, func(p string) bool { return strings.EqualFold(p, schema.Fields[i].Name) }) {
				return OptimizeMetrics{}, fmt.Errorf("tableops: %q is a partition column: Z-order applies to data columns only", schema.Fields[i].Name)
			}
		}
		sortFn = func(rows [][]any) { zOrderRows(rows, order) }
		recorded = opts.ZOrderBy
	}
	w, err := datafile.NewWriter(datafile.Options{
		Schema: schema, PartitionColumns: meta.PartitionColumns, Properties: meta.Configuration,
		TargetFileSize: opts.TargetSize, NoDataChange: true, DeltaEncodings: opts.DeltaEncodings,
	})
	if err != nil {
		return OptimizeMetrics{}, err
	}
	var bins []*compacted
	dvs := deltalog.NewDVReader(t.Store())
	for _, bin := range opts.plan(snap) {
		c := &compacted{inputs: bin, dropped: make([]bool, len(bin)), sorted: len(order) > 0}
		for i := range bin {
			c.read = append(c.read, bin[i].DeletionVector)
		}
		copied := false
		if len(order) == 0 {
			if copied, err = c.copy(ctx, t.Store(), w, dvs); err != nil {
				return OptimizeMetrics{}, err
			}
		}
		if !copied {
			if err := c.rewrite(ctx, t.Store(), w, snap, sortFn); err != nil {
				return OptimizeMetrics{}, err
			}
		}
		if tag := unionTag(bin, opts.UnionTag); tag != "" {
			for i := range c.outputs {
				c.outputs[i].Tags = map[string]string{opts.UnionTag: tag}
			}
		}
		bins = append(bins, c)
	}
	if len(bins) == 0 {
		return OptimizeMetrics{}, nil
	}
	orderBy, _ := json.Marshal(recorded) // []string: cannot fail
	if len(recorded) == 0 {
		orderBy = []byte("[]")
	}
	commit := func(snap *deltalog.Snapshot, rebases int) (OptimizeMetrics, error) {
		mv := moved(bins)
		if opts.MovedTags != nil {
			tagMoved(bins, mv, opts.MovedTags)
		}
		actions, removed, m := compaction(bins)
		if len(actions) == 0 {
			return OptimizeMetrics{}, nil // concurrent commits removed every input
		}
		m.Rebases, m.Moved = rebases, mv
		op := deltalog.Operation{Name: deltalog.OpOptimize, Metrics: m.operationMetrics(),
			Parameters: map[string]string{"predicate": "[]", "zOrderBy": string(orderBy)}}
		res, err := t.Commit(ctx, snap, actions, op, deltalog.ReadFiles(removed...))
		m.Version = res.Version
		return m, err
	}
	m, err := commit(snap, 0)
	// A writer that marked rows of the inputs deleted, or removed inputs,
	// meanwhile does not undo the rewrite: those rows are marked deleted in
	// the outputs too. Sorted rows do not keep their inputs' order, so that
	// rewrite gives way.
	var ce *deltalog.ConflictError
	for rebases := 1; errors.As(err, &ce) && len(order) == 0 && rebases <= maxOptimizeRebases; rebases++ {
		cur, uerr := t.Update(ctx, snap)
		if uerr != nil {
			break
		}
		if rerr := rebase(ctx, t.Store(), snap, cur, bins); rerr != nil {
			if !errors.Is(rerr, errNoRebase) {
				err = rerr
			} else {
				// Still the conflict, saying why it was not carried past.
				err = fmt.Errorf("%w (%v)", err, rerr)
			}
			break
		}
		snap = cur
		m, err = commit(snap, rebases)
	}
	if err != nil {
		return OptimizeMetrics{}, fmt.Errorf("committing OPTIMIZE: %w", err)
	}
	return m, nil
}

// compaction returns the commit of bins: the removes of their inputs, as
// last accounted for, and the adds of their outputs that still hold a row;
// the paths removed; and its metrics.
func compaction(bins []*compacted) ([]deltalog.Action, []string, OptimizeMetrics) {
	var actions []deltalog.Action
	var removed []string
	var added []int64
	var m OptimizeMetrics
	for _, b := range bins {
		for i, f := range b.inputs {
			if b.dropped[i] {
				continue
			}
			actions = append(actions, deltalog.Action{Remove: f.Remove(false)})
			removed = append(removed, f.Path)
			m.NumRemovedBytes += f.Size
			if f.DeletionVector != nil {
				m.NumDeletionVectorsRemoved++
			}
		}
		for j := range b.outputs {
			if b.empty(j) {
				continue // its file is left for vacuum
			}
			actions = append(actions, deltalog.Action{Add: &b.outputs[j]})
			added = append(added, b.outputs[j].Size)
			m.NumAddedBytes += b.outputs[j].Size
		}
	}
	m.NumRemovedFiles, m.NumAddedFiles = len(removed), len(added)
	if len(added) > 0 {
		slices.Sort(added)
		pct := func(p int) int64 { return added[(len(added)-1)*p/100] }
		m.MinFileSize, m.P25FileSize, m.P50FileSize, m.P75FileSize, m.MaxFileSize = pct(0), pct(25), pct(50), pct(75), pct(100)
	}
	return actions, removed, m
}

// plan returns the bins a run compacts, by partition, smallest first, up to
// MaxInputBytes and MaxInputRows: always at least one.
func (o OptimizeOptions) plan(snap *deltalog.Snapshot) [][]deltalog.Add {
	byPartition := map[string][]sized{}
	counted := o.TargetRows > 0 || o.MaxInputRows > 0
	for _, f := range snap.Files() {
		if o.Select != nil && !o.Select(&f) {
			continue
		}
		var rows int64
		if counted {
			rows, _ = fileRows(&f)
		}
		full := f.Size >= o.TargetSize || o.TargetRows > 0 && rows >= o.TargetRows
		if len(o.ZOrderBy) == 0 && full && !o.purge(&f) {
			continue
		}
		pv, _ := json.Marshal(f.PartitionValues) // a map of strings: cannot fail
		byPartition[string(pv)] = append(byPartition[string(pv)], sized{Add: f, rows: rows})
	}
	var out [][]deltalog.Add
	var input, inputRows int64
	for _, pk := range slices.Sorted(maps.Keys(byPartition)) {
		var pbins []bin
		if len(o.ZOrderBy) > 0 { // the whole partition
			z := bin{}
			for _, f := range byPartition[pk] {
				z.files = append(z.files, f.Add)
				z.rows += f.rows
			}
			pbins = []bin{z}
		} else {
			pbins = bins(byPartition[pk], o.TargetSize, o.TargetRows, o.purge)
		}
		for _, b := range pbins {
			if len(out) > 0 && (o.MaxInputBytes > 0 && input >= o.MaxInputBytes ||
				o.MaxInputRows > 0 && inputRows+b.rows > o.MaxInputRows) {
				return out
			}
			out = append(out, b.files)
			inputRows += b.rows
			for _, f := range b.files {
				input += f.Size
			}
		}
	}
	return out
}

// unionTag is the union of the bin's values of the set-valued tag name, ""
// when a file has none.
func unionTag(bin []deltalog.Add, name string) string {
	if name == "" {
		return ""
	}
	set := map[string]bool{}
	for _, f := range bin {
		v := f.Tags[name]
		if v == "" {
			return ""
		}
		for e := range strings.SplitSeq(v, ",") {
			set[e] = true
		}
	}
	return strings.Join(slices.Sorted(maps.Keys(set)), ",")
}

// Debt is what Optimize with opts would save a full scan of snap, in as many runs
// as MaxInputBytes and MaxInputRows take: the objects (data files and deletion
// vectors) it reads beyond what the runs would leave. Each bin becomes about one
// file. The bounds on a run do not hide debt: a table whose first bins are small
// is still compacted once all of them add up.
func Debt(snap *deltalog.Snapshot, opts OptimizeOptions) int {
	if opts.TargetSize <= 0 {
		return 0
	}
	opts.MaxInputBytes, opts.MaxInputRows = 0, 0
	n := 0
	for _, bin := range opts.plan(snap) {
		n += len(bin) - 1
		for _, f := range bin {
			if f.DeletionVector != nil {
				n++
			}
		}
	}
	return n
}

// columnIndexes resolves column names, without regard to case, to schema field indexes.
func columnIndexes(schema *deltalog.StructType, names []string) ([]int, error) {
	out := make([]int, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(schema.Fields, func(f deltalog.StructField) bool { return strings.EqualFold(f.Name, n) })
		if i < 0 {
			return nil, fmt.Errorf("tableops: order-by column %q is not in the schema", n)
		}
		out = append(out, i)
	}
	return out, nil
}
