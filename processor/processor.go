package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/backoff"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// Errors returned by New and Run.
var (
	ErrOptions = errors.New("processor: invalid options")
	ErrRunning = errors.New("processor: already running")
	ErrClosed  = errors.New("processor: closed")
)

// Group protocols (Options.GroupProtocol).
const (
	// GroupClassic is Kafka's classic protocol with the cooperative-sticky
	// assignor: works with every broker and with topic regexes.
	GroupClassic = "classic"
	// GroupConsumer is KIP-848's consumer protocol (Kafka 4.0+): the broker
	// assigns partitions, and a member leaving or dying does not make the
	// others rejoin.
	GroupConsumer = "consumer"
)

// Options configure a Processor. Brokers, Group, Topics, OpenStore and
// Decoder are required.
type Options struct {
	// Brokers are the Kafka bootstrap addresses.
	Brokers []string
	// Group is the consumer group id.
	Group string
	// GroupProtocol is GroupClassic (default) or GroupConsumer.
	GroupProtocol string
	// Topics to consume; with TopicRegex they are regular expressions.
	Topics     []string
	TopicRegex bool
	// InstanceID enables static membership, so a rolling restart within the
	// session timeout does not rebalance.
	InstanceID string
	// ClientID is the client id Kafka's tools show for each member
	// (default "cdc2delta").
	ClientID string
	// ClientOptions are extra franz-go options (TLS, SASL, timeouts).
	ClientOptions []kgo.Opt
	// ResetOffset is where a partition with neither a Delta txn nor a group
	// offset starts: "earliest" (default, captures the snapshot) or "latest".
	ResetOffset string

	// TablePath is the table path template (default route.DefaultTablePath).
	TablePath string
	// OpenStore returns the store rooted at a table path.
	OpenStore func(ctx context.Context, tablePath string) (deltalog.Store, error)
	// Sink is the template of every table's merge options; Store and
	// TableName are set per table.
	Sink merge.Options
	// PerTable, when set, gives each table its own settings in place of Sink
	// and BadInput. It is called once per table, when a topic is first
	// routed to it (on assignment); when several topics route to one table
	// path, the first one routed names it. Store and TableName of the
	// returned options are set by the processor and a nil Logger is the
	// processor's.
	PerTable func(route.TableSource) TableSettings
	// Decoder decodes record keys and values.
	Decoder *codecs.Decoder

	// Batch bounds each table's commits (DefaultBatchLimits).
	Batch BatchLimits
	// MaxBufferedBytes bounds the record bytes pending over all tables
	// (at least Batch.Bytes); above it every table commits what it holds and
	// the busy ones stop fetching until they have.
	MaxBufferedBytes int64
	// DebtWarnFiles is the debt of a table, in objects a full scan reads
	// beyond what OPTIMIZE would leave (small files and deletion vectors),
	// at which it is logged once (default 100; negative: never).
	DebtWarnFiles int
	// MaxPollRecords bounds the records taken from the client per poll
	// (default 10,000).
	MaxPollRecords int
	// FetchMaxBytes bounds one fetch response (default 32 MiB).
	FetchMaxBytes int32
	// FetchMaxWait and FetchMinBytes let the broker hold a fetch until
	// FetchMinBytes arrived or FetchMaxWait passed (defaults 100ms and
	// 1 MiB). With franz-go's own defaults (1 byte) a process reading many
	// quiet partitions fetched, polled and reconciled its pauses once per
	// record: half its CPU at 200 tables trickling.
	FetchMaxWait  time.Duration
	FetchMinBytes int32
	// RecommitInterval is how often group offsets are re-committed while
	// idle, so the group's offsets do not expire (default 30s).
	RecommitInterval time.Duration

	// RetryBudget is how long a table may retry a transient failure (a
	// storage, registry or Kafka outage) before it is reported stalled; it
	// keeps retrying (default 2m).
	RetryBudget time.Duration
	// RetryMin and RetryMax bound the backoff between retries (default
	// 100ms and 30s).
	RetryMin, RetryMax time.Duration
	// RevokeTimeout bounds how long a rebalance waits for an apply of a
	// revoked partition to finish before cancelling it (default 10s).
	RevokeTimeout time.Duration

	// BadInput is the default bad-input policy (default PolicyFail).
	BadInput Policy
	// TablePolicies override BadInput per table path; a policy returned by
	// PerTable overrides both.
	TablePolicies map[string]Policy
	// DeadLetterTopic receives dead-lettered records; "{topic}" is replaced
	// by the source topic. Required when any policy is PolicyDeadLetter.
	DeadLetterTopic string
	// CreateDeadLetterTopics creates a missing dead-letter topic (with the
	// broker's default partitions and replication) instead of stopping the
	// tables that need it.
	CreateDeadLetterTopics bool
	// DeadLetterTimeout bounds each step of dead-lettering a record (checking
	// the topic, producing and the broker's acknowledgement): a broker that
	// accepts connections and never answers becomes a transient error,
	// retried within RetryBudget (default 10s).
	DeadLetterTimeout time.Duration
	// UnknownSchemaRetries is how often a record whose schema id the
	// registry does not know is retried before it counts as bad input
	// (default 3): a schema may be registered moments after its record.
	UnknownSchemaRetries int
	// ShutdownTimeout bounds the final commits when Run's context ends
	// (default 10s).
	ShutdownTimeout time.Duration
	// OpenConcurrency bounds the tables being opened (their snapshot read
	// and key index built) at once, and so the memory and cores a restart
	// takes (default 8).
	OpenConcurrency int
	// Maintenance configures the tables' automatic upkeep (ADR 0032).
	Maintenance Maintenance
	// Catalogs register the tables in metastores after their first commit
	// and after commits that change their metadata, beside the data path
	// (ADR 0047), one registrar per catalog, each its own lane: a catalog
	// down or refusing holds only its own tables' registration. Empty
	// registers nothing; their Run is the caller's to start.
	Catalogs []*catalog.Registrar
	// Problems, if set, are more of /readyz's problems, from parts of the
	// process that run beside the pipeline and never stop it (the control
	// table's keeper).
	Problems func() []string
	// CatalogSource gives the registrar (one of Catalogs) that keeps a
	// table and the table's name there, from its route source, its path and
	// its role (catalog.RoleTable, catalog.RoleChangeLog); a nil registrar
	// leaves it unregistered.
	CatalogSource func(src route.TableSource, path, role string) (*catalog.Registrar, catalog.Source)
}

