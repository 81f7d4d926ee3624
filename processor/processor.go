// Package processor runs the pipeline: a Kafka consumer group over Debezium
// topics, per-table micro-batches, and exactly-once MERGE commits into Delta
// tables whose txn actions hold the Kafka offsets (ADR 0020).
//
// # Run loop
//
// One goroutine (the caller's, in Run) polls with franz-go's
// BlockRebalanceOnPoll, decodes the polled records (in parallel across
// partitions, in order within one) and routes each to its table's pending
// batch by topic name (Router). Batches that are due (records, bytes, age,
// or MaxBufferedBytes over all tables) are applied in the background, one
// Sink.Apply per table run concurrently, while the loop decodes the next
// poll: at most one such flush is in flight, so a table's batches apply in
// order. When the flush ends the loop commits the applied offsets to the
// group, and it allows a rebalance only while no flush is in flight (it
// stops starting flushes when franz-go reports a blocked rebalance). So
// revoke and lost callbacks never race an apply: they just drop pending
// records, which the new owner re-reads from the table's txn. Memory is
// bounded by MaxPollRecords, the batch limits and MaxBufferedBytes: the loop
// stops polling and waits for the flush once the next batch is due.
//
// On assignment (AdjustFetchOffsetsFn) each partition resumes from its
// table's txn + 1, an operator's group reset below it (a replay), the
// group's offset, or the reset policy; see startOffset.
//
// Each table has its own settings (Options.PerTable: delete and merge
// modes, bad-input policy), resolved when a topic is first routed to it.
// Bad input follows the table's Policy (deadletter.go); registry and storage
// outages are retried with backoff, never skipped. A registry outage does
// not hold a rebalance: when one waits, decoding gives way, the records not
// decoded yet are held (their partitions paused) and retried after it.
// Metrics are in metrics.go; /healthz, /readyz and /metrics in health.go.
//
// Locks: Processor.mu guards tables, partitions and pending batches and is
// never held across I/O; openMu serialises opening sinks and is taken before
// mu, never after.
//
// The package carries no API-stability promise.
package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// Errors returned by New and Run.
var (
	ErrOptions = errors.New("processor: invalid options")
	ErrRunning = errors.New("processor: already running")
	ErrClosed  = errors.New("processor: closed")
)

// Options configure a Processor. Brokers, Group, Topics, OpenStore and
// Decoder are required.
type Options struct {
	// Brokers are the Kafka bootstrap addresses.
	Brokers []string
	// Group is the consumer group id.
	Group string
	// Topics to consume; with TopicRegex they are regular expressions.
	Topics     []string
	TopicRegex bool
	// InstanceID enables static membership, so a rolling restart within the
	// session timeout does not rebalance.
	InstanceID string
	// ClientOptions are extra franz-go options (TLS, SASL, timeouts).
	ClientOptions []kgo.Opt
	// ResetOffset is where a partition with neither a Delta txn nor a group
	// offset starts: "earliest" (default, captures the snapshot) or "latest".
	ResetOffset string

	// TablePath is the table path template (default DefaultTablePath).
	TablePath string
	// OpenStore returns the store rooted at a table path.
	OpenStore func(ctx context.Context, tablePath string) (deltalog.Store, error)
	// Sink is the template of every table's SinkOptions; Store and TableName
	// are set per table.
	Sink merge.Options
	// PerTable, when set, gives each table its own settings in place of Sink
	// and BadInput. It is called once per table, when a topic is first
	// routed to it (on assignment, before its sink opens); when several
	// topics route to one table path, the first one routed names it. Store
	// and TableName of the returned SinkOptions are set by the processor and
	// a nil Logger is the processor's.
	PerTable func(TableSource) TableSettings
	// Decoder decodes record keys and values.
	Decoder *codecs.Decoder

	// Batch bounds each table's micro-batches.
	Batch BatchLimits
	// MaxBufferedBytes bounds the record bytes pending over all tables
	// (default 256 MiB); above it every pending batch is flushed.
	MaxBufferedBytes int64
	// MaxPollRecords bounds the records taken from the client per poll
	// (default 10,000).
	MaxPollRecords int
	// FetchMaxBytes bounds one fetch response (default 32 MiB); with
	// MaxPollRecords and the batch limits it bounds memory.
	FetchMaxBytes int32
	// RecommitInterval is how often group offsets are re-committed while
	// idle, so the group's offsets do not expire (default 30s).
	RecommitInterval time.Duration

	// BadInput is the default bad-input policy (default PolicyFail).
	BadInput Policy
	// TablePolicies override BadInput per table path; a policy returned by
	// PerTable overrides both.
	TablePolicies map[string]Policy
	// DeadLetterTopic receives dead-lettered records; "{topic}" is replaced
	// by the source topic. Required when any policy is PolicyDeadLetter.
	DeadLetterTopic string
	// UnknownSchemaRetries is how often a record whose schema id the
	// registry does not know is retried before it counts as bad input
	// (default 3): a schema may be registered moments after its record.
	UnknownSchemaRetries int
	// ShutdownTimeout bounds the final flush when Run's context ends
	// (default 10s).
	ShutdownTimeout time.Duration
}

