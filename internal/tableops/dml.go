package tableops

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/sqlexpr"
)

// DefaultDMLRetries bounds how often an UPDATE or DELETE is planned again after a
// concurrent writer won a conflicting commit.
const DefaultDMLRetries = 20

// DMLOptions configure [Update] and [Delete].
type DMLOptions struct {
	// DryRun finds the matching rows and files and commits nothing.
	DryRun bool
	// SampleRows is how many matching rows (as they are before the change) the result
	// keeps in Sample; a dry run reads them.
	SampleRows int
	// Protected maps columns (schema names) that UPDATE cannot set to the reason.
	Protected map[string]string
	// OnDelete, when set, is called before each commit attempt of a DELETE with the
	// version the commit must take and every row it deletes (aligned with the schema).
	// The fields it returns go into commitInfo, and then the commit lands at exactly
	// that version or not at all (then the DELETE is planned again): a table the
	// processor maintains records the deleted keys there (ADR 0028).
	OnDelete func(ctx context.Context, version int64, rows [][]any) (map[string]string, error)
	// Retries bounds re-planning after a lost commit race; 0 means DefaultDMLRetries.
	Retries int
	// TargetFileSize bounds new data files; 0 means datafile.DefaultTargetFileSize.
	TargetFileSize int64
	// Now stamps new files; default time.Now.
	Now func() time.Time
}

// DMLMetrics are an UPDATE's or DELETE's results, Spark's operationMetrics.
type DMLMetrics struct {
	// Version is the commit; -1 for a dry run or when no row matched.
	Version int64
	// Retries counts the plans after lost commit races.
	Retries int
	// FilesScanned are the files read after pruning; FilesPruned those the partition
	// values and statistics ruled out.
	FilesScanned, FilesPruned int
	// MatchedFiles hold at least one matching row.
	MatchedFiles                                                                  int
	NumUpdatedRows, NumDeletedRows, NumCopiedRows                                 int64
	NumAddedFiles, NumRemovedFiles, NumAddedChangeFiles                           int
	NumDeletionVectorsAdded, NumDeletionVectorsRemoved, NumDeletionVectorsUpdated int
	NumAddedBytes, NumRemovedBytes                                                int64
	ExecutionTime, ScanTime, RewriteTime                                          time.Duration
	// Sample holds up to SampleRows matching rows, aligned with Schema.
	Sample [][]any
	Schema *deltalog.StructType
}

// operationMetrics renders m under Spark's names for op.
func (m DMLMetrics) operationMetrics(op string) map[string]string {
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	out := map[string]string{
		"numAddedFiles": strconv.Itoa(m.NumAddedFiles), "numRemovedFiles": strconv.Itoa(m.NumRemovedFiles),
		"numCopiedRows":           n(m.NumCopiedRows),
		"numDeletionVectorsAdded": strconv.Itoa(m.NumDeletionVectorsAdded), "numDeletionVectorsRemoved": strconv.Itoa(m.NumDeletionVectorsRemoved),
		"numDeletionVectorsUpdated": strconv.Itoa(m.NumDeletionVectorsUpdated), "numAddedChangeFiles": strconv.Itoa(m.NumAddedChangeFiles),
		"numAddedBytes": n(m.NumAddedBytes), "numRemovedBytes": n(m.NumRemovedBytes),
		"executionTimeMs": n(m.ExecutionTime.Milliseconds()), "scanTimeMs": n(m.ScanTime.Milliseconds()),
		"rewriteTimeMs": n(m.RewriteTime.Milliseconds()),
	}
	if op == deltalog.OpUpdate {
		out["numUpdatedRows"] = n(m.NumUpdatedRows)
	} else {
		out["numDeletedRows"] = n(m.NumDeletedRows)
	}
	return out
}

// Delete removes the rows of the table that satisfy where (Spark SQL; "" deletes every
// row), as Spark's DELETE does: files that no row can match, by partition values and
// statistics, are not read; with deletion vectors on the matching rows are marked in
// them, otherwise every touched file is rewritten without them; with the change data
// feed on the deleted rows are written as change data. A commit lost to a concurrent
// writer is planned again from the new snapshot. A where that does not bind to the
// schema gives the *sqlexpr.Error.
func Delete(ctx context.Context, t *deltalog.Table, snap *deltalog.Snapshot, where string, opts DMLOptions) (DMLMetrics, error) {
	return runDML(ctx, t, snap, dml{op: deltalog.OpDelete, where: where}, opts)
}