// TableSettings are one table's own settings, returned by Options.PerTable.
type TableSettings struct {
	// Sink configures the table's MERGE (delete and merge modes, tombstone
	// retention, change data feed).
	Sink merge.Options
	// BadInput is the table's bad-input policy; empty means
	// Options.TablePolicies or Options.BadInput.
	BadInput Policy
	// ChangeLog is the path of the table's change log (ADR 0031), which
	// gets every batch before the table does; empty keeps none.
	ChangeLog string
	// History is the path of the table's history table (SCD type 2, ADR
	// 0046), which gets every batch after the change log and before the
	// table; empty keeps none. HistoryOptions configure it (its Store,
	// TableName and Logger are the processor's).
	History        string
	HistoryOptions merge.HistoryOptions
	// HistoryOnly keeps the history table instead of the table: at the
	// table's own path, configured by HistoryOptions, with no current-state
	// table written (history: only). History must then be empty, and Sink
	// configures nothing but the column names and the bad-input policy.
	HistoryOnly bool
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
	opts Options
	log  *slog.Logger
	reg  prometheus.Registerer
	now  func() time.Time
	// costEvery is how often a table's live-file gauges are refreshed
	// (default costEvery; tests set 0).
	costEvery time.Duration
	m         *metrics
	router    *route.Router
	client    *kgo.Client
	retry     retryPolicy
	dlq       *deadLetters
	kafka     *kafkaHealth
	commit    *committer
	maint     *maintainer // nil: maintenance disabled
	// openSlots bounds the tables opening at once.
	openSlots chan struct{}
	// idleClose is how long a table without partitions stays open.
	idleClose time.Duration
	// decoded is the poll loop's reused output of the decoders.
	decoded decodeBuf

	// mu guards the table and partition state. It is never held across
	// I/O or a client call.
	mu struct {
		sync.Mutex
		tables   map[string]*table
		parts    map[cdctable.TopicPartition]*partition
		fetched  map[cdctable.TopicPartition]cdctable.CommittedOffset // from the last OffsetFetch
		buffered int64
		routeErr map[cdctable.TopicPartition]error
		// starts are partitions whose start offsets their tables found,
		// for the loop to set.
		starts []*partition
		// held are records whose decoding waits for the registry, per
		// partition (paused meanwhile).
		held map[cdctable.TopicPartition]*heldRecords
		// budget is the commit budget shared by the tables.
		budget commitBudget
		// stats counts what this run applied (progress and the stop summary).
		stats runStats
	}
	// wakeLoop ends the loop's poll early (capacity 1).
	wakeLoop chan struct{}
	// built closes when New has set client, dlq and commit. franz-go joins
	// the group inside kgo.NewClient, so an assignment (onAssigned) can
	// come before New has stored the client it pauses partitions with.
	built chan struct{}

	// tablesCtx ends when Run shuts down: workers stop taking new work.
	// applyCtx ends ShutdownTimeout later (or on a failed Run): applies in
	// progress are abandoned.
	tablesCtx, applyCtx      context.Context
	stopTables, abortApplies context.CancelFunc
	workers                  sync.WaitGroup
	runMu                    sync.Mutex
	cancelRun                context.CancelFunc
	runDone                  chan struct{}
	running                  atomic.Bool
	lastLoop                 atomic.Int64 // unix nanos of the last loop turn
	runErr                   atomic.Pointer[error]
	closeOnce                sync.Once
}