// TableSettings are one table's own settings, returned by Options.PerTable.
type TableSettings struct {
	// Sink configures the table's sink (delete and merge modes, tombstone
	// retention, change data feed).
	Sink merge.Options
	// BadInput is the table's bad-input policy; empty means
	// Options.TablePolicies or Options.BadInput.
	BadInput Policy
}

// Option sets an injected collaborator.
type Option func(*Processor)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(p *Processor) { p.log = l } }

// WithRegisterer registers the processor's metrics (default: none).
func WithRegisterer(r prometheus.Registerer) Option { return func(p *Processor) { p.reg = r } }

// WithClock sets the clock used for batch ages (tests).
func WithClock(now func() time.Time) Option { return func(p *Processor) { p.now = now } }

// Processor consumes Debezium topics and keeps their Delta tables current.
type Processor struct {
	opts   Options
	log    *slog.Logger
	reg    prometheus.Registerer
	now    func() time.Time
	m      *metrics
	router *Router
	client *kgo.Client

	// mu guards the table and partition state. The run loop holds it while
	// routing records and bookkeeping, never during I/O; rebalance
	// callbacks hold it while they run. Lock order: openMu, then mu.
	mu struct {
		sync.Mutex
		tables   map[string]*table
		parts    map[merge.TopicPartition]*partition
		fetched  map[merge.TopicPartition]committedOffset // from the last OffsetFetch
		buffered int64
		recommit bool // re-commit group offsets on the next loop turn
		routeErr map[merge.TopicPartition]error
		// held are polled records not decoded yet, in poll order: their
		// decoding gave way to a rebalance during a registry outage.
		// Their partitions are paused (heldParts) until they are decoded.
		held      []*kgo.Record
		heldParts map[merge.TopicPartition]bool
	}
	openMu sync.Mutex // serialises sink opening

	// rebalanceWanted is set when franz-go waits for AllowRebalance; the
	// loop then finishes its flush instead of starting another.
	rebalanceWanted atomic.Bool
	// giveWay, while records are decoded, ends their decoding context with
	// errGiveWay, so that registry retries let a waiting rebalance through.
	giveWay atomic.Pointer[context.CancelCauseFunc]
	// registryFailures counts registry failures since the last decoded
	// record; it paces the retries across loop turns.
	registryFailures atomic.Int64

	runMu     sync.Mutex
	cancelRun context.CancelFunc
	runDone   chan struct{}
	running   atomic.Bool
	lastLoop  atomic.Int64 // unix nanos of the last loop turn
	runErr    atomic.Pointer[error]
	closeOnce sync.Once
}

// table is one Delta table and its pending batch.
type table struct {
	path   string
	sink   *merge.Sink
	policy Policy
	pend   pending
	failed *TableError // set: stopped; its partitions are paused
	// abandoned is set when a batch was given up at shutdown: nothing
	// after it may be applied by this run.
	abandoned bool
}

// partition is the state of one assigned partition.
type partition struct {
	tp    merge.TopicPartition
	table *table
	// applied is the last offset known applied to the table (-1: none yet).
	applied int64
	version int64 // the table version holding applied
	// groupNext is the offset last committed to the group (-1: none).
	groupNext int64
}