// Update sets columns of the rows that satisfy where, as Spark's UPDATE does: each
// element of set is a SET list ("points = 11 - position", "a = 1, b = b + 1"), all
// evaluated over the row before the update. Matching rows are marked deleted (deletion
// vectors) or their files rewritten (copy-on-write), and their new versions appended;
// the change data feed gets update_preimage and update_postimage rows.
func Update(ctx context.Context, t *deltalog.Table, snap *deltalog.Snapshot, set []string, where string, opts DMLOptions) (DMLMetrics, error) {
	if len(set) == 0 {
		return DMLMetrics{}, errors.New("tableops: UPDATE needs at least one assignment")
	}
	return runDML(ctx, t, snap, dml{op: deltalog.OpUpdate, where: where, set: set}, opts)
}

type dml struct {
	op    string
	where string
	set   []string
}

// lostRace reports whether err means another writer won the commit: the operation
// is then planned again from the new snapshot.
func lostRace(err error) bool {
	var ce *deltalog.ConflictError
	return errors.As(err, &ce) && !errors.Is(err, deltalog.ErrRetriesExhausted) || errors.Is(err, deltalog.ErrExist)
}

func runDML(ctx context.Context, t *deltalog.Table, snap *deltalog.Snapshot, d dml, opts DMLOptions) (DMLMetrics, error) {
	retries := opts.Retries
	if retries <= 0 {
		retries = DefaultDMLRetries
	}
	for attempt := 0; ; attempt++ {
		m, err := planDML(ctx, t, snap, d, opts)
		m.Retries = attempt
		if err == nil || !lostRace(err) || attempt >= retries {
			return m, err
		}
		// Back off a little, at random, so that a busy writer leaves a gap.
		wait := time.Duration(10+rand.IntN(40*(attempt+1))) * time.Millisecond
		select {
		case <-ctx.Done():
			return m, ctx.Err()
		case <-time.After(wait):
		}
		if snap, err = t.Update(ctx, snap); err != nil {
			return m, fmt.Errorf("reloading after a lost commit race: %w", err)
		}
	}
}

// dmlPlan is one attempt's work.
type dmlPlan struct {
	d       dml
	opts    DMLOptions
	snap    *deltalog.Snapshot
	meta    deltalog.Metadata
	schema  *deltalog.StructType
	pred    *sqlexpr.Predicate
	setters []*sqlexpr.Setter
	dv, cdf bool
	store   deltalog.Store
	dvs     *deltalog.DVReader
	m       DMLMetrics

	actions []deltalog.Action
	read    []string // candidate files, for conflict detection
	newRows [][]any  // updated rows to write
	changes [][]any  // change data rows, _change_type last
	deleted [][]any  // rows deleted, for OnDelete
	bitmaps []*roaring64.Bitmap
	dvFiles []*deltalog.Add
}

func bindDML(d dml, schema *deltalog.StructType, opts DMLOptions) (*sqlexpr.Predicate, []*sqlexpr.Setter, error) {
	where := d.where
	if strings.TrimSpace(where) == "" {
		where = "true"
	}
	pred, err := sqlexpr.BindPredicate(where, schema)
	if err != nil {
		return nil, nil, err
	}
	var setters []*sqlexpr.Setter
	seen := map[int]bool{}
	for _, s := range d.set {
		ss, err := sqlexpr.BindAssignments(s, schema, sqlexpr.SetterOptions{Protected: opts.Protected})
		if err != nil {
			return nil, nil, err
		}
		for _, st := range ss {
			if seen[st.Column] {
				return nil, nil, &sqlexpr.Error{Kind: sqlexpr.ErrColumn, Expr: s, Column: st.Name(), Msg: "column " + sqlexpr.QuoteName(st.Name()) + " is set twice"}
			}
			seen[st.Column] = true
			setters = append(setters, st)
		}
	}
	return pred, setters, nil
}

