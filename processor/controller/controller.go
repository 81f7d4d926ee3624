// Package controller keeps the control table (ADR 0029): how far each table
// and each group of tables is complete. It runs beside the processor and
// shares with it only the tables, the on-disk contract (cdctable) and the
// topic routing (route).
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/deadline"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/control"
	"github.com/cdc2delta/cdc2delta/processor/cut"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// DefaultInterval is how often a Controller brings the control table up to
// date (control.interval).
const DefaultInterval = 5 * time.Second

// Options configure a Controller.
type Options struct {
	// Brokers and ClientOptions connect to Kafka as the processor does.
	Brokers       []string
	ClientOptions []kgo.Opt
	// Topics or TopicRegex name the tables' topics, as for the processor.
	Topics     []string
	TopicRegex string
	// TablePath routes a topic to its table (processor.Options.TablePath).
	TablePath string
	// OpenStore opens a table's store by path, as processor.Options.OpenStore.
	OpenStore func(ctx context.Context, path string) (deltalog.Store, error)
	// Control is the control table's store.
	Control deltalog.Store
	// Groups are named sets of source tables (database.schema.table) whose
	// consistent cut gets a row.
	Groups map[string][]string
	// TransactionTopic is Debezium's transaction topic; set, completeness
	// follows the transaction metadata rule, else the watermark rule.
	TransactionTopic string
	// Decoder decodes the transaction topic.
	Decoder *codecs.Decoder
	// Interval is how often the control table is brought up to date
	// (default 5 s).
	Interval time.Duration
	// KafkaTimeout bounds each Kafka admin request of a round (default
	// 10 s): a broker that does not answer fails the round, which the
	// next one retries.
	KafkaTimeout time.Duration
	Logger       *slog.Logger
	// Registerer receives the control table's gauges; nil registers none.
	Registerer prometheus.Registerer
	// Now stamps updated_at; default time.Now.
	Now func() time.Time
}

// Controller keeps the control table (ADR 0029). It reads what each table's
// commits recorded (cdctable.Progress), the transaction topic when there is
// one, and the topics' end offsets, and writes how far each table and group
// is complete. It shares nothing with the processor but the tables and the
// control table: any number of controllers, in any processes, may run.
type Controller struct {
	opts        Options
	log         *slog.Logger
	client      *kgo.Client
	adm         *kadm.Client
	router      *route.Router
	regex       *regexp.Regexp
	tracker     *cut.Tracker
	tables      map[string]*controlledTable // by topic
	ctl         *control.Table
	resumed     bool
	txTopicSeen bool
	// keys are the keys of the transactions named by name in progress
	// (PostgreSQL's, codecs.TxCommit), from their ENDs; pending holds the
	// orders applied of named transactions whose END is not read yet.
	keys    map[string]codecs.LSN
	named   []string // keys' names in the order their ENDs were read
	pending map[string][]pendingOrders
	// behind is each table's and group's complete_through commit time
	// behind the newest source commit any table applied, in seconds.
	tableBehind, groupBehind *prometheus.GaugeVec
	// refused is why Run stopped keeping the control table (ErrTransactions).
	refused atomic.Pointer[error]
}

// controlledTable is one table the controller follows.
type controlledTable struct {
	src   route.TableSource
	id    codecs.TableID
	name  string
	table *deltalog.Table
	snap  *deltalog.Snapshot
	read  int64 // the last version fed to the tracker; -1 for none
	// resumed is the version the control row's completeness was found at:
	// a version read again after a restart (from scan_from) counts as it.
	resumed int64
	last    cut.Completeness
	high    cut.Completeness // the highest position applied, for last_applied
	// versions are the table's completeness after each version fed since
	// the last update, for version rows.
	versions []versionMark
	// parts are the partitions the last end offsets listed.
	parts []int32
}

// pendingOrders are the data_collection_orders one table version applied of
// a transaction whose key is not known yet.
type pendingOrders struct {
	table   codecs.TableID
	orders  []int64
	millis  int64
	version int64
}

type versionMark struct {
	version int64
	c       cut.Completeness
	high    cut.Completeness // the highest position applied through version
}