// New validates opts and creates the Kafka client; consumption starts with
// Run.
func New(opts Options, options ...Option) (*Processor, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	p := &Processor{opts: opts, now: time.Now}
	for _, o := range options {
		o(p)
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	r, err := NewRouter(opts.TablePath)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	p.router = r
	if p.m, err = newMetrics(p.reg); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	p.mu.tables = make(map[string]*table)
	p.mu.parts = make(map[merge.TopicPartition]*partition)
	p.mu.routeErr = make(map[merge.TopicPartition]error)
	p.mu.heldParts = make(map[merge.TopicPartition]bool)
	p.client, err = kgo.NewClient(p.clientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("creating kafka client: %w", err)
	}
	return p, nil
}

func (o Options) validate() error {
	var errs []error
	if len(o.Brokers) == 0 {
		errs = append(errs, errors.New("brokers: must not be empty"))
	}
	if o.Group == "" {
		errs = append(errs, errors.New("group: must not be empty"))
	}
	if len(o.Topics) == 0 {
		errs = append(errs, errors.New("topics: must not be empty"))
	}
	if o.TopicRegex {
		for _, t := range o.Topics {
			if _, err := regexp.Compile(t); err != nil {
				errs = append(errs, fmt.Errorf("topics: %q: %w", t, err))
			}
		}
	}
	if o.OpenStore == nil {
		errs = append(errs, errors.New("open store: must be set"))
	}
	if o.Decoder == nil {
		errs = append(errs, errors.New("decoder: must be set"))
	}
	switch o.ResetOffset {
	case "", "earliest", "latest":
	default:
		errs = append(errs, fmt.Errorf("reset offset: %q is not earliest or latest", o.ResetOffset))
	}
	dlq := false
	for path, pol := range o.TablePolicies {
		if pol != PolicyFail && pol != PolicyDeadLetter {
			errs = append(errs, fmt.Errorf("table policies: %s: unknown policy %q", path, pol))
		}
		dlq = dlq || pol == PolicyDeadLetter
	}
	switch o.BadInput {
	case "", PolicyFail:
	case PolicyDeadLetter:
		dlq = true
	default:
		errs = append(errs, fmt.Errorf("bad input: unknown policy %q", o.BadInput))
	}
	if dlq && o.DeadLetterTopic == "" {
		errs = append(errs, errors.New("dead letter topic: must be set when a policy is dead-letter"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrOptions, errors.Join(errs...))
	}
	return nil
}

func (o Options) withDefaults() Options {
	o.Batch = o.Batch.withDefaults()
	if o.MaxBufferedBytes <= 0 {
		o.MaxBufferedBytes = 256 << 20
	}
	if o.MaxPollRecords <= 0 {
		o.MaxPollRecords = 10_000
	}
	if o.FetchMaxBytes <= 0 {
		o.FetchMaxBytes = 32 << 20
	}
	if o.RecommitInterval <= 0 {
		o.RecommitInterval = 30 * time.Second
	}
	if o.BadInput == "" {
		o.BadInput = PolicyFail
	}
	if o.UnknownSchemaRetries <= 0 {
		o.UnknownSchemaRetries = 3
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 10 * time.Second
	}
	return o
}

// Run consumes until ctx ends or a fatal error occurs. When ctx ends it
// flushes pending batches (bounded by ShutdownTimeout), commits the group
// offsets and returns nil; call Close afterwards to leave the group.
// Run may be called once.
func (p *Processor) Run(ctx context.Context) (err error) {
	if !p.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	p.runMu.Lock()
	if p.runDone != nil { // Close came first
		p.runMu.Unlock()
		return ErrClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	p.cancelRun = cancel
	p.runDone = make(chan struct{})
	done := p.runDone
	p.runMu.Unlock()
	defer func() {
		cancel()
		if err != nil {
			p.runErr.Store(&err)
		}
		p.running.Store(false)
		close(done)
	}()

	if err := p.preflight(ctx); err != nil {
		return err
	}
	nextRecommit := p.now().Add(p.opts.RecommitInterval)
	var f *inflight // the flush applying in the background, if any
	for {
		if ctx.Err() != nil {
			return p.shutdown(f)
		}
		fs := p.poll(ctx, nextRecommit, f)
		p.lastLoop.Store(p.now().UnixNano())
		err := p.ingest(ctx, fs)
		// Decoding the next poll overlapped the flush; finish it when it
		// is done, when the next batch is due (so batches stay near their
		// limits and memory near its bound), or when a rebalance waits (it
		// must not see a flush in flight).
		if err == nil && f != nil && (f.finished() || p.rebalanceWanted.Load() || len(p.dueTables()) > 0) {
			err = p.finishFlush(ctx, f)
			f = nil
		}
		if err == nil && f == nil && !p.rebalanceWanted.Load() {
			if due := p.dueTables(); len(due) > 0 {
				f = p.startFlush(ctx, due)
			}
		}
		if err == nil && f == nil && (p.now().After(nextRecommit) || p.takeRecommit()) {
			p.recommit(ctx)
			nextRecommit = p.now().Add(p.opts.RecommitInterval)
		}
		if f == nil {
			// Nothing is being applied: revocations may proceed.
			p.rebalanceWanted.Store(false)
			p.client.AllowRebalance()
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return p.shutdown(f)
		default:
			if f != nil {
				_ = p.finishFlush(ctx, f) // its error is ctx's; err is the cause
			}
			return err
		}
	}
}

// poll waits for records until the oldest pending batch is due, the next
// idle re-commit, or the in-flight flush finishing, whichever is first.
func (p *Processor) poll(ctx context.Context, nextRecommit time.Time, f *inflight) kgo.Fetches {
	pctx, cancel := context.WithTimeout(ctx, p.pollWait(nextRecommit))
	defer cancel()
	if f != nil {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-f.done:
				cancel()
			case <-stop:
			}
		}()
	}
	return p.client.PollRecords(pctx, p.opts.MaxPollRecords)
}

// pollWait is how long the next poll may block: until the oldest pending
// batch is due by age or the next idle re-commit.
func (p *Processor) pollWait(nextRecommit time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	until := nextRecommit
	if p.mu.recommit || len(p.mu.held) > 0 {
		// Held records are retried at once (decode paces the retries).
		until = p.now()
	}
	for _, t := range p.mu.tables {
		if d := t.pend.deadline(p.opts.Batch); !d.IsZero() && d.Before(until) {
			until = d
		}
	}
	return max(time.Until(until), time.Millisecond)
}

func (p *Processor) takeRecommit() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.mu.recommit
	p.mu.recommit = false
	return r
}

