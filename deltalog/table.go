package deltalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/buildinfo"
)

// Table is a handle on one Delta table in a Store. It holds no table state: every
// Snapshot call reads the log. It is safe for concurrent use.
type Table struct {
	store Store
	opts  tableOptions
	// cleanedTo is the cutoff (unix ms) of the last log cleanup that finished. The
	// cutoff moves once a day, and a cleanup at the same one finds what the last found.
	cleanedTo atomic.Int64
}

type tableOptions struct {
	logger             *slog.Logger
	now                func() time.Time
	commitRetries      int
	backoffBase        time.Duration
	backoffMax         time.Duration
	engineInfo         string
	checkpointInterval int
	disableCheckpoints bool
	disableLogCleanup  bool
	readConcurrency    int
	keepAbsolutePaths  bool
	resolve            Opener
}

// Option configures a Table.
type Option func(*tableOptions)

// WithLogger sets the logger for warnings (failed checkpoints, commit retries). Default: discard.
func WithLogger(l *slog.Logger) Option { return func(o *tableOptions) { o.logger = l } }

// WithClock injects the wall clock used for commit timestamps, tombstone expiry and log
// retention. Default: time.Now.
func WithClock(now func() time.Time) Option { return func(o *tableOptions) { o.now = now } }

// CommitRetries sets how many times a commit that lost a race without a logical conflict
// is retried at the next version. Default 10; 0 disables retries.
func CommitRetries(n int) Option { return func(o *tableOptions) { o.commitRetries = n } }

// RetryBackoff sets the first and the largest wait between commit retries; the wait
// doubles per retry with jitter. Default 5ms and 1s.
func RetryBackoff(first, maxWait time.Duration) Option {
	return func(o *tableOptions) { o.backoffBase, o.backoffMax = first, maxWait }
}

// EngineInfo overrides commitInfo.engineInfo. Default "cdc2delta/" and the binary's release (buildinfo.Version).
func EngineInfo(s string) Option { return func(o *tableOptions) { o.engineInfo = s } }

// CheckpointInterval sets the checkpoint cadence used when the table has no
// delta.checkpointInterval property. Default 10 (Spark's).
func CheckpointInterval(n int) Option { return func(o *tableOptions) { o.checkpointInterval = n } }

// DisableCheckpoints stops Commit from writing checkpoints (and hence from cleaning up
// expired logs, which only happens after a checkpoint).
func DisableCheckpoints() Option { return func(o *tableOptions) { o.disableCheckpoints = true } }

// DisableLogCleanup stops Commit from deleting expired log files even when the table's
// delta.enableExpiredLogCleanup allows it.
func DisableLogCleanup() Option { return func(o *tableOptions) { o.disableLogCleanup = true } }

// ReadConcurrency sets how many commit files a snapshot load fetches in parallel. Default 16.
func ReadConcurrency(n int) Option { return func(o *tableOptions) { o.readConcurrency = n } }

// KeepAbsolutePaths loads snapshots whose live data files have absolute paths instead
// of refusing them with an *AbsolutePathError, and lists those files in
// Snapshot.AbsolutePaths. It is for showing such a table and why it is refused
// (cdc2delta describe): Commit refuses a snapshot that has them.
func KeepAbsolutePaths() Option { return func(o *tableOptions) { o.keepAbsolutePaths = true } }

// Open returns a handle on the table rooted at store. The table need not exist yet:
// Commit with a nil snapshot creates it, and Snapshot on a missing table returns an
// error matching ErrNotExist.
func Open(ctx context.Context, store Store, opts ...Option) (*Table, error) {
	if store == nil {
		return nil, errors.New("deltalog: nil store")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := tableOptions{
		now:             time.Now,
		commitRetries:   10,
		backoffBase:     5 * time.Millisecond,
		backoffMax:      time.Second,
		engineInfo:      "cdc2delta/" + buildinfo.Version(),
		readConcurrency: 16,
	}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.commitRetries < 0:
		return nil, fmt.Errorf("deltalog: CommitRetries(%d) must not be negative", o.commitRetries)
	case o.checkpointInterval < 0:
		return nil, fmt.Errorf("deltalog: CheckpointInterval(%d) must not be negative", o.checkpointInterval)
	case o.readConcurrency < 1:
		return nil, fmt.Errorf("deltalog: ReadConcurrency(%d) must be positive", o.readConcurrency)
	case o.backoffBase < 0 || o.backoffMax < o.backoffBase:
		return nil, errors.New("deltalog: RetryBackoff needs 0 ≤ first ≤ max")
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.resolve != nil {
		store = &resolvingStore{Store: store, open: o.resolve, stores: map[string]Store{}}
	}
	if ResolvesAbsolutePaths(store) {
		// Opened on another table's Store(): it reads what that table reads.
		o.keepAbsolutePaths = true
	}
	return &Table{store: store, opts: o}, nil
}

// Store returns the store the table lives in (with [ResolveAbsolutePaths], one that
// also reads files named by absolute URI).
func (t *Table) Store() Store { return t.store }