// New validates opts and creates the Kafka client.
func New(opts Options) (*Controller, error) {
	if opts.Control == nil || opts.OpenStore == nil || len(opts.Brokers) == 0 {
		return nil, fmt.Errorf("%w: a controller needs brokers, OpenStore and a control table store", ErrOptions)
	}
	if opts.TransactionTopic != "" && opts.Decoder == nil {
		return nil, fmt.Errorf("%w: reading the transaction topic needs a decoder", ErrOptions)
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.KafkaTimeout <= 0 {
		opts.KafkaTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	router, err := route.NewRouter(opts.TablePath)
	if err != nil {
		return nil, err
	}
	c := &Controller{opts: opts, log: opts.Logger.With("component", "control"), router: router,
		tracker: cut.New(cut.Options{Transactions: opts.TransactionTopic != ""}), tables: map[string]*controlledTable{},
		keys: map[string]codecs.LSN{}, pending: map[string][]pendingOrders{}}
	if opts.TopicRegex != "" {
		if c.regex, err = regexp.Compile(opts.TopicRegex); err != nil {
			return nil, fmt.Errorf("%w: topic regex: %v", ErrOptions, err)
		}
	}
	kopts := append(slices.Clone(opts.ClientOptions), kgo.SeedBrokers(opts.Brokers...))
	if opts.TransactionTopic != "" {
		kopts = append(kopts, kgo.ConsumeTopics(opts.TransactionTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	}
	if c.client, err = kgo.NewClient(kopts...); err != nil {
		return nil, fmt.Errorf("creating the control table's Kafka client: %w", err)
	}
	c.adm = kadm.NewClient(c.client)
	c.tableBehind = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cdc2delta_table_complete_behind_seconds",
		Help: "How far the source commit time a table is complete through is behind the newest source commit applied to any table."}, []string{"table"})
	c.groupBehind = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cdc2delta_group_finalized_behind_seconds",
		Help: "How far a group's finalized_until is behind the newest source commit applied to any table."}, []string{"group"})
	if opts.Registerer != nil {
		for _, g := range []prometheus.Collector{c.tableBehind, c.groupBehind} {
			if err := opts.Registerer.Register(g); err != nil {
				c.client.Close()
				return nil, fmt.Errorf("registering the control table's metrics: %w", err)
			}
		}
	}
	return c, nil
}

// observe sets the gauges from the update about to be written.
func (c *Controller) observe(u control.Update) {
	newest := control.NewestApplied(u.Tables)
	if newest.IsZero() {
		return
	}
	behind := func(t time.Time) float64 {
		d, ok := control.Behind(newest, t)
		if !ok {
			return math.NaN()
		}
		return d.Seconds()
	}
	for _, r := range u.Tables {
		c.tableBehind.WithLabelValues(r.Name).Set(behind(r.CompleteThroughCommit))
	}
	for _, g := range u.Groups {
		c.groupBehind.WithLabelValues(g.Name).Set(behind(g.FinalizedUntil))
	}
}

// Close releases the Kafka client.
func (c *Controller) Close() { c.client.Close() }