func planDML(ctx context.Context, t *deltalog.Table, snap *deltalog.Snapshot, d dml, opts DMLOptions) (DMLMetrics, error) {
	start := time.Now()
	meta, schema := snap.Metadata(), snap.Schema()
	pred, setters, err := bindDML(d, schema, opts)
	if err != nil {
		return DMLMetrics{Version: -1}, err
	}
	proto := snap.Protocol()
	p := &dmlPlan{
		d: d, opts: opts, snap: snap, meta: meta, schema: schema, pred: pred, setters: setters, store: t.Store(),
		dv: strings.EqualFold(meta.Configuration[deltalog.PropEnableDeletionVectors], "true") &&
			proto.HasReaderFeature(deltalog.FeatureDeletionVectors) && proto.HasWriterFeature(deltalog.FeatureDeletionVectors),
		cdf: strings.EqualFold(strings.TrimSpace(meta.Configuration[deltalog.PropEnableChangeDataFeed]), "true"),
		dvs: deltalog.NewDVReader(t.Store()),
		m:   DMLMetrics{Version: -1, Schema: schema},
	}
	if err := p.scan(ctx); err != nil {
		return p.m, err
	}
	if opts.DryRun || p.m.MatchedFiles == 0 {
		p.m.ExecutionTime = time.Since(start)
		return p.m, nil
	}
	if err := p.write(ctx); err != nil {
		return p.m, err
	}
	p.m.ExecutionTime = time.Since(start)
	return p.commit(ctx, t)
}

// candidates prunes the live files by partition values and statistics.
func (p *dmlPlan) candidates() []deltalog.Add {
	var out []deltalog.Add
	for _, f := range p.snap.Files() {
		if p.pred.MayMatch(fileStats(&f, p.schema, p.meta)) {
			out = append(out, f)
		} else {
			p.m.FilesPruned++
		}
	}
	return out
}

// fileStats is what the log says of a file, keyed by schema field index.
func fileStats(f *deltalog.Add, schema *deltalog.StructType, meta deltalog.Metadata) sqlexpr.FileStats {
	fs := sqlexpr.FileStats{NumRecords: -1, Partition: map[int]any{}, Min: map[int]any{}, Max: map[int]any{}, NullCount: map[int]int64{}}
	st, ok, err := deltalog.ParseStats(f.Stats)
	haveStats := err == nil && ok
	if haveStats {
		fs.NumRecords = st.NumRecords
	}
	for i, field := range schema.Fields {
		phys := deltalog.PhysicalName(field)
		if slices.Contains(meta.PartitionColumns, field.Name) {
			if v, err := datafile.ParsePartitionValue(field.Type, f.PartitionValues[phys]); err == nil {
				fs.Partition[i] = v
			}
			continue
		}
		if !haveStats {
			continue
		}
		if v, ok := st.MinValues[phys]; ok {
			fs.Min[i] = v
		}
		if v, ok := st.MaxValues[phys]; ok {
			fs.Max[i] = v
		}
		if v, ok := st.NullCount[phys]; ok {
			if n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64); err == nil {
				fs.NullCount[i] = n
			}
		}
	}
	return fs
}

// needFullRows reports whether matched files must be read whole: to write new row
// versions, change data, the deleted rows for OnDelete, or a sample.
func (p *dmlPlan) needFullRows() bool {
	return p.d.op == deltalog.OpUpdate || p.cdf || p.opts.OnDelete != nil || p.opts.DryRun && p.opts.SampleRows > 0
}

// scan reads the candidate files and handles each one's matching rows.
func (p *dmlPlan) scan(ctx context.Context) error {
	full := p.needFullRows()
	var cols []string
	idx := p.pred.Columns()
	if !full {
		if len(idx) == 0 {
			idx = []int{0} // rows are counted by reading one column
		}
		for _, i := range idx {
			cols = append(cols, p.schema.Fields[i].Name)
		}
	}
	for _, f := range p.candidates() {
		t := time.Now()
		opts := datafile.ReadOptions{Properties: p.meta.Configuration, PartitionColumns: p.meta.PartitionColumns, DeletedRows: roaring64.New()}
		var rows [][]any
		var err error
		if full {
			rows, err = datafile.Read(ctx, p.store, &f, p.schema, opts)
		} else {
			rows, err = datafile.ReadColumns(ctx, p.store, &f, p.schema, cols, opts)
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", f.Path, err)
		}
		gone := roaring64.New()
		if f.DeletionVector != nil {
			if gone, err = p.dvs.Read(ctx, f.DeletionVector); err != nil {
				return fmt.Errorf("reading the deletion vector of %s: %w", f.Path, err)
			}
		}
		p.m.ScanTime += time.Since(t)
		p.m.FilesScanned++
		p.read = append(p.read, f.Path)
		matched := roaring64.New()
		row := make([]any, len(p.schema.Fields))
		for r, vals := range rows {
			if gone.Contains(uint64(r)) {
				continue
			}
			if full {
				row = vals
			} else {
				for k, i := range idx {
					row[i] = vals[k]
				}
			}
			ok, err := p.pred.Matches(row)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			matched.Add(uint64(r))
			if full && len(p.m.Sample) < p.opts.SampleRows {
				p.m.Sample = append(p.m.Sample, slices.Clone(vals))
			}
		}
		if matched.IsEmpty() {
			continue
		}
		p.m.MatchedFiles++
		n := int64(matched.GetCardinality())
		if p.d.op == deltalog.OpUpdate {
			p.m.NumUpdatedRows += n
		} else {
			p.m.NumDeletedRows += n
		}
		if p.opts.DryRun {
			continue
		}
		if err := p.touch(ctx, &f, rows, gone, matched, len(rows)); err != nil {
			return err
		}
	}
	return nil
}

