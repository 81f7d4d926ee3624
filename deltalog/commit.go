package deltalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/backoff"
	"github.com/google/uuid"
)

// ErrInvalidCommit reports actions that do not form a valid commit.
var ErrInvalidCommit = errors.New("deltalog: invalid commit")

// ErrAppendOnly reports a commit that would remove data from a delta.appendOnly table.
var ErrAppendOnly = errors.New("deltalog: table is append-only")

// CommitResult describes a successful commit.
type CommitResult struct {
	// Version is the table version the commit created.
	Version int64
	// Retries counts the attempts lost to concurrent writers before this one won.
	Retries      int
	FilesAdded   int
	FilesRemoved int
	// Checkpointed is true when a checkpoint was written at Version.
	Checkpointed bool
	// CheckpointErr is a failed checkpoint; the commit itself succeeded.
	CheckpointErr error
	// LogFilesDeleted counts expired log files removed after the checkpoint.
	LogFilesDeleted int
	// CleanupErr is a failed log cleanup; the commit itself succeeded.
	CleanupErr error
	// Snapshot is the table at Version, built from the read snapshot and the committed
	// actions without reading the log back, when no other writer committed between
	// them (Retries is 0); else nil. Its CommitTimestamp is the commitInfo's timestamp
	// unless in-commit timestamps give one: the commit file's modification time would
	// take another request. It shares the maps of the actions passed to Commit.
	Snapshot *Snapshot
}

// CommitOption describes what a transaction read, for conflict detection.
type CommitOption func(*commitConfig)

type commitConfig struct {
	read      readSet
	readGiven bool
	isolation string
	exact     bool
}

// ReadWholeTable declares that the transaction's result depends on every file (the
// default for any commit that is not a pure append): any concurrent data-changing add or
// any concurrent remove then conflicts.
func ReadWholeTable() CommitOption {
	return func(c *commitConfig) { c.read.wholeTable, c.readGiven = true, true }
}

// ReadFiles declares data files the transaction read (paths as in the add actions). A
// concurrent remove of one of them conflicts.
func ReadFiles(paths ...string) CommitOption {
	return func(c *commitConfig) {
		c.readGiven = true
		if c.read.files == nil {
			c.read.files = map[string]bool{}
		}
		for _, p := range paths {
			c.read.files[keyOf(p, nil).path] = true
		}
	}
}

// ReadPredicate declares the transaction's read predicate over files (typically by
// partition values): a concurrent data-changing add matching it conflicts.
func ReadPredicate(match func(*Add) bool) CommitOption {
	return func(c *commitConfig) { c.read.predicate, c.readGiven = match, true }
}

// ReadAppIDs declares txn application ids whose versions the transaction read; a
// concurrent txn for one of them conflicts. The appIds the commit writes always count.
func ReadAppIDs(ids ...string) CommitOption {
	return func(c *commitConfig) {
		if c.read.appIDs == nil {
			c.read.appIDs = map[string]bool{}
		}
		for _, id := range ids {
			c.read.appIDs[id] = true
		}
	}
}

// ExactVersion makes the commit land at readSnapshot.Version()+1 or not at all: when
// another writer took that version, Commit fails with an error matching ErrExist instead of
// checking the winners and retrying at the next free version. A caller that names the
// version in files written before the commit (ADR 0022) needs it, so that the commit of a
// version is the only one that can claim them.
func ExactVersion() CommitOption { return func(c *commitConfig) { c.exact = true } }

// Isolation sets the isolation level: IsolationSerializable (default) or
// IsolationWriteSerializable, which lets concurrent blind appends through.
func Isolation(level string) CommitOption { return func(c *commitConfig) { c.isolation = level } }

