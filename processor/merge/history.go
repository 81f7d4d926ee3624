package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// HistoryOptions configure a History.
type HistoryOptions struct {
	// Store is the history table's root. Required.
	Store deltalog.Store
	// TableName names it in metaData.name and errors.
	TableName string
	// ColumnNames is how a new history table names source columns Delta
	// refuses without column mapping (default ColumnNamesMapped).
	ColumnNames ColumnNames
	// TrackHistory are the only source columns whose change opens a new
	// version; TrackHistoryExcept those whose change does not. Both empty:
	// every column. Unknown names are ignored (a column may come later).
	TrackHistory       []string
	TrackHistoryExcept []string
	// DeletionVectors says whether a new history table gets deletion vectors
	// (nil: true). Without them a closed version's file is rewritten.
	DeletionVectors *bool
	Logger          *slog.Logger
	// Now stamps files; default time.Now.
	Now func() time.Time
	// TableOptions are passed to deltalog.Open.
	TableOptions []deltalog.Option
	// Only says the history table is its table's only Delta table, at the
	// table's own path (history: only); it words the refusal of a path that
	// holds another table.
	Only bool
}

// ErrNotHistoryTable means the table at a history table's path is another
// table (no cdctable.PropShape = history).
var ErrNotHistoryTable = errors.New("merge: the path holds a table that is not a history table")

// ErrHistoryOptions reports HistoryOptions that cannot work.
var ErrHistoryOptions = errors.New("merge: invalid history options")

// History keeps a history table (SCD type 2, ADR 0046): every version of
// every row, with __START_AT and __END_AT. Each Apply commits the batch's
// versions with one txn per partition, as the MERGE does, so a replayed event
// never duplicates or splits a version. It is safe for concurrent use;
// batches are applied one at a time.
type History struct {
	opts  HistoryOptions
	table *deltalog.Table
	mu    sync.Mutex
	snap  *deltalog.Snapshot
	stale bool
	// latest is snap, for readers that must not wait for an apply.
	latest atomic.Pointer[deltalog.Snapshot]
	index  *hIndex
}

// OpenHistory opens (or, on first apply, creates) the history table.
func OpenHistory(ctx context.Context, o HistoryOptions) (*History, error) {
	if o.Store == nil {
		return nil, fmt.Errorf("%w: history table %s without a store", ErrHistoryOptions, o.TableName)
	}
	if len(o.TrackHistory) > 0 && len(o.TrackHistoryExcept) > 0 {
		return nil, fmt.Errorf("%w: history table %s: track_history and track_history_except are both set", ErrHistoryOptions, o.TableName)
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
		return nil, fmt.Errorf("opening history table %s: %w", o.TableName, err)
	}
	h := &History{opts: o, table: t, index: newHIndex()}
	if h.snap, err = t.Snapshot(ctx); err != nil && !errors.Is(err, deltalog.ErrNotExist) {
		return nil, fmt.Errorf("opening history table %s: %w", o.TableName, err)
	}
	if h.snap != nil && h.snap.Metadata().Configuration[cdctable.PropShape] != cdctable.ShapeHistory {
		se := &SchemaError{Table: o.TableName, Reason: "the table at the history path is not a history table (no " + cdctable.PropShape + "=" + cdctable.ShapeHistory + ")",
			Remedy: "point history_path at a new location", Err: ErrNotHistoryTable}
		if o.Only {
			se.Reason = "history: only keeps the history table at the table's path, and the table there is a current-state table (no " + cdctable.PropShape + "=" + cdctable.ShapeHistory + ")"
			se.Remedy = "route the table to a new path (tables.path), or keep history: true to keep the history table beside it"
		}
		return nil, se
	}
	h.latest.Store(h.snap)
	return h, nil
}

// Snapshot returns the history table's snapshot as of its last apply (nil
// before the first), without waiting for one in progress.
func (h *History) Snapshot() *deltalog.Snapshot { return h.latest.Load() }

// Behind does nothing: every apply reads the table afresh.
func (h *History) Behind() {}

// Positions returns the history table's txn version per partition.
func (h *History) Positions(ctx context.Context) (map[cdctable.TopicPartition]int64, error) {
	return positions(ctx, h.table, h.latest.Load(), "history table "+h.opts.TableName)
}

// Apply places the batch's events above the table's txn versions among
// their keys' versions and commits, moving the txn of every partition the
// batch covers. It returns the version committed, or -1 when there was
// nothing to commit.
func (h *History) Apply(ctx context.Context, b Batch) (int64, error) {
	res, err := h.ApplyResult(ctx, b)
	if err != nil || !res.Committed {
		return -1, err
	}
	return res.Version, nil
}

// ApplyResult is Apply for a history table that is its table's only Delta
// table (history: only): the Result counts the events applied by kind and
// the records skipped below their partition's txn, and Version is the
// table's version (-1 before creation) when nothing was committed.
func (h *History) ApplyResult(ctx context.Context, b Batch) (Result, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	start := h.opts.Now()
	var res Result
	v, err := commitRetrying(ctx, func(ctx context.Context) (int64, error) {
		res = Result{}
		return h.apply(ctx, b, &res)
	}, h.reload)
	res.Duration = h.opts.Now().Sub(start)
	if err != nil {
		return res, err
	}
	res.Version, res.Committed = v, v >= 0
	if !res.Committed {
		res.Version = -1
		if h.snap != nil {
			res.Version = h.snap.Version()
		}
	}
	return res, nil
}

// Version returns the history table's version as of its last apply, -1
// before creation.
func (h *History) Version() int64 {
	if s := h.latest.Load(); s != nil {
		return s.Version()
	}
	return -1
}