// Run updates the control table every Interval until ctx ends. A failed
// round is logged and retried at the next one: the control table only lags.
// A transaction topic it cannot use (ErrTransactions) stops it, logged as
// an error naming control.transaction_topic: it then claims nothing.
func (c *Controller) Run(ctx context.Context) error {
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		err := c.Round(ctx)
		if errors.Is(err, ErrTransactions) && ctx.Err() == nil {
			c.log.Error("the control table is not kept: its transaction topic comes from a source whose transactions it cannot place", "err", err)
			c.refused.Store(&err)
			return err
		}
		if err != nil && ctx.Err() == nil {
			c.log.Warn("updating the control table failed; retrying at the next round", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Problems are /readyz's lines about the control table: why it is no
// longer kept, once Run has stopped on a transaction topic it refuses. A
// failed round only lags and is not a problem.
func (c *Controller) Problems() []string {
	if err := c.refused.Load(); err != nil {
		return []string{"control table not kept: " + (*err).Error()}
	}
	return nil
}

// Round brings the control table up to date once.
func (c *Controller) Round(ctx context.Context) error {
	if c.ctl == nil {
		ctl, err := control.Open(ctx, c.opts.Control, c.opts.Now)
		if err != nil {
			return err
		}
		c.ctl = ctl
	}
	st, err := c.ctl.Read(ctx)
	if err != nil {
		return err
	}
	if err := c.readTransactions(ctx); err != nil {
		return err
	}
	if err := c.discover(ctx, st); err != nil {
		return err
	}
	if err := c.partitions(ctx); err != nil {
		return err
	}
	for _, topic := range slices.Sorted(maps.Keys(c.tables)) {
		if err := c.readTable(ctx, c.tables[topic]); err != nil {
			return err
		}
	}
	// End offsets after the logs: a partition whose txn reached its end
	// then has applied every change produced before the logs were read.
	if err := c.caughtUp(ctx); err != nil {
		return err
	}
	u := c.update(st)
	c.observe(u)
	_, err = c.ctl.Advance(ctx, u)
	c.tracker.Prune()
	c.pruneKeys()
	return err
}

// keepKeys is how many keys of transactions every table is complete through
// a controller keeps: a connector restart re-sends the changes of the last
// seconds or minutes, whose orders then find their key instead of waiting
// for an END that was read long ago (holding scan_from back).
const keepKeys = 100_000

// pruneKeys forgets the oldest keys beyond keepKeys of the transactions
// every table is complete through: an order of theirs read later changes
// nothing.
func (c *Controller) pruneKeys() {
	if len(c.named) <= keepKeys || len(c.tables) == 0 {
		return
	}
	var low codecs.Position
	for i, topic := range slices.Sorted(maps.Keys(c.tables)) {
		if t := c.tables[topic].last.Through; i == 0 || t.Compare(low) < 0 {
			low = t
		}
	}
	n := 0
	for n < len(c.named)-keepKeys {
		key, ok := c.keys[c.named[n]]
		if ok && cut.End(key).Compare(low) > 0 {
			break
		}
		delete(c.keys, c.named[n])
		n++
	}
	c.named = slices.Delete(c.named, 0, n)
}

// observeTx records an event of the transaction topic. A PostgreSQL BEGIN
// has no key (its END has): the tracker needs only the END, as the topic
// is read in commit order.
func (c *Controller) observeTx(ev codecs.TxEvent) {
	if ev.Commit.IsZero() {
		return
	}
	if ev.Name != "" {
		// Named by txId (PostgreSQL): its data events find the key here,
		// and its END names tables schema.table, of the connector's
		// database, which topic names give as their prefix's last part.
		db := strings.TrimSuffix(c.opts.TransactionTopic, ".transaction")
		db = db[strings.LastIndex(db, ".")+1:]
		counts := make(map[codecs.TableID]int64, len(ev.Counts))
		for id, n := range ev.Counts {
			if id.Database == "" {
				id.Database = db
			}
			counts[id] += n
		}
		ev.Counts = counts
		if _, ok := c.keys[ev.Name]; !ok {
			c.named = append(c.named, ev.Name)
		}
		c.keys[ev.Name] = ev.Commit
	}
	c.tracker.Observe(ev)
	if ps, ok := c.pending[ev.Name]; ok && ev.Name != "" && ev.Status == codecs.TxEnd {
		delete(c.pending, ev.Name)
		for _, p := range ps {
			for _, o := range p.orders {
				c.tracker.ApplyOrder(p.table, ev.Commit, o, p.millis, p.version)
			}
		}
	}
}

// admin runs one Kafka admin request under the round's Kafka deadline.
func (c *Controller) admin(ctx context.Context, fn func(context.Context) error) error {
	return deadline.Run(ctx, c.opts.KafkaTimeout, fmt.Sprintf("kafka.brokers %v", c.opts.Brokers), fn)
}

// readTransactions takes what the transaction topic has now.
func (c *Controller) readTransactions(ctx context.Context) error {
	if c.opts.TransactionTopic == "" {
		return nil
	}
	if !c.txTopicSeen {
		// The client would wait for a missing topic without a word; no
		// table could then complete, so each round says why.
		var md kadm.TopicDetails
		err := c.admin(ctx, func(ctx context.Context) (err error) {
			md, err = c.adm.ListTopics(ctx, c.opts.TransactionTopic)
			return err
		})
		if err != nil {
			return fmt.Errorf("looking up the transaction topic: %w", err)
		}
		if !md.Has(c.opts.TransactionTopic) || md[c.opts.TransactionTopic].Err != nil {
			return fmt.Errorf("%w: the transaction topic %s does not exist: no table can be complete by its transactions; "+
				"check control.transaction_topic, and that the connector has provide.transaction.metadata=true", ErrOptions, c.opts.TransactionTopic)
		}
		c.txTopicSeen = true
	}
	for {
		pctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		fs := c.client.PollRecords(pctx, 10_000)
		cancel()
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				ferr = err
			}
		})
		if ferr != nil {
			return fmt.Errorf("reading %s: %w", c.opts.TransactionTopic, ferr)
		}
		n := 0
		var derr error
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if derr != nil {
				return
			}
			ev, err := c.opts.Decoder.DecodeTransaction(ctx, r.Topic, r.Partition, r.Offset, r.Value)
			if err != nil {
				derr = err
				return
			}
			c.observeTx(ev)
		})
		if errors.Is(derr, codecs.ErrTransactionSource) {
			return fmt.Errorf("%w: control.transaction_topic %s: %w", ErrTransactions, c.opts.TransactionTopic, derr)
		}
		if derr != nil {
			return derr
		}
		if n == 0 || ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// discover finds the tables' topics and opens the tables that exist.