// Commit writes actions as the next version after readSnapshot (nil creates the table at
// version 0). It prepends a Spark-style commitInfo, fills txn.lastUpdated and
// remove.deletionTimestamp when unset, checks the protocol and the actions, and writes the
// commit with PutIfAbsent. When another writer took the version, it checks each winning
// commit against the conflict rules and retries at the next free version, or fails with a
// *ConflictError. After success it may write a checkpoint and clean up expired logs;
// failures there are reported in CommitResult, never as the error.
func (t *Table) Commit(ctx context.Context, readSnapshot *Snapshot, actions []Action, op Operation, opts ...CommitOption) (CommitResult, error) {
	cfg := commitConfig{isolation: IsolationSerializable}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.isolation != IsolationSerializable && cfg.isolation != IsolationWriteSerializable {
		return CommitResult{}, fmt.Errorf("%w: isolation level %q", ErrInvalidCommit, cfg.isolation)
	}
	for k := range op.Extra {
		if isKnownCommitInfoKey(k) {
			return CommitResult{}, fmt.Errorf("%w: Operation.Extra names commitInfo.%s, which Commit writes", ErrInvalidCommit, k)
		}
	}
	if readSnapshot != nil && len(readSnapshot.absolute) > 0 {
		return CommitResult{}, readSnapshot.absolute[0]
	}
	now := t.opts.now()
	prepared, sum, err := t.prepareCommit(readSnapshot, actions, now)
	if err != nil {
		return CommitResult{}, err
	}
	switch {
	case cfg.readGiven:
		// A transaction that declares reads is not a blind append, whatever it writes.
		sum.blindAppend = false
	case !sum.blindAppend:
		cfg.read.wholeTable = true
	}
	sum.isolation = cfg.isolation
	if sum.snapshotIsol {
		sum.isolation = IsolationSnapshot
	}

	version := int64(0)
	var readVersion *int64
	var prevICT *int64
	meta := sum.meta
	if readSnapshot != nil {
		version = readSnapshot.Version() + 1
		rv := readSnapshot.Version()
		readVersion = &rv
		if ictEnabledAt(readSnapshot.metadata.Configuration, rv) {
			ms := readSnapshot.CommitTimestamp().UnixMilli()
			prevICT = &ms
		}
	}
	ci := CommitInfo{
		Operation:           op.Name,
		OperationParameters: stringValues(op.Parameters),
		OperationMetrics:    stringValues(op.Metrics),
		ReadVersion:         readVersion,
		IsolationLevel:      sum.isolation,
		IsBlindAppend:       new(sum.blindAppend),
		EngineInfo:          t.opts.engineInfo,
		TxnID:               uuid.NewString(),
		Extra:               stringValues(op.Extra),
	}
	res := CommitResult{FilesAdded: sum.added, FilesRemoved: sum.removedN}
	for attempt := 0; ; attempt++ {
		ts := t.opts.now().UnixMilli()
		ci.Timestamp = &ts
		ci.InCommitTimestamp = nil
		if ictEnabledAt(meta.Configuration, version) && sum.protocol.HasWriterFeature(FeatureInCommitTimestamp) {
			ict := ts
			if prevICT != nil {
				ict = max(ict, *prevICT+1)
			}
			ci.InCommitTimestamp = &ict
		}
		data, err := encodeCommit(append([]Action{{CommitInfo: &ci}}, prepared...))
		if err != nil {
			return CommitResult{}, fmt.Errorf("committing version %d: %w", version, err)
		}
		err = t.store.PutIfAbsent(ctx, commitPath(version), data)
		if err == nil {
			break
		}
		// A failed or "already exists" put may still be ours: the store can apply a write
		// and lose the response (then a retried put finds our own object). The txnId in
		// the commitInfo tells.
		if t.isOurCommit(ctx, version, ci.TxnID) {
			t.opts.logger.DebugContext(ctx, "commit found durable after a failed put", "version", version, "err", err)
			break
		}
		if !errors.Is(err, ErrExist) || cfg.exact {
			return CommitResult{}, fmt.Errorf("committing version %d: %w", version, err)
		}
		if attempt >= t.opts.commitRetries {
			return CommitResult{}, &ConflictError{Version: version, Kind: ErrRetriesExhausted,
				Detail: strconv.Itoa(attempt+1) + " attempts"}
		}
		next, ict, err := t.checkWinners(ctx, version, sum, &cfg.read)
		if err != nil {
			return CommitResult{}, fmt.Errorf("committing after version %d: %w", readVersionOr(readVersion), err)
		}
		if ict != nil {
			prevICT = ict
		}
		// Routine under optimistic concurrency (maintenance compacting a
		// change log between two appends): the retry is the answer, and a
		// failure past the retries is the caller's error to report.
		t.opts.logger.DebugContext(ctx, "commit lost race, retrying", "version", version, "next", next, "attempt", attempt+1)
		version = next
		res.Retries++
		if err := t.backoff(ctx, attempt); err != nil {
			return CommitResult{}, err
		}
	}
	res.Version = version
	if res.Retries == 0 {
		res.Snapshot = t.committedSnapshot(ctx, readSnapshot, version, &ci, prepared)
	}
	t.afterCommit(ctx, &res, readSnapshot, meta)
	return res, nil
}

// committedSnapshot is the state after our commit at version, which directly follows
// read (nil: it created the table); nil when it cannot be built, as a reload would fail.
func (t *Table) committedSnapshot(ctx context.Context, read *Snapshot, version int64, ci *CommitInfo, actions []Action) *Snapshot {
	st := newTableState()
	if read != nil {
		st = stateAfter(read)
	}
	st.apply(actions, commitPath(version))
	snap, err := t.buildSnapshot(replayPlan{version: version}, st, read)
	if err != nil {
		t.opts.logger.DebugContext(ctx, "no snapshot of our own commit", "version", version, "err", err)
		return nil
	}
	snap.commitTime = time.UnixMilli(*ci.Timestamp)
	if ci.InCommitTimestamp != nil {
		snap.commitTime = time.UnixMilli(*ci.InCommitTimestamp)
	}
	return snap
}

