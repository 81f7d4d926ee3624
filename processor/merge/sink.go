package merge

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// DeleteMode says what a source delete does to its row.
type DeleteMode string

// Delete modes (ADR 0022).
const (
	// DeleteHard removes the row and remembers the deleted key and its
	// position for TombstoneRetention so an older event cannot resurrect it.
	DeleteHard DeleteMode = "hard"
	// DeleteSoft keeps the row with _cdc_deleted = true and its position.
	DeleteSoft DeleteMode = "soft"
)

// Mode says how old row versions leave the table (ADR 0023).
type Mode string

// Merge modes.
const (
	// MergeAuto uses deletion vectors when the table's protocol has them,
	// copy-on-write otherwise.
	ModeAuto Mode = "auto"
	// MergeDV marks old rows in deletion vectors (merge-on-read).
	ModeDV Mode = "dv"
	// MergeCoW rewrites the touched files without the old rows.
	ModeCoW Mode = "cow"
)

// DefaultIndexMemoryKeys is the default Options.IndexMemoryKeys: about 14 MB.
// An open after a kill reads the files of up to as many changed keys again
// (about 1 s at 100M rows; 3.3 s at 1<<20, ADR 0034).
const DefaultIndexMemoryKeys = 1 << 18

// DefaultTombstoneRetention is how long hard-delete mode remembers a deleted key.
const DefaultTombstoneRetention = 7 * 24 * time.Hour

// Options configure a Sink.
type Options struct {
	// Store is the table root. Required.
	Store deltalog.Store
	// TableName is the Delta table name recorded in metaData.name and in errors.
	TableName string
	// DeleteMode defaults to DeleteHard.
	DeleteMode DeleteMode
	// TombstoneRetention defaults to DefaultTombstoneRetention.
	TombstoneRetention time.Duration
	// Mode defaults to ModeAuto.
	Mode Mode
	// DeletionVectors says whether a new table gets deletion vectors
	// (delta.enableDeletionVectors and the deletionVectors feature, protocol
	// 3/7), which Mode auto then merges on read. nil means true, the default
	// (ADR 0027); false creates a table that needs no reader feature for it
	// (the legacy protocol when nothing else needs features) and is merged
	// copy-on-write. With Mode cow a new table never gets them. An existing
	// table keeps its own protocol, whatever this says.
	DeletionVectors *bool
	// ColumnNames says how a new table names the source columns Delta refuses
	// without column mapping (default ColumnNamesMapped). An existing table
	// follows its own choice (cdctable.PropColumnNames).
	ColumnNames ColumnNames
	// EnableChangeDataFeed sets delta.enableChangeDataFeed on new tables
	// (ADR 0024). The table property decides whether commits carry change
	// data, so an existing table follows its own setting.
	EnableChangeDataFeed bool
	// PartitionBy are the source columns a new table is partitioned by
	// (metaData.partitionColumns). An existing table keeps its own
	// partitioning, whatever this says.
	PartitionBy []string
	// TargetFileSize bounds new data files (default datafile.DefaultTargetFileSize).
	TargetFileSize int64
	// TailFileSize is the size below which the table's smallest data file
	// takes a small batch's new rows, rewritten with them into one file,
	// instead of the batch adding a file (absorb.go, ADR 0032). Default
	// DefaultTailFileSize; negative: every batch writes its own files.
	TailFileSize int64
	// Properties are extra table properties set when the table is created.
	Properties map[string]string
	// CommitRetries bounds how often a batch is re-applied after losing to a
	// conflicting concurrent writer (default 5).
	CommitRetries int
	// TableOptions are passed to deltalog.Open (checkpoint cadence, clock, ...).
	TableOptions []deltalog.Option
	// IndexDir, when set, keeps the key index in this local directory
	// (ADR 0034): sorted runs of the keys, with only the changes since the
	// last flush and about 1.5 bytes a key of summaries in memory, and a
	// manifest per flush that the next Open starts from instead of reading
	// every data file. "" keeps every key in memory (56 bytes a key) and
	// rebuilds the index at each Open.
	IndexDir string
	// IndexMemoryKeys is how many changed keys the in-memory part of an
	// IndexDir index holds before they are flushed to a run (default
	// DefaultIndexMemoryKeys).
	IndexMemoryKeys int
	// Logger defaults to discarding.
	Logger *slog.Logger
	// Now is the clock for commit times and tombstone expiry (default time.Now).
	Now func() time.Time
}