func (c *Controller) discover(ctx context.Context, st *control.State) error {
	topics := c.opts.Topics
	if c.regex != nil {
		var listed kadm.TopicDetails
		err := c.admin(ctx, func(ctx context.Context) (err error) {
			listed, err = c.adm.ListTopics(ctx)
			return err
		})
		if err != nil {
			return fmt.Errorf("listing topics: %w", err)
		}
		topics = nil
		for _, name := range listed.Names() {
			if c.regex.MatchString(name) {
				topics = append(topics, name)
			}
		}
	}
	for _, topic := range topics {
		if c.tables[topic] != nil || topic == c.opts.TransactionTopic {
			continue
		}
		src, err := c.router.Source(topic)
		if err != nil {
			return err
		}
		store, err := c.opts.OpenStore(ctx, src.Path)
		if err != nil {
			return fmt.Errorf("opening %s: %w", src.Path, err)
		}
		tbl, err := deltalog.Open(ctx, store)
		if err != nil {
			return fmt.Errorf("opening %s: %w", src.Path, err)
		}
		id := codecs.TableID{Database: src.Database, Schema: src.Schema, Table: src.Table}
		ct := &controlledTable{src: src, id: id, name: id.String(), table: tbl, read: -1, resumed: -1}
		if row, ok := st.Tables[ct.name]; ok && !c.resumed {
			// Pick up where the control table is: a restart reads the log
			// from the first version it may still need.
			ct.last = cut.Completeness{Through: row.CompleteThrough, CommitMillis: row.CompleteThroughCommit.UnixMilli()}
			ct.high = cut.Completeness{Through: row.LastApplied, CommitMillis: row.LastAppliedCommit.UnixMilli()}
			c.tracker.Resume(id, ct.last, ct.high)
			ct.read, ct.resumed = row.DeltaVersion, row.DeltaVersion
			switch {
			case row.CompleteThrough == (codecs.Position{}):
				// Nothing claimed yet: every version is read again, so that
				// each partition's applied positions bound the table.
				ct.read = -1
			case row.ScanFrom >= 0:
				ct.read = min(ct.read, row.ScanFrom-1)
			}
		}
		c.tables[topic] = ct
	}
	c.resumed = true
	return nil
}

// partitions declares every table's partitions to the tracker, so that a
// partition none of whose changes was read yet holds its table back.
func (c *Controller) partitions(ctx context.Context) error {
	if len(c.tables) == 0 {
		return nil
	}
	var md kadm.TopicDetails
	err := c.admin(ctx, func(ctx context.Context) (err error) {
		md, err = c.adm.ListTopics(ctx, slices.Collect(maps.Keys(c.tables))...)
		return err
	})
	if err != nil {
		return fmt.Errorf("listing the tables' topics: %w", err)
	}
	for _, td := range md.Sorted() {
		ct := c.tables[td.Topic]
		if ct == nil || td.Err != nil {
			continue
		}
		ct.parts = ct.parts[:0]
		for _, pd := range td.Partitions.Sorted() {
			ct.parts = append(ct.parts, pd.Partition)
		}
		c.tracker.Track(ct.id, ct.parts...)
	}
	return nil
}