// CommitInfo returns the commitInfo of version's commit file, nil when it has none. A
// version whose commit file does not exist (not written yet, never, or removed by log
// cleanup after delta.logRetentionDuration) gives an error matching ErrNotExist. It parses
// the file only up to the commitInfo, which writers put first (and the protocol requires
// first with in-commit timestamps), so the actions after it are neither parsed nor checked.
func (t *Table) CommitInfo(ctx context.Context, version int64) (*CommitInfo, error) {
	path := commitPath(version)
	data, err := readObject(ctx, t.store, path)
	if err != nil {
		return nil, fmt.Errorf("reading commitInfo of version %d: %w", version, &CorruptFileError{Path: path, Err: err})
	}
	for lineNo := 1; len(data) > 0; lineNo++ {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		a, _, err := ParseLogLine(line)
		if err != nil {
			return nil, fmt.Errorf("reading commitInfo of version %d: %w", version, &CorruptFileError{Path: path, Err: fmt.Errorf("line %d: %w", lineNo, err)})
		}
		if a.CommitInfo != nil {
			return a.CommitInfo, nil
		}
	}
	return nil, nil
}

// isOurCommit reports whether version exists and carries our txnId. Errors count as
// "no": the caller then reports its original error.
func (t *Table) isOurCommit(ctx context.Context, version int64, txnID string) bool {
	ci, err := readCommitInfo(ctx, t.store, commitPath(version))
	return err == nil && ci != nil && ci.TxnID == txnID
}

func readVersionOr(v *int64) int64 {
	if v == nil {
		return -1
	}
	return *v
}

// checkWinners reads the commits from version on (those that beat us) and checks each
// for conflicts. It returns the next free version and the last winner's ICT.
func (t *Table) checkWinners(ctx context.Context, version int64, sum *txnSummary, read *readSet) (int64, *int64, error) {
	var ict *int64
	for w := version; ; w++ {
		actions, err := readCommitFile(ctx, t.store, commitPath(w))
		if errors.Is(err, ErrNotExist) {
			if w == version {
				// PutIfAbsent said the version exists but it cannot be read: a store
				// inconsistency we must not paper over.
				return 0, nil, fmt.Errorf("version %d reported existing but is missing: %w", w, err)
			}
			return w, ict, nil
		}
		if err != nil {
			return 0, nil, err
		}
		if err := checkWinner(w, actions, sum, read); err != nil {
			return 0, nil, err
		}
		for _, a := range actions {
			if a.CommitInfo != nil && a.CommitInfo.InCommitTimestamp != nil {
				ict = a.CommitInfo.InCommitTimestamp
			}
		}
	}
}

// backoff waits before retry attempt+1.
func (t *Table) backoff(ctx context.Context, attempt int) error {
	return backoff.Policy{Min: t.opts.backoffBase, Max: t.opts.backoffMax}.Wait(ctx, attempt)
}

// afterCommit writes a checkpoint when the version is a multiple of the checkpoint
// interval, then cleans up expired logs. Neither may fail the commit that already
// happened: failures are logged and returned in res.
func (t *Table) afterCommit(ctx context.Context, res *CommitResult, read *Snapshot, meta Metadata) {
	if t.opts.disableCheckpoints || res.Version == 0 {
		return
	}
	interval := int64(t.opts.checkpointInterval)
	if interval == 0 {
		interval = defaultCheckpointInterval
	}
	if s, ok := meta.Configuration[PropCheckpointInterval]; ok {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			interval = n
		}
	}
	if res.Version%interval != 0 {
		return
	}
	// The state at our version is the read snapshot plus the winners and our commit:
	// cheaper than reloading from the previous checkpoint.
	snap := res.Snapshot
	var err error
	switch {
	case snap != nil:
	case read != nil:
		snap, err = t.updateTo(ctx, read, res.Version)
	default:
		snap, err = t.SnapshotAt(ctx, res.Version)
	}
	if err == nil {
		_, err = writeCheckpoint(ctx, t.store, res.Version, snap.stateActions())
	}
	if err != nil {
		res.CheckpointErr = fmt.Errorf("checkpointing version %d: %w", res.Version, err)
		t.opts.logger.WarnContext(ctx, "checkpoint failed; the commit stands", "version", res.Version, "err", err)
		return
	}
	res.Checkpointed = true
	if t.opts.disableLogCleanup {
		return
	}
	n, err := t.cleanupExpiredLogs(ctx, snap.metadata.Configuration, snap.protocol)
	res.LogFilesDeleted = n
	if err != nil {
		res.CleanupErr = err
		t.opts.logger.WarnContext(ctx, "log cleanup failed; the commit stands", "version", res.Version, "err", err)
	}
}