// touch records what happens to one file with matching rows: their new versions, the
// change data, and the removal of the old rows by deletion vector or rewrite.
func (p *dmlPlan) touch(ctx context.Context, f *deltalog.Add, rows [][]any, gone, matched *roaring64.Bitmap, physical int) error {
	full := p.needFullRows()
	for it := matched.Iterator(); it.HasNext(); {
		r := it.Next()
		if !full {
			break
		}
		old := rows[r]
		switch p.d.op {
		case deltalog.OpUpdate:
			nr := slices.Clone(old)
			for _, s := range p.setters {
				v, err := s.Value(old)
				if err != nil {
					return err
				}
				nr[s.Column] = v
			}
			p.newRows = append(p.newRows, nr)
			if p.cdf {
				p.changes = append(p.changes, withType(old, changeUpdatePreimage), withType(nr, changeUpdatePostimage))
			}
		default:
			if p.cdf {
				p.changes = append(p.changes, withType(old, changeDelete))
			}
			if p.opts.OnDelete != nil {
				p.deleted = append(p.deleted, old)
			}
		}
	}
	all := roaring64.Or(gone, matched)
	p.remove(f)
	if all.GetCardinality() >= uint64(physical) {
		return nil // every row leaves: the remove suffices
	}
	if p.dv {
		p.bitmaps = append(p.bitmaps, all)
		p.dvFiles = append(p.dvFiles, f)
		return nil
	}
	return p.rewrite(ctx, f, all)
}

func withType(row []any, kind string) []any {
	return append(slices.Clone(row), kind)
}

func (p *dmlPlan) remove(f *deltalog.Add) {
	p.actions = append(p.actions, deltalog.Action{Remove: f.Remove(true)})
	p.m.NumRemovedFiles++
	p.m.NumRemovedBytes += f.Size
	if f.DeletionVector != nil {
		p.m.NumDeletionVectorsRemoved++
	}
}

func (p *dmlPlan) add(a deltalog.Add) {
	p.actions = append(p.actions, deltalog.Action{Add: &a})
	p.m.NumAddedFiles++
	p.m.NumAddedBytes += a.Size
}

func (p *dmlPlan) writer(dir, prefix string, schema *deltalog.StructType) (*datafile.Writer, error) {
	return datafile.NewWriter(datafile.Options{
		Schema: schema, PartitionColumns: p.meta.PartitionColumns, Properties: p.meta.Configuration,
		TargetFileSize: p.opts.TargetFileSize, Dir: dir, NamePrefix: prefix, Now: p.opts.Now,
	})
}

// rewrite copies the file without the rows in drop (copy-on-write), value for value
// when it can, else by reading and writing its rows.
func (p *dmlPlan) rewrite(ctx context.Context, f *deltalog.Add, drop *roaring64.Bitmap) error {
	t := time.Now()
	defer func() { p.m.RewriteTime += time.Since(t) }()
	w, err := p.writer("", "", p.schema)
	if err != nil {
		return err
	}
	c, ok, err := w.CopyLive(ctx, p.store, f, drop, 2)
	if err != nil {
		return fmt.Errorf("rewriting %s: %w", f.Path, err)
	}
	if ok {
		if c.Add != nil {
			p.add(*c.Add)
			p.m.NumCopiedRows += c.Rows
		}
		return nil
	}
	rows, err := datafile.Read(ctx, p.store, f, p.schema, datafile.ReadOptions{
		Properties: p.meta.Configuration, PartitionColumns: p.meta.PartitionColumns, DeletedRows: drop,
	})
	if err != nil {
		return fmt.Errorf("reading %s: %w", f.Path, err)
	}
	if len(rows) == 0 {
		return nil
	}
	adds, err := w.Write(ctx, p.store, rows)
	if err != nil {
		return fmt.Errorf("rewriting %s: %w", f.Path, err)
	}
	for _, a := range adds {
		p.add(a)
	}
	p.m.NumCopiedRows += int64(len(rows))
	return nil
}