// readTable feeds the tracker with the versions committed since the last
// round, noting the table's completeness after each.
func (c *Controller) readTable(ctx context.Context, ct *controlledTable) error {
	var err error
	if ct.snap == nil {
		ct.snap, err = ct.table.Snapshot(ctx)
	} else {
		ct.snap, err = ct.table.Update(ctx, ct.snap)
	}
	if errors.Is(err, deltalog.ErrNotExist) {
		ct.snap = nil
		return nil // not created yet
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", ct.src.Path, err)
	}
	// A partition caught up at the last round may not be now: until the
	// end offsets say so again, the versions read count on positions alone.
	for _, p := range ct.parts {
		c.tracker.CaughtUp(ct.id, p, false)
	}
	for v := ct.read + 1; v <= ct.snap.Version(); v++ {
		ci, err := ct.table.CommitInfo(ctx, v)
		if errors.Is(err, deltalog.ErrNotExist) {
			c.log.Warn("a version's commitInfo is gone (log cleanup); its progress is not counted", "table", ct.name, "version", v)
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s version %d: %w", ct.src.Path, v, err)
		}
		prog, ok, err := cdctable.ReadProgress(ci)
		if err != nil {
			return fmt.Errorf("%s version %d: %w", ct.src.Path, v, err)
		}
		if ok {
			if err := c.feed(ct, v, prog); err != nil {
				return fmt.Errorf("%s version %d: %w", ct.src.Path, v, err)
			}
		}
		ct.read = v
		if now := c.tracker.Complete(ct.id); now.Through.Compare(ct.last.Through) > 0 {
			// Below the resumed version, the completeness resumed with
			// holds only from that version on.
			ct.last = now
			m := versionMark{version: v, c: now, high: ct.high}
			if v < ct.resumed {
				// What the resumed version holds above it is not known here.
				m.version, m.high = ct.resumed, cut.Completeness{}
			}
			ct.versions = append(ct.versions, m)
		}
	}
	return nil
}

// feed gives the tracker one version's progress.
func (c *Controller) feed(ct *controlledTable, v int64, prog cdctable.Progress) error {
	apply := func(appID string, pp cdctable.PartitionProgress) error {
		tp, ok := cdctable.ParseAppID(appID)
		if !ok {
			return fmt.Errorf("progress names partition %q", appID)
		}
		pos, err := codecs.PositionFromHex(pp.Pos)
		if err != nil {
			return err
		}
		c.tracker.Apply(cut.Change{Table: ct.id, Partition: tp.Partition, Pos: pos, CommitMillis: pp.Millis, Snapshot: pp.Snapshot, Version: v})
		if pos.Compare(ct.high.Through) > 0 {
			ct.high = cut.Completeness{Through: pos, CommitMillis: pp.Millis}
		}
		return nil
	}
	for _, pp := range slices.Concat(prog.Snapshots, prog.SnapshotEnds) {
		if err := apply(pp.AppID, pp); err != nil {
			return err
		}
	}
	for _, appID := range slices.Sorted(maps.Keys(prog.Partitions)) {
		if err := apply(appID, prog.Partitions[appID]); err != nil {
			return err
		}
	}
	if c.opts.TransactionTopic == "" {
		return nil // the watermark rule counts no transaction
	}
	for _, id := range prog.TxIDs() {
		commit, known, err := codecs.TxCommit(id)
		if err != nil {
			return fmt.Errorf("progress names transaction %q: %w", id, err)
		}
		if !known {
			if commit, known = c.keys[id]; !known {
				c.pending[id] = append(c.pending[id], pendingOrders{table: ct.id, orders: prog.Orders(id), millis: prog.TxMillis[id], version: v})
				continue
			}
		}
		for _, o := range prog.Orders(id) {
			c.tracker.ApplyOrder(ct.id, commit, o, prog.TxMillis[id], v)
		}
	}
	return nil
}