// Record is one decoded Kafka record. Tombstones (null values) are counted by
// the consumer and not passed.
type Record struct {
	cdctable.TopicPartition
	Offset int64
	Change codecs.Change
}

// partitionsOf yields the partitions of the records: each record's, but
// not again for a run of records of one partition (a batch's records come
// in runs), so the consumer pays per run rather than per record.
func partitionsOf(recs []Record) iter.Seq[cdctable.TopicPartition] {
	return func(yield func(cdctable.TopicPartition) bool) {
		for i := range recs {
			if i > 0 && recs[i].TopicPartition == recs[i-1].TopicPartition {
				continue
			}
			if !yield(recs[i].TopicPartition) {
				return
			}
		}
	}
}

// Batch is one micro-batch for one table.
type Batch struct {
	Records []Record
	// LastOffsets is the last offset consumed per partition; it is recorded
	// as the partition's txn version even when those records were skipped.
	LastOffsets map[cdctable.TopicPartition]int64
	// Owned are the table's partitions this writer is assigned (nil: the
	// batch's). Of a table other writers share, a batch folds only files
	// holding rows of these into its tail (ADR 0036).
	Owned []cdctable.TopicPartition
}

// Result describes one applied batch.
type Result struct {
	// Version is the table version committed, or the current version when
	// the batch had nothing new (Committed false).
	Version   int64
	Committed bool
	Inserted  int64
	Updated   int64
	Deleted   int64
	// SkippedStale counts events at or below the position already stored
	// for their key (or its tombstone).
	SkippedStale int64
	// SkippedReplayed counts records at or below their partition's txn version.
	SkippedReplayed int64
	// Duplicates counts in-batch events with the same key and position as
	// the event applied; Superseded counts older in-batch events of a key.
	Duplicates int64
	Superseded int64
	// Truncates counts applied truncate events.
	Truncates int64
	// UnavailableUnresolved counts columns that applied events did not
	// carry (Debezium's unavailable-value placeholder) while no earlier
	// image of their key existed, in the batch or in the table: they are
	// stored as NULL, and each is logged (ADR 0025).
	UnavailableUnresolved int64
	FilesAdded            int
	FilesRemoved          int
	// DeletionVectors counts deletion vectors written.
	DeletionVectors int
	// FilesWritten and BytesWritten count the objects the commit wrote
	// besides its log entry and checkpoint: data files, the deletion vector
	// file, change data files and the tombstone file (whose bytes are not
	// counted).
	FilesWritten int
	BytesWritten int64
	// Retries counts re-applications (a new plan) after concurrent commits
	// that touched the batch's keys or files.
	Retries int
	// Rebases counts the versions lost to concurrent commits that touched
	// nothing the batch read, so that its plan was committed again as it
	// was, at a later version.
	Rebases  int
	Duration time.Duration
}

// Sink applies micro-batches to one Delta table, exactly once. It is safe
// for concurrent use; batches are applied one at a time.
type Sink struct {
	opts  Options
	table *deltalog.Table
	log   *slog.Logger

	// indexDir is where the key index lives on disk; nil: in memory.
	indexDir *indexDir
	// readAhead is the catch-up's readAheadRows (tests set less).
	readAhead int64

	mu    sync.Mutex
	state *tableState // nil until the table exists and is loaded
	stale bool        // state may not match the log: reload before the next batch
	// behind is set when another writer of this process committed (Behind).
	behind atomic.Bool
}

// ErrNoStore reports Options without a Store.
var ErrNoStore = errors.New("merge: sink needs a store")