// Stats returns the live-file statistics of the history table as of its
// last apply (zero before creation). It walks the live files: O(files).
func (h *History) Stats() TableStats {
	return statsOf(h.latest.Load(), 0)
}

func (h *History) reload(ctx context.Context) error {
	var snap *deltalog.Snapshot
	var err error
	if h.snap == nil {
		snap, err = h.table.Snapshot(ctx)
		if errors.Is(err, deltalog.ErrNotExist) {
			h.stale = false
			return nil
		}
	} else {
		snap, err = h.table.Update(ctx, h.snap)
	}
	if err != nil {
		h.stale = true
		return fmt.Errorf("reloading history table %s: %w", h.opts.TableName, err)
	}
	h.snap, h.stale = snap, false
	h.latest.Store(h.snap)
	return nil
}

// unapplied returns the batch's records above the table's txns and the
// last offset per partition to record.
func (h *History) unapplied(b Batch, res *Result) ([]Record, map[cdctable.TopicPartition]int64) {
	applied := map[cdctable.TopicPartition]int64{}
	if h.snap != nil {
		applied = cdctable.Offsets(h.snap)
	}
	last := map[cdctable.TopicPartition]int64{}
	for tp, off := range b.LastOffsets {
		if v, ok := applied[tp]; !ok || off > v {
			last[tp] = off
		}
	}
	// Usually every record is new and none a tombstone: the batch's
	// records are the ones to apply, without a copy.
	all := true
	for i := range b.Records {
		r := &b.Records[i]
		if v, ok := applied[r.TopicPartition]; ok && r.Offset <= v || r.Change.Op == codecs.OpTombstone {
			all = false
			break
		}
	}
	if all {
		for i := range b.Records {
			r := &b.Records[i]
			if cur, ok := last[r.TopicPartition]; !ok || r.Offset > cur {
				last[r.TopicPartition] = r.Offset
			}
		}
		return b.Records, last
	}
	recs := make([]Record, 0, len(b.Records))
	for _, r := range b.Records {
		if v, ok := applied[r.TopicPartition]; ok && r.Offset <= v {
			res.SkippedReplayed++
			continue
		}
		if cur, ok := last[r.TopicPartition]; !ok || r.Offset > cur {
			last[r.TopicPartition] = r.Offset
		}
		if r.Change.Op != codecs.OpTombstone {
			recs = append(recs, r)
		}
	}
	return recs, last
}

func (h *History) apply(ctx context.Context, b Batch, res *Result) (int64, error) {
	if h.stale {
		if err := h.reload(ctx); err != nil {
			return -1, err
		}
	}
	recs, last := h.unapplied(b, res)
	if len(last) == 0 {
		return -1, nil
	}
	ts, pre, err := h.schemaFor(recs)
	if err != nil {
		return -1, err
	}
	if ts == nil {
		// No schema to create the table from yet: nothing is written, and
		// the offsets stay unapplied.
		return -1, nil
	}
	plan, err := h.plan(ctx, ts, recs)
	if err != nil {
		return -1, err
	}
	acts, written, dvs, err := h.write(ctx, ts, plan)
	if err != nil {
		return -1, err
	}
	txns := make([]deltalog.Action, 0, len(last))
	for tp, off := range last {
		txns = append(txns, deltalog.Action{Txn: &deltalog.Txn{AppID: tp.AppID(), Version: off}})
	}
	slices.SortFunc(txns, func(a, b deltalog.Action) int { return strings.Compare(a.Txn.AppID, b.Txn.AppID) })
	op := deltalog.Operation{Name: deltalog.OpMerge, Parameters: map[string]string{"predicate": "history (SCD type 2)"},
		Metrics: map[string]string{"numTargetRowsInserted": strconv.Itoa(plan.added), "numTargetRowsDeleted": strconv.Itoa(plan.removed),
			"numSourceRows": strconv.Itoa(len(recs))}}
	// The progress the control table reads (ADR 0029), as a table's
	// commit records it: a history table that is its table's only one
	// (history: only) is the table the controller follows.
	if prog := progressOf(recs); !prog.Empty() {
		js, err := json.Marshal(prog)
		if err != nil {
			return -1, fmt.Errorf("recording progress: %w", err)
		}
		op.Extra = map[string]string{cdctable.ProgressField: string(js)}
	}
	opts := []deltalog.CommitOption{deltalog.ReadAppIDs(appIDs(last)...)}
	if h.snap != nil {
		opts = append(opts, deltalog.ReadFiles(plan.readPaths...))
	}
	cr, err := h.table.Commit(ctx, h.snap, slices.Concat(pre, acts, txns), op, opts...)
	if err != nil {
		return -1, fmt.Errorf("committing history table %s: %w", h.opts.TableName, err)
	}
	countHistory(recs, res)
	if h.snap != nil {
		// The index knows what was committed (a new table's is read at the
		// next batch).
		h.index.committed(plan, written, dvs)
	}
	if cr.Snapshot != nil {
		h.snap = cr.Snapshot
		h.latest.Store(h.snap)
		return cr.Version, nil
	}
	h.stale = true
	return cr.Version, h.reload(ctx)
}

// countHistory counts the applied events by kind, as a table's Result does.
func countHistory(recs []Record, res *Result) {
	for i := range recs {
		switch recs[i].Change.Op {
		case codecs.OpDelete:
			res.Deleted++
		case codecs.OpTruncate:
			res.Truncates++
		case codecs.OpUpdate:
			res.Updated++
		default:
			res.Inserted++
		}
	}
}