// Change types of the change data feed.
const (
	changeUpdatePreimage  = "update_preimage"
	changeUpdatePostimage = "update_postimage"
	changeDelete          = "delete"
)

// write stores the deletion vectors, the new row versions and the change data.
func (p *dmlPlan) write(ctx context.Context) error {
	t := time.Now()
	defer func() { p.m.RewriteTime += time.Since(t) }()
	if len(p.bitmaps) > 0 {
		descs, err := deltalog.WriteDeletionVectors(ctx, p.store, "", p.bitmaps)
		if err != nil {
			return fmt.Errorf("writing deletion vectors: %w", err)
		}
		for i, old := range p.dvFiles {
			a := *old
			a.DataChange = true
			a.DeletionVector = &descs[i]
			if st, ok, err := deltalog.ParseStats(old.Stats); err == nil && ok {
				// Min and max still cover the deleted rows: no longer tight.
				st.TightBounds = new(bool)
				if js, err := st.JSON(); err == nil {
					a.Stats = js
				}
			}
			if old.DeletionVector != nil {
				p.m.NumDeletionVectorsUpdated++
				p.m.NumDeletionVectorsRemoved-- // counted by remove; Spark counts it as updated
			} else {
				p.m.NumDeletionVectorsAdded++
			}
			p.add(a)
		}
	}
	if len(p.newRows) > 0 {
		w, err := p.writer("", "", p.schema)
		if err != nil {
			return err
		}
		adds, err := w.Write(ctx, p.store, p.newRows)
		if err != nil {
			return fmt.Errorf("writing the updated rows: %w", err)
		}
		for _, a := range adds {
			p.add(a)
		}
	}
	if len(p.changes) > 0 {
		schema := &deltalog.StructType{Fields: append(slices.Clone(p.schema.Fields),
			deltalog.StructField{Name: "_change_type", Type: deltalog.TypeString, Nullable: true, Metadata: map[string]any{}})}
		w, err := p.writer("_change_data", "cdc", schema)
		if err != nil {
			return err
		}
		adds, err := w.Write(ctx, p.store, p.changes)
		if err != nil {
			return fmt.Errorf("writing change data: %w", err)
		}
		for _, a := range adds {
			p.actions = append(p.actions, deltalog.Action{CDC: &deltalog.CDC{Path: a.Path, PartitionValues: a.PartitionValues, Size: a.Size}})
			p.m.NumAddedChangeFiles++
		}
	}
	return nil
}

func (p *dmlPlan) commit(ctx context.Context, t *deltalog.Table) (DMLMetrics, error) {
	// Spark records both operations' predicate as a JSON list of conjuncts.
	b, _ := deltalog.MarshalPlain([]string{p.pred.SQL()}) // a []string always marshals
	params := map[string]string{"predicate": string(b)}
	op := deltalog.Operation{Name: p.d.op, Parameters: params, Metrics: p.m.operationMetrics(p.d.op)}
	copts := []deltalog.CommitOption{
		deltalog.ReadFiles(p.read...),
		deltalog.ReadPredicate(func(a *deltalog.Add) bool { return p.pred.MayMatch(fileStats(a, p.schema, p.meta)) }),
	}
	if p.opts.OnDelete != nil && len(p.deleted) > 0 {
		extra, err := p.opts.OnDelete(ctx, p.snap.Version()+1, p.deleted)
		if err != nil {
			return p.m, err
		}
		if len(extra) > 0 {
			op.Extra = extra
			copts = append(copts, deltalog.ExactVersion())
		}
	}
	res, err := t.Commit(ctx, p.snap, p.actions, op, copts...)
	if err != nil {
		return p.m, fmt.Errorf("committing %s: %w", p.d.op, err)
	}
	p.m.Version = res.Version
	return p.m, nil
}