// Open opens the table in opts.Store, or prepares to create it from the
// first batch's schema.
func Open(ctx context.Context, opts Options) (*Sink, error) {
	if opts.Store == nil {
		return nil, ErrNoStore
	}
	if opts.DeleteMode == "" {
		opts.DeleteMode = DeleteHard
	}
	if opts.DeleteMode != DeleteHard && opts.DeleteMode != DeleteSoft {
		return nil, fmt.Errorf("merge: unknown delete mode %q", opts.DeleteMode)
	}
	if opts.Mode == "" {
		opts.Mode = ModeAuto
	}
	if opts.Mode != ModeAuto && opts.Mode != ModeDV && opts.Mode != ModeCoW {
		return nil, fmt.Errorf("merge: unknown merge mode %q", opts.Mode)
	}
	if opts.ColumnNames == "" {
		opts.ColumnNames = ColumnNamesMapped
	}
	if err := checkColumnNames(opts.ColumnNames); err != nil {
		return nil, err
	}
	if opts.TombstoneRetention <= 0 {
		opts.TombstoneRetention = DefaultTombstoneRetention
	}
	if opts.CommitRetries <= 0 {
		opts.CommitRetries = 5
	}
	if opts.TailFileSize == 0 {
		opts.TailFileSize = DefaultTailFileSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	t, err := deltalog.Open(ctx, opts.Store, opts.TableOptions...)
	if err != nil {
		return nil, fmt.Errorf("opening table %s: %w", opts.TableName, err)
	}
	s := &Sink{opts: opts, table: t, log: lg.With("table", opts.TableName), readAhead: readAheadRows}
	if opts.IndexDir != "" {
		if opts.IndexMemoryKeys <= 0 {
			opts.IndexMemoryKeys = DefaultIndexMemoryKeys
		}
		if s.indexDir, err = newIndexDir(opts.IndexDir, opts.IndexMemoryKeys); err != nil {
			return nil, fmt.Errorf("opening table %s: %w", opts.TableName, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.reload(ctx); err != nil {
		return nil, err
	}
	if st := s.state; st != nil && opts.EnableChangeDataFeed && !cdfEnabled(st.meta.Configuration) {
		s.log.Warn("the table exists without " + deltalog.PropEnableChangeDataFeed + "; set the property (ALTER TABLE ... SET TBLPROPERTIES) to get a change data feed")
	}
	if st := s.state; st != nil && len(opts.PartitionBy) > 0 && !samePartitioning(st.meta.PartitionColumns, opts.PartitionBy) {
		s.log.Warn("the table exists with other partition columns than partition_by; it keeps its own", "partitionColumns", st.meta.PartitionColumns, "partitionBy", opts.PartitionBy)
	}
	if st := s.state; st != nil {
		s.warnFeatures(st)
	}
	return s, nil
}

// newTableDeletionVectors reports whether a new table gets deletion vectors.
func (o Options) newTableDeletionVectors() bool {
	return o.Mode != ModeCoW && (o.DeletionVectors == nil || *o.DeletionVectors)
}

func protocolString(p deltalog.Protocol) string {
	return fmt.Sprintf("reader %d %v, writer %d %v", p.MinReaderVersion, p.ReaderFeatureSet(), p.MinWriterVersion, p.WriterFeatureSet())
}

// warnFeatures says when an existing table has other features than the
// options would give a new one: the table keeps its own.
func (s *Sink) warnFeatures(st *tableState) {
	has := st.proto.HasReaderFeature(deltalog.FeatureDeletionVectors)
	switch want := s.opts.newTableDeletionVectors(); {
	case has && !want && s.opts.Mode != ModeCoW:
		s.log.Warn("the table has deletion vectors, which deletion_vectors: false gives new tables only; it keeps them, and readers without deletion vector support (delta-rs to_pandas) still refuse it. "+
			"merge_mode: cow stops writing new vectors; Spark's ALTER TABLE ... DROP FEATURE deletionVectors removes the feature", "protocol", protocolString(st.proto))
	case !has && want && s.opts.DeletionVectors != nil:
		s.log.Warn("the table has no deletion vectors; deletion_vectors: true gives new tables only, this one is merged copy-on-write", "protocol", protocolString(st.proto))
	}
	if s.opts.ColumnNames == ColumnNamesPortable && deltalog.ColumnMappingMode(&st.meta) != "none" {
		s.log.Warn("the table has column mapping; column_names: portable applies to new tables only, this one keeps its source names")
	}
}

// Positions returns the last applied offset per partition, from the txn
// actions of the latest snapshot. A missing table has none.
func (s *Sink) Positions(ctx context.Context) (map[cdctable.TopicPartition]int64, error) {
	return positions(ctx, s.table, s.Snapshot(), s.opts.TableName)
}

// Apply dedups the batch, merges it into the table and commits it together
// with one txn per partition. Records at or below their partition's txn
// version are ignored, so re-applying a batch is a no-op.
func (s *Sink) Apply(ctx context.Context, b Batch) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := s.opts.Now()
	res, err := s.apply(ctx, b)
	res.Duration = s.opts.Now().Sub(start)
	return res, err
}

// TableStats describe a table's live files, what its upkeep costs readers:
// each file is a request, and each deletion vector another.
type TableStats struct {
	// Files and Bytes are the live data files and their size.
	Files int
	Bytes int64
	// DeletionVectors counts the live files with a deletion vector, and
	// DeletedRows the rows those vectors hide (read and dropped by every
	// full scan).
	DeletionVectors int
	DeletedRows     int64
	// SmallFiles counts the live files below half the target file size;
	// SmallFileDebt is how many more of them there are than OPTIMIZE
	// would leave (their bytes over the target size, per partition,
	// rounded up).
	SmallFiles    int
	SmallFileDebt int
}

// Stats returns the live-file statistics of the table the sink last saw
// (zero before creation). It walks the live files: O(files).
func (s *Sink) Stats() TableStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == nil {
		return TableStats{}
	}
	return statsOf(s.state.snap, s.opts.TargetFileSize)
}

// statsOf returns the live-file statistics of snap (zero for nil) against
// the target file size (0: the default).
func statsOf(snap *deltalog.Snapshot, target int64) TableStats {
	var ts TableStats
	if snap == nil {
		return ts
	}
	if target <= 0 {
		target = datafile.DefaultTargetFileSize
	}
	small := map[string]int64{} // partition key: bytes of its small files
	for _, a := range snap.Files() {
		ts.Files++
		ts.Bytes += a.Size
		if a.DeletionVector != nil {
			ts.DeletionVectors++
			ts.DeletedRows += a.DeletionVector.Cardinality
		}
		if a.Size < target/2 {
			ts.SmallFiles++
			small[partitionOf(a.PartitionValues)] += a.Size
		}
	}
	optimal := 0
	for _, b := range small {
		optimal += int((b + target - 1) / target)
	}
	ts.SmallFileDebt = max(ts.SmallFiles-optimal, 0)
	return ts
}

// partitionOf is a map key naming a file's partition.
func partitionOf(pv map[string]*string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(pv)) {
		b.WriteString(k)
		if v := pv[k]; v != nil {
			b.WriteString("=" + *v)
		}
		b.WriteByte(0)
	}
	return b.String()
}

// Snapshot returns the snapshot of the table the sink last saw, nil before
// creation.
func (s *Sink) Snapshot() *deltalog.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == nil {
		return nil
	}
	return s.state.snap
}

// Behind tells the sink that another writer committed to the table, as
// automatic maintenance does, so that its next Apply catches up before it
// plans instead of losing the commit race. It never blocks.
func (s *Sink) Behind() { s.behind.Store(true) }

// Version returns the table version the sink last saw, -1 before creation.
func (s *Sink) Version() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == nil {
		return -1
	}
	return s.state.snap.Version()
}

// Close saves an on-disk key index at the version the sink last saw, so
// that the next Open has nothing to catch up, and closes its files.
// Without it the next Open catches up from the last flush, which is as
// correct. A batch applied after Close loads the table again.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state
	if st == nil || st.index.runs == nil {
		return nil
	}
	defer s.setState(nil)
	if s.stale || st.snap == nil {
		return nil // the state may be off the log: nothing to save
	}
	if err := st.index.saveManifest(st.snap); err != nil {
		return fmt.Errorf("closing table %s: %w", s.opts.TableName, err)
	}
	return nil
}