// caughtUp tells the tracker, per partition, whether the table's txn has
// reached the partition's end.
func (c *Controller) caughtUp(ctx context.Context) error {
	var topics []string
	for topic, ct := range c.tables {
		if ct.snap != nil {
			topics = append(topics, topic)
		}
	}
	if len(topics) == 0 {
		return nil
	}
	var ends kadm.ListedOffsets
	err := c.admin(ctx, func(ctx context.Context) (err error) {
		ends, err = c.adm.ListEndOffsets(ctx, topics...)
		return err
	})
	if err != nil {
		return fmt.Errorf("listing end offsets: %w", err)
	}
	if err := ends.Error(); err != nil {
		return fmt.Errorf("listing end offsets: %w", err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		ct := c.tables[o.Topic]
		txn, ok := ct.snap.TxnVersion(cdctable.TopicPartition{Topic: o.Topic, Partition: o.Partition}.AppID())
		c.tracker.CaughtUp(ct.id, o.Partition, o.Offset == 0 || ok && txn >= o.Offset-1)
	})
	return nil
}

// update renders what the tracker knows as control rows.
func (c *Controller) update(st *control.State) control.Update {
	var u control.Update
	best := map[string]cut.Completeness{}
	for _, row := range st.Tables {
		best[row.Name] = cut.Completeness{Through: row.CompleteThrough, CommitMillis: row.CompleteThroughCommit.UnixMilli()}
	}
	for _, topic := range slices.Sorted(maps.Keys(c.tables)) {
		ct := c.tables[topic]
		if ct.snap == nil {
			continue
		}
		now := c.tracker.Complete(ct.id)
		if now.Through.Compare(ct.last.Through) > 0 {
			// End offsets made more complete than the versions read.
			ct.last = now
			ct.versions = append(ct.versions, versionMark{version: ct.snap.Version(), c: now, high: ct.high})
		}
		scan := c.tracker.ScanFrom(ct.id)
		for _, ps := range c.pending {
			for _, p := range ps {
				if p.table == ct.id && (scan < 0 || p.version < scan) {
					scan = p.version
				}
			}
		}
		if scan < 0 {
			scan = ct.snap.Version() + 1
		}
		base := control.Row{Kind: control.KindTable, Name: ct.name, TablePath: ct.src.Path, DeltaVersion: ct.snap.Version(),
			ScanFrom: scan, LastApplied: ct.high.Through, LastAppliedCommit: millis(ct.high.CommitMillis)}
		for _, m := range ct.versions {
			r := base
			r.DeltaVersion, r.CompleteThrough, r.CompleteThroughCommit = m.version, m.c.Through, millis(m.c.CommitMillis)
			r.LastApplied, r.LastAppliedCommit = m.high.Through, millis(m.high.CommitMillis)
			u.Tables = append(u.Tables, r)
		}
		ct.versions = nil
		r := base
		r.CompleteThrough, r.CompleteThroughCommit = now.Through, millis(now.CommitMillis)
		u.Tables = append(u.Tables, r)
		if now.Through.Compare(best[ct.name].Through) > 0 {
			best[ct.name] = now
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.opts.Groups)) {
		var g cut.Completeness
		complete := true
		for i, member := range c.opts.Groups[name] {
			m, ok := best[member]
			if !ok || m.IsZero() {
				complete = false
				break
			}
			if i == 0 || m.Through.Compare(g.Through) < 0 {
				g = m
			}
		}
		if !complete {
			continue
		}
		at := millis(g.CommitMillis)
		u.Groups = append(u.Groups, control.Row{Kind: control.KindGroup, Name: name, DeltaVersion: -1, ScanFrom: -1,
			CompleteThrough: g.Through, CompleteThroughCommit: at, FinalizedUntil: at})
	}
	return u
}

func millis(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// ErrTransactions reports a transaction topic whose transactions
// completeness cannot use (codecs.ErrTransactionSource): the controller
// stops, claiming nothing, as the watermark rule is what such a source needs.
var ErrTransactions = errors.New("controller: transaction metadata refused")

// ErrOptions reports options a controller cannot work with: missing ones, a
// bad topic regex, or a transaction topic that does not exist.
var ErrOptions = errors.New("controller: invalid options")