// shutdown finishes the in-flight flush, then flushes what is pending with a
// fresh, bounded context: the run context has ended, but abandoning work
// that can be applied would only mean re-reading it.
func (p *Processor) shutdown(f *inflight) error {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.ShutdownTimeout)
	defer cancel()
	if f != nil {
		// Its applies ran under the ended run context: what they did not
		// commit is re-read on the next start.
		_ = p.finishFlush(ctx, f) // only ctx's error; logged below if it matters
	}
	p.mu.Lock()
	var all []*table
	for _, t := range p.mu.tables {
		if !t.pend.empty() && t.failed == nil && !t.abandoned {
			all = append(all, t)
		}
	}
	p.mu.Unlock()
	if err := p.flush(ctx, all); err != nil {
		p.log.Warn("final flush abandoned; the work is re-read on restart", "err", err)
	}
	return nil
}

// Close stops Run (if running) and waits for it, then leaves the group and
// closes the client. It is safe to call more than once.
func (p *Processor) Close() error {
	p.closeOnce.Do(func() {
		p.runMu.Lock()
		cancel, done := p.cancelRun, p.runDone
		if done == nil {
			p.runDone = make(chan struct{}) // makes a later Run fail
		}
		p.runMu.Unlock()
		if cancel != nil {
			cancel()
			<-done
		}
		// Revoke callbacks still run during the leave; none may block on
		// a poll, so allow rebalancing.
		p.client.CloseAllowingRebalance()
	})
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff is the jittered exponential delay before retry attempt n
// (100ms doubling up to 30s).
func backoff(n int) time.Duration {
	d := 100 * time.Millisecond << min(n, 9)
	d = min(d, 30*time.Second)
	return d/2 + rand.N(d/2+1)
}
