package merge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// ChangeLogOptions configure a ChangeLog.
type ChangeLogOptions struct {
	// Store is the change log table's root. Required.
	Store deltalog.Store
	// TableName names it in metaData.name and errors.
	TableName string
	// ColumnNames is how source names that Delta refuses without column
	// mapping are kept (default ColumnNamesMapped).
	ColumnNames ColumnNames
	Logger      *slog.Logger
	// Now stamps files; default time.Now.
	Now func() time.Time
	// TableOptions are passed to deltalog.Open (e.g. DisableCheckpoints,
	// when a maintainer checkpoints the log).
	TableOptions []deltalog.Option
}

// ChangeLog is an append-only Delta table of every change event a table
// applied: the bronze layer (ADR 0031). Each Append commits the batch's
// events with one txn per partition, as the MERGE does, so a replayed event
// is never written twice. It is safe for use by one goroutine at a time.
type ChangeLog struct {
	opts  ChangeLogOptions
	table *deltalog.Table
	mu    sync.Mutex
	snap  *deltalog.Snapshot
	// stale: a reload after a commit failed, so snap is behind the log.
	stale bool
	// latest is snap, for readers that must not wait for an append.
	latest atomic.Pointer[deltalog.Snapshot]
}

// OpenChangeLog opens (or, on first append, creates) the change log.
func OpenChangeLog(ctx context.Context, o ChangeLogOptions) (*ChangeLog, error) {
	if o.Store == nil {
		return nil, errors.New("merge: change log without a store")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ColumnNames == "" {
		o.ColumnNames = ColumnNamesMapped
	}
	t, err := deltalog.Open(ctx, o.Store, append([]deltalog.Option{deltalog.WithLogger(o.Logger)}, o.TableOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("opening change log %s: %w", o.TableName, err)
	}
	l := &ChangeLog{opts: o, table: t}
	if l.snap, err = t.Snapshot(ctx); err != nil && !errors.Is(err, deltalog.ErrNotExist) {
		return nil, fmt.Errorf("opening change log %s: %w", o.TableName, err)
	}
	l.latest.Store(l.snap)
	return l, nil
}

// Snapshot returns the log's snapshot as of its last append (nil before
// the first), without waiting for one in progress.
func (l *ChangeLog) Snapshot() *deltalog.Snapshot { return l.latest.Load() }

// Behind does nothing: appends are blind (they read only their txns), so
// a compaction between two of them needs no catching up. It lets the
// maintainer treat a log as it does a table.
func (l *ChangeLog) Behind() {}

// Positions returns the change log's txn version per partition.
func (l *ChangeLog) Positions(ctx context.Context) (map[cdctable.TopicPartition]int64, error) {
	return positions(ctx, l.table, l.latest.Load(), "change log "+l.opts.TableName)
}

// Append writes the batch's events above the log's txn versions, and moves
// the txn of every partition the batch covers. It returns the version
// committed, or -1 when there was nothing to commit.
func (l *ChangeLog) Append(ctx context.Context, b Batch) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return commitRetrying(ctx, func(ctx context.Context) (int64, error) { return l.append(ctx, b) }, l.reload)
}

// reload reads the log's commits since snap. When it fails, snap stays
// (nil would read as a change log not created yet) and is marked stale.
func (l *ChangeLog) reload(ctx context.Context) error {
	snap, err := l.table.Update(ctx, l.snap)
	if err != nil {
		l.stale = true
		return fmt.Errorf("reloading change log %s: %w", l.opts.TableName, err)
	}
	l.snap, l.stale = snap, false
	l.latest.Store(l.snap)
	return nil
}

func (l *ChangeLog) append(ctx context.Context, b Batch) (int64, error) {
	if l.stale {
		if err := l.reload(ctx); err != nil {
			return -1, err
		}
	}
	applied := map[cdctable.TopicPartition]int64{}
	if l.snap != nil {
		applied = cdctable.Offsets(l.snap)
	}
	// Pointers, not copies: a Record is a few hundred bytes, and copying
	// a batch's worth was the append's largest allocation.
	recs := make([]*Record, 0, len(b.Records))
	last := map[cdctable.TopicPartition]int64{}
	for tp, off := range b.LastOffsets {
		if v, ok := applied[tp]; !ok || off > v {
			last[tp] = off
		}
	}
	for i := range b.Records {
		r := &b.Records[i]
		if v, ok := applied[r.TopicPartition]; ok && r.Offset <= v {
			continue
		}
		if cur, ok := last[r.TopicPartition]; !ok || r.Offset > cur {
			last[r.TopicPartition] = r.Offset
		}
		if r.Change.Op != codecs.OpTombstone {
			recs = append(recs, r)
		}
	}
	if len(last) == 0 {
		return -1, nil
	}
	var pre []deltalog.Action
	schema := (*deltalog.StructType)(nil)
	var meta deltalog.Metadata
	if l.snap != nil {
		schema, meta = l.snap.Schema(), l.snap.Metadata()
	}
	next, changed, err := l.evolve(schema, recs)
	if err != nil {
		return -1, err
	}
	if next == nil {
		// No schema to create the log from yet: nothing is written, and the
		// offsets stay unapplied (they are read again after a restart).
		return -1, nil
	}
	if changed {
		ss, err := next.SchemaString()
		if err != nil {
			return -1, err
		}
		if l.snap == nil {
			created := l.opts.Now().UnixMilli()
			meta = deltalog.Metadata{ID: uuid.NewString(), CreatedTime: &created, Name: l.opts.TableName,
				Description:      "Every change event cdc2delta applied to " + l.opts.TableName + ", append-only, in Kafka order per partition (ADR 0031)",
				Format:           deltalog.Format{Provider: "parquet", Options: map[string]string{}},
				PartitionColumns: []string{cdctable.LogCommitDate}, Configuration: map[string]string{}}
		}
		meta.SchemaString = ss
		if slices.ContainsFunc(next.Fields, func(f deltalog.StructField) bool { return deltalog.NeedsColumnMapping(f.Name) }) &&
			meta.Configuration[deltalog.PropColumnMappingMode] == "" {
			if l.snap != nil {
				// Turning column mapping on here would change the protocol of a
				// table others read: the operator's call.
				return -1, &SchemaError{Table: l.opts.TableName, Reason: "a new column needs column mapping, which the change log was created without",
					Remedy: "enable column mapping on the change log (cdc2delta alter TABLE_changes --set delta.columnMapping.mode=name --upgrade-protocol; " +
						"readers and writers on a Delta without column mapping then lose access), set column_names: portable, " +
						"or move the change log aside (a new path) to start a new one"}
			}
			meta.Configuration[deltalog.PropColumnMappingMode] = "name"
		}
		if meta.Configuration[deltalog.PropColumnMappingMode] == "name" {
			var maxID int64
			if s, ok := meta.Configuration[deltalog.PropColumnMappingMaxID]; ok {
				maxID, _ = strconv.ParseInt(s, 10, 64)
			}
			next, maxID = deltalog.AssignColumnMapping(next, maxID)
			meta.Configuration[deltalog.PropColumnMappingMaxID] = strconv.FormatInt(maxID, 10)
			if meta.SchemaString, err = next.SchemaString(); err != nil {
				return -1, err
			}
		}
		proto := deltalog.MinimalFeaturesProtocol(next, meta.Configuration)
		if l.snap != nil {
			proto = deltalog.UpgradeProtocol(l.snap.Protocol(), proto)
		}
		m := meta
		pre = append(pre, deltalog.Action{Protocol: &proto}, deltalog.Action{Metadata: &m})
	}
	var adds []deltalog.Action
	if len(recs) > 0 {
		// Delta encodings: the log's positions and offsets rise event by
		// event, and zstd was a third of the append's CPU on their plain
		// bytes.
		w, err := datafile.NewWriter(datafile.Options{Schema: next, PartitionColumns: meta.PartitionColumns, Properties: meta.Configuration, Now: l.opts.Now,
			DeltaEncodings: true})
		if err != nil {
			return -1, err
		}
		written, err := w.WriteColumns(ctx, l.opts.Store, logColumns(next, recs))
		if err != nil {
			return -1, fmt.Errorf("writing change log %s: %w", l.opts.TableName, err)
		}
		for i := range written {
			adds = append(adds, deltalog.Action{Add: &written[i]})
		}
	}
	txns := make([]deltalog.Action, 0, len(last))
	for tp, off := range last {
		txns = append(txns, deltalog.Action{Txn: &deltalog.Txn{AppID: tp.AppID(), Version: off}})
	}
	slices.SortFunc(txns, func(a, b deltalog.Action) int { return strings.Compare(a.Txn.AppID, b.Txn.AppID) })
	op := deltalog.Operation{Name: deltalog.OpWrite, Parameters: map[string]string{"mode": "Append"},
		Metrics: map[string]string{"numFiles": strconv.Itoa(len(adds)), "numOutputRows": strconv.Itoa(len(recs))}}
	res, err := l.table.Commit(ctx, l.snap, slices.Concat(pre, adds, txns), op, deltalog.ReadAppIDs(appIDs(last)...))
	if err != nil {
		return -1, fmt.Errorf("committing change log %s: %w", l.opts.TableName, err)
	}
	if res.Snapshot != nil {
		l.snap = res.Snapshot
		l.latest.Store(l.snap)
		return res.Version, nil
	}
	return res.Version, l.reload(ctx)
}

func appIDs(m map[cdctable.TopicPartition]int64) []string {
	out := make([]string, 0, len(m))
	for tp := range m {
		out = append(out, tp.AppID())
	}
	return out
}

// evolve returns the log's schema for the records: the current one, with
// the source columns it lacks appended (nullable), or a new one from the
// first record with a row layout. changed says whether it differs. A column
// whose type changed cannot be logged in place.
func (l *ChangeLog) evolve(cur *deltalog.StructType, recs []*Record) (*deltalog.StructType, bool, error) {
	changed := false
	// A batch holds few layouts, shared by its records: each is checked
	// once. The schema only gains columns, so a layout it covered stays
	// covered.
	var checked []*codecs.Layout
	for i := range recs {
		c := &recs[i].Change
		if c.Layout == nil || slices.Contains(checked, c.Layout) {
			continue
		}
		checked = append(checked, c.Layout)
		if cur == nil {
			names := tableNames(c.Layout.Columns, l.opts.ColumnNames == ColumnNamesPortable)
			cur = &deltalog.StructType{}
			for j, col := range c.Layout.Columns {
				cur.Fields = append(cur.Fields, sourceField(col, names[j], true))
			}
			cur.Fields = append(cur.Fields, cdctable.ChangeLogMetaFields()...)
			changed = true
			continue
		}
		for _, col := range c.Layout.Columns {
			j := slices.IndexFunc(cur.Fields, func(f deltalog.StructField) bool { return sourceName(f) == col.Name })
			if j >= 0 {
				if got, want := cur.Fields[j].Type, deltaType(col.Type); got.String() != want.String() {
					return nil, false, &SchemaError{Table: l.opts.TableName, Reason: fmt.Sprintf("column %s changed type from %s to %s", col.Name, got, want),
						Remedy: "the change log keeps one type per column: move it aside (a new path) to start a new one", Record: recs[i]}
				}
				continue
			}
			names := tableNames([]codecs.Column{col}, l.opts.ColumnNames == ColumnNamesPortable)
			next := &deltalog.StructType{Fields: slices.Clone(cur.Fields)}
			// Source columns stay before the metadata columns.
			at := len(next.Fields) - cdctable.ChangeLogMetaCount
			next.Fields = slices.Insert(next.Fields, at, sourceField(col, names[0], true))
			cur, changed = next, true
		}
	}
	return cur, changed, nil
}

// logColumns are the records as the change log's columns, aligned with
// schema, typed where the column's type allows (datafile.WriteColumns turns
// them into Parquet values without a type switch per value): the metadata
// columns, and the source columns of strings and integers. Each layout's column positions are looked up once, and
// the positions' texts are rendered into one string the columns slice.
func logColumns(schema *deltalog.StructType, recs []*Record) []datafile.Column {
	n := len(recs)
	width := len(schema.Fields)
	nsrc := width - cdctable.ChangeLogMetaCount
	cols := make([]datafile.Column, width)
	values := make([]any, nsrc*n)
	for i := range nsrc {
		cols[i].Values = values[i*n : (i+1)*n : (i+1)*n]
	}
	m := cols[nsrc:]
	strs := make([]string, 7*n)
	for i, at := range []int{0, 1, 2, 3, 7, 9, 10} {
		m[at].Strs = strs[i*n : (i+1)*n : (i+1)*n]
	}
	ints := make([]int64, 6*n)
	for i, at := range []int{4, 5, 6, 8, 11, 12} {
		m[at].Ints = ints[i*n : (i+1)*n : (i+1)*n]
	}
	null := func(c *datafile.Column, k int) {
		if c.Null == nil {
			c.Null = make([]bool, n)
		}
		c.Null[k] = true
	}
	// ends[3k:3k+3] are where row k's position, commit and change texts end
	// in text.
	ends := make([]int, 3*n)
	text := make([]byte, 0, n*(codecs.PositionHexLen+2*22))
	var (
		layouts [][]int // per layout in seen: the layout's index of each source field, -1 when absent
		seen    []*codecs.Layout
	)
	src := schema.Fields[:nsrc]
	for k, r := range recs {
		c := &r.Change
		var unavailable []string
		if c.Layout != nil && c.Row != nil {
			at := slices.Index(seen, c.Layout)
			if at < 0 {
				idx := make([]int, len(src))
				for i, f := range src {
					idx[i] = c.Layout.Index(sourceName(f))
				}
				seen, layouts, at = append(seen, c.Layout), append(layouts, idx), len(seen)
			}
			for i, j := range layouts[at] {
				if j < 0 {
					continue
				}
				if len(c.Unavailable) > 0 && c.IsUnavailable(j) {
					unavailable = append(unavailable, c.Layout.Columns[j].Name)
					continue
				}
				cols[i].Values[k] = c.Row[j]
			}
		}
		// In the source's notation: SQL Server's LSNs, PostgreSQL's last
		// committed LSN and LSN, MySQL's binlog file number and position.
		text = c.Pos.AppendHex(text)
		ends[3*k] = len(text)
		if k == 0 || c.Pos.Commit != recs[k-1].Change.Pos.Commit {
			text = c.Pos.AppendCommitText(text)
		}
		ends[3*k+1] = len(text)
		text = c.Pos.AppendChangeText(text)
		ends[3*k+2] = len(text)
		m[0].Strs[k] = opText(c.Op)
		if c.Pos.Serial > 0 {
			m[4].Ints[k] = c.Pos.Serial
		} else {
			null(&m[4], k)
		}
		if c.CommitMillis > 0 {
			m[5].Ints[k] = c.CommitMillis * 1000
			m[6].Ints[k] = int64(int32(c.CommitMillis / 86_400_000))
		} else {
			null(&m[5], k)
			null(&m[6], k)
		}
		if c.TxID != "" {
			m[7].Strs[k] = c.TxID
		} else {
			null(&m[7], k)
		}
		if c.TxOrder > 0 {
			m[8].Ints[k] = c.TxOrder
		} else {
			null(&m[8], k)
		}
		if len(unavailable) > 0 {
			m[9].Strs[k] = strings.Join(unavailable, ",")
		} else {
			null(&m[9], k)
		}
		m[10].Strs[k] = r.Topic
		m[11].Ints[k] = int64(r.Partition)
		m[12].Ints[k] = r.Offset
	}
	for i := range src {
		typeColumn(&cols[i], src[i].Type)
	}
	// text is complete and never written again: its strings can view it
	// rather than copy a batch's worth of texts.
	all := unsafe.String(unsafe.SliceData(text), len(text))
	from := 0
	commit := ""
	for k, r := range recs {
		m[1].Strs[k] = all[from:ends[3*k]]
		if k == 0 || r.Change.Pos.Commit != recs[k-1].Change.Pos.Commit {
			commit = all[ends[3*k]:ends[3*k+1]]
		}
		if commit != "" {
			m[2].Strs[k] = commit
		} else {
			null(&m[2], k)
		}
		if at := ends[3*k+1]; ends[3*k+2] > at {
			m[3].Strs[k] = all[at:ends[3*k+2]]
		} else {
			null(&m[3], k)
		}
		from = ends[3*k+2]
	}
	return cols
}

// typeColumn turns a source column's values into Strs or Ints when its type
// is a string or an integer and every value is the Go type datafile.Write
// takes for it; otherwise the values stay, and Write's checks apply.
func typeColumn(c *datafile.Column, t deltalog.Type) {
	str := t == deltalog.TypeString
	var want func(any) (int64, bool)
	switch t {
	case deltalog.TypeByte:
		want = func(v any) (int64, bool) { x, ok := v.(int8); return int64(x), ok }
	case deltalog.TypeShort:
		want = func(v any) (int64, bool) { x, ok := v.(int16); return int64(x), ok }
	case deltalog.TypeInteger, deltalog.TypeDate:
		want = func(v any) (int64, bool) { x, ok := v.(int32); return int64(x), ok }
	case deltalog.TypeLong:
		want = func(v any) (int64, bool) { x, ok := v.(int64); return x, ok }
	}
	if !str && want == nil {
		return
	}
	n := len(c.Values)
	var null []bool
	var strs []string
	var ints []int64
	if str {
		strs = make([]string, n)
	} else {
		ints = make([]int64, n)
	}
	for k, v := range c.Values {
		if v == nil {
			if null == nil {
				null = make([]bool, n)
			}
			null[k] = true
			continue
		}
		ok := false
		if str {
			strs[k], ok = v.(string)
		} else {
			ints[k], ok = want(v)
		}
		if !ok {
			return
		}
	}
	*c = datafile.Column{Strs: strs, Ints: ints, Null: null}
}