// New validates opts and creates the Kafka client; consumption starts with
// Run.
func New(opts Options, options ...Option) (*Processor, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	p := &Processor{opts: opts, now: time.Now, idleClose: time.Minute, wakeLoop: make(chan struct{}, 1), built: make(chan struct{})}
	for _, o := range options {
		o(p)
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	r, err := route.NewRouter(opts.TablePath)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	p.router = r
	if p.m, err = newMetrics(p.reg); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	p.retry = retryPolicy{Policy: backoff.Policy{Min: opts.RetryMin, Max: opts.RetryMax}, budget: opts.RetryBudget}
	p.mu.tables = make(map[string]*table)
	p.mu.budget = newCommitBudget(opts.Batch)
	p.costEvery = costEvery
	p.mu.parts = make(map[cdctable.TopicPartition]*partition)
	p.mu.routeErr = make(map[cdctable.TopicPartition]error)
	p.mu.held = make(map[cdctable.TopicPartition]*heldRecords)
	p.tablesCtx, p.stopTables = context.WithCancel(context.Background())
	p.applyCtx, p.abortApplies = context.WithCancel(context.Background())
	p.kafka = newKafkaHealth(p)
	p.client, err = kgo.NewClient(p.clientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("creating kafka client: %w", err)
	}
	p.dlq = newDeadLetters(p)
	p.commit = newCommitter(p)
	p.maint = newMaintainer(p)
	p.openSlots = make(chan struct{}, opts.OpenConcurrency)
	close(p.built)
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
	switch o.GroupProtocol {
	case "", GroupClassic, GroupConsumer:
	default:
		errs = append(errs, fmt.Errorf("group protocol: %q is not %s or %s", o.GroupProtocol, GroupClassic, GroupConsumer))
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
	d := DefaultOptions()
	if o.Batch.Bytes <= 0 && o.MaxBufferedBytes > 0 {
		o.Batch.Bytes = min(d.Batch.Bytes, o.MaxBufferedBytes)
	}
	o.Batch = o.Batch.withDefaults()
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.GroupProtocol == "" {
		o.GroupProtocol = d.GroupProtocol
	}
	if o.ClientID == "" {
		o.ClientID = d.ClientID
	}
	if o.MaxBufferedBytes <= 0 {
		o.MaxBufferedBytes = max(d.MaxBufferedBytes, o.Batch.Bytes)
	}
	if o.MaxPollRecords <= 0 {
		o.MaxPollRecords = 10_000
	}
	if o.DebtWarnFiles == 0 {
		o.DebtWarnFiles = 100
	}
	if o.FetchMaxBytes <= 0 {
		o.FetchMaxBytes = 32 << 20
	}
	if o.FetchMinBytes <= 0 {
		o.FetchMinBytes = d.FetchMinBytes
	}
	def(&o.FetchMaxWait, d.FetchMaxWait)
	def(&o.RecommitInterval, 30*time.Second)
	def(&o.RetryBudget, d.RetryBudget)
	def(&o.RetryMin, 100*time.Millisecond)
	def(&o.RetryMax, 30*time.Second)
	def(&o.RevokeTimeout, 10*time.Second)
	def(&o.ShutdownTimeout, 10*time.Second)
	def(&o.DeadLetterTimeout, 10*time.Second)
	if o.BadInput == "" {
		o.BadInput = d.BadInput
	}
	if o.UnknownSchemaRetries <= 0 {
		o.UnknownSchemaRetries = 3
	}
	if o.OpenConcurrency <= 0 {
		o.OpenConcurrency = d.OpenConcurrency
	}
	o.Maintenance = o.Maintenance.withDefaults()
	return o
}

// Run consumes until ctx ends or a fatal error occurs (Kafka refusing the
// client's credentials, or the client closing). When ctx ends the tables
// commit what they hold (bounded by ShutdownTimeout), the group offsets are
// committed and Run returns nil; call Close afterwards to leave the group.
// Run may be called once.
func (p *Processor) Run(ctx context.Context) (err error) {
	// The loop's liveness is measured from the start, set before running
	// so Status never sees one without the other: before its first turn
	// (preflight can take seconds) a zero lastLoop read as a loop stuck
	// for 292 years, failing /healthz and /readyz.
	start := p.now()
	p.lastLoop.Store(start.UnixNano())
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

	if err := p.kafka.preflight(ctx); err != nil {
		p.shutdown()
		return err
	}
	var bg sync.WaitGroup
	bgCtx, stopBg := context.WithCancel(context.WithoutCancel(ctx))
	bg.Go(func() { p.kafka.run(bgCtx) })
	bg.Go(func() { p.commit.run(bgCtx) })
	bg.Go(func() { p.maint.run(p.tablesCtx) }) // ends when shutdown begins
	bg.Go(func() { p.runProgress(bgCtx) })
	defer func() {
		stopBg()
		bg.Wait()
	}()
	err = p.loop(ctx)
	p.shutdown()
	p.logSummary(start)
	return err
}

// loop is the poll loop (ADR 0026): it sets the start offsets tables found,
// pauses and resumes partitions, lets rebalances through, polls, and decodes
// and routes what it polled. It never waits for a table.
func (p *Processor) loop(ctx context.Context) error {
	for {
		if ctx.Err() != nil {
			return nil
		}
		p.setStarts()
		p.reconcilePauses()
		// Between polls nothing of the loop's is in flight: rebalance
		// callbacks may run now, and only now (BlockRebalanceOnPoll).
		p.client.AllowRebalance()
		fs := p.poll(ctx)
		p.lastLoop.Store(p.now().UnixNano())
		if err := p.ingest(ctx, fs); err != nil {
			return err
		}
	}
}

// maxPollWait bounds a poll, so the loop turns (and shows it is alive) at
// least this often.
const maxPollWait = time.Second

// poll waits for records, at most maxPollWait or until the loop is woken.
func (p *Processor) poll(ctx context.Context) kgo.Fetches {
	pctx, cancel := context.WithTimeout(ctx, maxPollWait)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-p.wakeLoop:
			cancel()
		case <-stop:
		}
	}()
	return p.client.PollRecords(pctx, p.opts.MaxPollRecords)
}

// wake ends the loop's current poll so it acts on new table state.
func (p *Processor) wake() {
	select {
	case p.wakeLoop <- struct{}{}:
	default:
	}
}

// shutdown lets every table commit what it holds, within ShutdownTimeout,
// and waits for the workers.
func (p *Processor) shutdown() {
	p.stopTables()
	t := time.AfterFunc(p.opts.ShutdownTimeout, p.abortApplies)
	defer t.Stop()
	p.workers.Wait()
}

// Close stops Run (if running) and waits for it, then leaves the group and
// closes the clients. It is safe to call more than once.
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
		p.stopTables()
		p.abortApplies()
		p.workers.Wait()
		// Revoke callbacks still run during the leave; none may block on
		// a poll, so allow rebalancing.
		p.client.CloseAllowingRebalance()
		p.dlq.close()
	})
	return nil
}
