package e2ebench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/procstatus"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// EstateClass is one size class of the estate: Tables tables of Rows rows.
type EstateClass struct {
	Name   string `json:"name"`
	Tables int    `json:"tables"`
	Rows   int    `json:"rows"`
}

// DefaultEstate is the estate of a SQL Server shop: 5 tables of 100M rows,
// 50 of 1M and 445 of 10k.
func DefaultEstate() []EstateClass {
	return []EstateClass{{"big", 5, 100_000_000}, {"medium", 50, 1_000_000}, {"small", 445, 10_000}}
}

// EstateConfig shapes RunEstate: tables of several sizes, preloaded in
// bulk, then a stream of updates spread over them by a Zipf law, consumed
// by one `cdc2delta run` process.
type EstateConfig struct {
	// Binary is the cdc2delta executable to run. Required.
	Binary string
	// Brokers is a Kafka cluster to use; empty starts an in-process one
	// (kfake, which keeps every record in this process's memory).
	Brokers []string
	// Classes are the tables (default DefaultEstate), each class's rows
	// divided by Scale (default 1), at least 2 rows a table.
	Classes []EstateClass
	Scale   int
	// Rate is the events per second over all tables (default 20,000);
	// Zipf is the exponent of the tables' shares (default 1: the table of
	// rank r gets a share proportional to 1/r), ranks drawn at random.
	Rate float64
	Zipf float64
	// Hot is how many of the highest-ranked tables are held to the hot
	// freshness goal (default 10).
	Hot int
	// Duration is the measured phase (default 30m).
	Duration time.Duration
	// ChangeLog, Control and Maintenance turn on each table's change log,
	// the control table and automatic maintenance; KeyIndex is
	// memory.key_index (empty: the configuration's default).
	ChangeLog, Control, Maintenance bool
	KeyIndex                        string
	// InstanceID is kafka.instance_id: with static membership a restarted
	// run takes its partitions back at once; without, the broker hands
	// them out only once the killed run's session times out.
	InstanceID string
	// ExtraYAML is appended to the run's configuration file.
	ExtraYAML string
	// Root holds the tables and the run's files; it must be empty or
	// missing. Required.
	Root string
	// Seed makes the ranks, keys and values reproducible.
	Seed uint64
	// Log receives progress lines (nil: none).
	Log io.Writer
}

func (c EstateConfig) withDefaults() EstateConfig {
	if c.Classes == nil {
		c.Classes = DefaultEstate()
	}
	if c.Scale <= 0 {
		c.Scale = 1
	}
	if c.Rate == 0 {
		c.Rate = 20_000
	}
	if c.Zipf == 0 {
		c.Zipf = 1
	}
	if c.Hot == 0 {
		c.Hot = 10
	}
	if c.Duration == 0 {
		c.Duration = 30 * time.Minute
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c
}

// EstateTable is one table of the estate as run.
type EstateTable struct {
	Name  string `json:"name"`
	Class string `json:"class"`
	Rows  int    `json:"rows"`
	// Rank is its Zipf rank (1 the busiest); Hot marks the Hot busiest.
	Rank int  `json:"rank"`
	Hot  bool `json:"hot"`
	// Events are the updates produced to it in the measured phase.
	Events int    `json:"events"`
	Dir    string `json:"dir"`
	// LiveFiles and LiveDVs are its live data files and deletion vectors
	// at the end; OptimalFiles what OPTIMIZE would leave.
	LiveFiles    int `json:"live_files"`
	LiveDVs      int `json:"live_dvs"`
	OptimalFiles int `json:"optimal_files"`
}

// LagSample is the consumer group's lag (records produced and not yet
// committed, over all partitions) at a moment of the measured phase.
type LagSample struct {
	Seconds float64 `json:"seconds"`
	Records int64   `json:"records"`
}

// EstateResult is what one RunEstate measured. Times are in seconds.
type EstateResult struct {
	Tables int   `json:"tables"`
	Rows   int64 `json:"rows"`
	// LoadSeconds is the bulk load of every table (merge.Load, the
	// library of `cdc2delta load`), LoadRowsPerSecond its rate.
	LoadSeconds       float64 `json:"load_seconds"`
	LoadRowsPerSecond float64 `json:"load_rows_per_second"`
	// OpenSeconds is from starting the measured run over the loaded
	// tables to /readyz naming every table.
	OpenSeconds float64 `json:"open_seconds"`
	Seconds     float64 `json:"seconds"`
	Events      int     `json:"events"`
	// EventsPerSecond is the rate the source kept, Rate at most.
	EventsPerSecond float64 `json:"events_per_second"`
	// DrainSeconds is from the last event produced to every partition's
	// offset committed; Lag samples the group's lag every LagEvery.
	DrainSeconds float64     `json:"drain_seconds"`
	Lag          []LagSample `json:"lag"`
	// CPUSeconds is the run's CPU time (user+system) from the phase's
	// start to the end of the drain; Cores divides it by that time.
	CPUSeconds float64 `json:"cpu_seconds"`
	Cores      float64 `json:"cores"`
	// PeakRSSBytes is the run's VmHWM at the end of the drain: its peak
	// resident set since it started (the open included).
	PeakRSSBytes uint64 `json:"peak_rss_bytes"`
	// Freshness is source commit to visible in Delta, for the sampled
	// events of the hot tables, of the others, and of each class.
	FreshnessHot   *Latency            `json:"freshness_hot"`
	FreshnessRest  *Latency            `json:"freshness_rest"`
	FreshnessClass map[string]*Latency `json:"freshness_class"`
	// FreshnessMinutes is the freshness of every sampled event by the
	// minute of the phase it was produced in: a queue at the start (the
	// open's upkeep) and one that builds show apart.
	FreshnessMinutes []*Latency `json:"freshness_minutes,omitempty"`
	// SourceHot is, for the hot tables' sampled events, from the event's
	// source commit time to Kafka's acknowledgement of its produce (of
	// the produce call that carried it, an upper bound): the part of
	// their freshness that the source and the broker take, on the same
	// machine, before cdc2delta can fetch them.
	SourceHot *Latency `json:"source_hot,omitempty"`
	// KillRestartSeconds is from SIGKILL of the run to a new run's /readyz
	// naming every table.
	KillRestartSeconds float64 `json:"kill_restart_seconds"`
	// Memory samples the run's resident set and the Go runtime's share of
	// it every few seconds from its start (the open included) to the end
	// of the drain; MemoryPeak is the sample of the highest resident set.
	Memory     []MemSample `json:"memory,omitempty"`
	MemoryPeak *MemSample  `json:"memory_peak,omitempty"`
	// IO is the measured phase's I/O (nil if /proc does not tell).
	IO *EstateIO `json:"io,omitempty"`
	// Phase is what the run's histograms gained over the measured phase:
	// commits and their summed seconds, and upkeep seconds by kind.
	Phase *EstatePhase `json:"phase,omitempty"`
	// Metrics are the run's cdc2delta_* counters at the end of the drain.
	Metrics     map[string]float64 `json:"metrics,omitempty"`
	TableStates []EstateTable      `json:"table_states"`
}

// estateFreshnessSamples bounds the events whose freshness is measured:
// each table keeps every k-th event so that it keeps about its share.
const estateFreshnessSamples = 2_000_000

// estateLoadLSN is the position the bulk load stands at; every event of
// the run comes after it.
var estateLoadLSN = dbzgen.MakeLSN(0x10, 0x10, 1)

// RunEstate loads every table in bulk, runs the binary over them and
// measures while it produces the Zipf stream for Duration; then it kills
// the run with SIGKILL and times a new run to ready, and reads every
// table's log for the freshness. The full-scan read times are the
// caller's (they need a Python reader).
func RunEstate(ctx context.Context, cfg EstateConfig) (res EstateResult, err error) {
	cfg = cfg.withDefaults()
	if cfg.Binary == "" || cfg.Root == "" {
		return res, fmt.Errorf("%w: Binary and Root are required", ErrConfig)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(cfg.Log, "estate: "+format+"\n", args...) }
	if err := newOutputDir(cfg.Root); err != nil {
		return res, err
	}
	src, err := newEstateSource(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer src.close()
	tablesDir := filepath.Join(cfg.Root, "tables")
	res.Tables = len(src.tables)
	for i, tb := range src.tables {
		d := tb.Def()
		src.states[i].Dir = filepath.Join(tablesDir, d.Database, d.Schema, d.Name)
		res.Rows += int64(src.states[i].Rows)
	}
	cfgPath, listen, err := writeEstateConfig(cfg, src, tablesDir)
	if err != nil {
		return res, err
	}

	// 1. One event per table has the pipeline create it (and its change log).
	logf("%d tables: creating them", len(src.tables))
	if err := src.produceCreates(ctx); err != nil {
		return res, err
	}
	create, err := startManyRun(cfg.Binary, cfgPath, filepath.Join(cfg.Root, "run-create.log"))
	if err != nil {
		return res, err
	}
	defer create.stop()
	if err := src.waitAllApplied(ctx, create, 10*time.Minute); err != nil {
		return res, err
	}
	if err := create.terminate(2 * time.Minute); err != nil {
		return res, err
	}

	// 2. Bulk load each table at a position below every event.
	logf("loading %d rows in bulk", res.Rows)
	t0 := time.Now()
	for i := range src.states {
		if err := loadEstateTable(ctx, src.states[i].Dir, src.states[i].Rows, cfg.Seed+uint64(i)); err != nil {
			return res, fmt.Errorf("loading %s: %w", src.states[i].Name, err)
		}
	}
	res.LoadSeconds = time.Since(t0).Seconds()
	res.LoadRowsPerSecond = float64(res.Rows) / res.LoadSeconds
	logf("loaded in %.1fs (%.0f rows/s)", res.LoadSeconds, res.LoadRowsPerSecond)

	// 3. The measured run.
	run, err := startManyRun(cfg.Binary, cfgPath, filepath.Join(cfg.Root, "run-1.log"))
	if err != nil {
		return res, err
	}
	defer run.stop()
	t0 = time.Now()
	memCtx, stopMem := context.WithCancel(ctx)
	defer stopMem()
	memDone := make(chan []MemSample, 1)
	go func() { memDone <- watchMemory(memCtx, run.cmd.Process.Pid, listen, t0, memoryEvery) }()
	if err := waitReady(ctx, run, listen, len(src.tables), 30*time.Minute); err != nil {
		return res, err
	}
	res.OpenSeconds = time.Since(t0).Seconds()
	logf("open in %.1fs; measuring %v at %.0f events/s", res.OpenSeconds, cfg.Duration, cfg.Rate)
	cpu0, err := run.cpu()
	if err != nil {
		return res, err
	}
	io0, ioErr := markIO(run.cmd.Process.Pid, tablesDir)
	metrics0 := scrapeMetrics(ctx, listen)
	start := time.Now()
	lagCtx, stopLag := context.WithCancel(ctx)
	lagDone := make(chan []LagSample, 1)
	go func() { lagDone <- src.sampleLag(lagCtx, start, lagEvery(cfg.Duration)) }()
	sent, err := src.produceZipf(ctx, cfg, start)
	if err != nil {
		stopLag()
		return res, err
	}
	last := time.Now()
	res.Seconds = last.Sub(start).Seconds()
	err = src.waitAllApplied(ctx, run, 10*time.Minute)
	res.DrainSeconds = time.Since(last).Seconds()
	stopLag()
	res.Lag = <-lagDone
	if err != nil {
		return res, err
	}
	cpu1, err := run.cpu()
	if err != nil {
		return res, err
	}
	res.CPUSeconds = (cpu1 - cpu0).Seconds()
	res.Cores = res.CPUSeconds / time.Since(start).Seconds()
	res.PeakRSSBytes = procPeakRSS(run.cmd.Process.Pid)
	if io1, err := markIO(run.cmd.Process.Pid, tablesDir); err == nil && ioErr == nil {
		res.IO = ioBetween(io0, io1)
	}
	stopMem()
	res.Memory = <-memDone
	res.MemoryPeak = peakSample(res.Memory)
	res.Metrics = scrapeMetrics(ctx, listen)
	res.Phase = phaseOf(metrics0, res.Metrics)
	for _, st := range src.states {
		res.Events += st.Events
	}
	res.EventsPerSecond = float64(res.Events) / res.Seconds
	logf("%d events in %.0fs, drained in %.1fs, %.2f cores, peak RSS %.0f MiB",
		res.Events, res.Seconds, res.DrainSeconds, res.Cores, float64(res.PeakRSSBytes)/(1<<20))

	// 4. SIGKILL and back to ready.
	if err := run.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return res, fmt.Errorf("killing the run: %w", err)
	}
	killed := time.Now()
	<-run.done
	again, err := startManyRun(cfg.Binary, cfgPath, filepath.Join(cfg.Root, "run-2.log"))
	if err != nil {
		return res, err
	}
	defer again.stop()
	if err := waitReady(ctx, again, listen, len(src.tables), 10*time.Minute); err != nil {
		return res, err
	}
	res.KillRestartSeconds = time.Since(killed).Seconds()
	logf("killed and ready again in %.1fs", res.KillRestartSeconds)
	if err := again.terminate(2 * time.Minute); err != nil {
		return res, err
	}

	// 5. Freshness and files, from the tables.
	if err := src.readTables(ctx, &res, sent, start); err != nil {
		return res, err
	}
	res.TableStates = src.states
	logf("done: %s", res.Summary())
	return res, nil
}

// Summary renders the headline figures on one line.
func (r EstateResult) Summary() string {
	s := fmt.Sprintf("%d tables, %d rows, %d events in %.0fs: drain %.1fs, %.2f cores, peak RSS %.0f MiB, kill to ready %.1fs",
		r.Tables, r.Rows, r.Events, r.Seconds, r.DrainSeconds, r.Cores, float64(r.PeakRSSBytes)/(1<<20), r.KillRestartSeconds)
	if f := r.FreshnessHot; f != nil {
		s += fmt.Sprintf(", freshness p99 hot %.2fs", f.P99Seconds)
	}
	if f := r.FreshnessRest; f != nil {
		s += fmt.Sprintf(", rest %.2fs", f.P99Seconds)
	}
	return s
}

// lagEvery is the lag's sampling interval: 5 s, or less for a short phase.
func lagEvery(d time.Duration) time.Duration {
	return min(5*time.Second, max(d/20, 250*time.Millisecond))
}

// estateTableDef is every estate table's columns: a bigint key and three
// values, about 100 bytes a row.
func estateTableDef(name string) dbzgen.TableDef {
	return dbzgen.TableDef{
		Database: "estate", Schema: "dbo", Name: name,
		Columns: []dbzgen.Column{
			{Name: "id", Type: "bigint"},
			{Name: "name", Type: "nvarchar(64)"},
			{Name: "qty", Type: "int"},
			{Name: "note", Type: "nvarchar(200)", Nullable: true},
		},
		Key: []string{"id"},
	}
}

// estateRow is key id's row at version v, as the load writes it (v 0) and
// the updates change it.
func estateRow(id int64, v int) (name string, qty int32, note string) {
	return "row-" + strconv.FormatInt(id, 10), int32(v), fmt.Sprintf("note %d of row %d, padded to a realistic width", v, id)
}

// estateSource is the broker (an in-process kfake without Brokers), the
// schema registry and the estate's tables.
type estateSource struct {
	*manySource
	states []EstateTable
	// cdf is each table's cumulative Zipf share, by table index.
	cdf []float64
	lsn uint64
}

func newEstateSource(ctx context.Context, cfg EstateConfig) (_ *estateSource, err error) {
	prefix := "estate" + strconv.FormatInt(time.Now().UnixNano(), 36)
	s := &estateSource{manySource: &manySource{prefix: prefix, group: prefix}}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	var rc *sr.Client
	if s.reg, rc, err = startRegistry(ctx); err != nil {
		return nil, err
	}
	opts := dbzgen.DefaultOptions()
	opts.Prefix = s.prefix
	s.gen = dbzgen.New(rc, opts)
	var topics []string
	for _, c := range cfg.Classes {
		rows := max(c.Rows/cfg.Scale, 2)
		for j := range c.Tables {
			name := fmt.Sprintf("%s_%03d", c.Name, j)
			tb, err := s.gen.Table(estateTableDef(name))
			if err != nil {
				return nil, err
			}
			s.tables = append(s.tables, tb)
			s.states = append(s.states, EstateTable{Name: name, Class: c.Name, Rows: rows})
			topics = append(topics, tb.Topic())
		}
	}
	if len(s.tables) == 0 {
		return nil, fmt.Errorf("%w: the estate has no tables", ErrConfig)
	}
	// Ranks at random, then each table's share 1/rank^s.
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xe57a7e))
	ranks := rng.Perm(len(s.states))
	weights := make([]float64, len(s.states))
	total := 0.0
	for i := range s.states {
		s.states[i].Rank = ranks[i] + 1
		s.states[i].Hot = s.states[i].Rank <= cfg.Hot
		weights[i] = 1 / math.Pow(float64(s.states[i].Rank), cfg.Zipf)
		total += weights[i]
	}
	acc := 0.0
	for _, w := range weights {
		acc += w / total
		s.cdf = append(s.cdf, acc)
	}
	if len(cfg.Brokers) == 0 {
		if s.cluster, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topics...)); err != nil {
			return nil, fmt.Errorf("starting kfake: %w", err)
		}
		cfg.Brokers = s.cluster.ListenAddrs()
	}
	if s.cl, err = kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.ProducerLinger(0),
		kgo.ProducerBatchMaxBytes(4<<20), kgo.MaxBufferedRecords(1<<20),
		kgo.UnknownTopicRetries(100)); err != nil { // a broker takes a while to host 500 new topics
		return nil, err
	}
	s.adm = kadm.NewClient(s.cl)
	if s.cluster == nil {
		if err := s.createTopics(ctx, topics); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// createTopics creates the topics, one partition each, on a real broker,
// and waits until the metadata shows them all.
func (s *estateSource) createTopics(ctx context.Context, topics []string) error {
	for chunk := range slices.Chunk(topics, 100) {
		resp, err := s.adm.CreateTopics(ctx, 1, 1, nil, chunk...)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return fmt.Errorf("creating topics: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		ends, err := s.endOffsets(ctx)
		if err == nil && len(ends) == len(topics) {
			return nil
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for topic metadata: %w", err)
		}
	}
}

// nextLSN returns a new position, above estateLoadLSN and every earlier one.
func (s *estateSource) nextLSN() dbzgen.LSN {
	s.lsn++
	return dbzgen.MakeLSN(0x100+uint32(s.lsn>>40), 0x10+uint32(s.lsn>>12), 1+uint16(s.lsn&0xfff))
}

// produceCreates produces one snapshot read of key 1 per table: the
// pipeline creates the table from it.
func (s *estateSource) produceCreates(ctx context.Context) error {
	var recs []*kgo.Record
	now := time.Now()
	for _, tb := range s.tables {
		name, qty, note := estateRow(1, 0)
		lsn := s.nextLSN()
		ev := dbzgen.Event{Table: tb, Op: dbzgen.OpRead, After: dbzgen.Row{"id": int64(1), "name": name, "qty": qty, "note": note},
			Source: dbzgen.Source{Time: now, Snapshot: "true", CommitLSN: lsn}, ProcessedAt: now}
		key, value, err := s.gen.Encode(ctx, ev)
		if err != nil {
			return err
		}
		recs = append(recs, &kgo.Record{Topic: tb.Topic(), Key: key, Value: value})
	}
	if err := s.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("producing the creating events: %w", err)
	}
	return nil
}

// produceZipf produces cfg.Rate updates a second from start for
// cfg.Duration, each to a table drawn by its Zipf share and a key drawn
// uniformly from the table's rows, stamped with its produce time as
// source commit time. It returns the sampled events for freshness. A
// source that cannot keep the rate produces fewer events (the result's
// Events and EventsPerSecond).
func (s *estateSource) produceZipf(ctx context.Context, cfg EstateConfig, start time.Time) ([]sentIn, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x21bf))
	total := cfg.Rate * cfg.Duration.Seconds()
	stride := make([]int, len(s.states))
	for i := range s.states {
		share := s.cdf[i]
		if i > 0 {
			share -= s.cdf[i-1]
		}
		stride[i] = max(1, int(total*share/(estateFreshnessSamples/float64(len(s.states)))))
	}
	version := make([]map[int64]int, len(s.states))
	for i := range version {
		version[i] = map[int64]int{}
	}
	var out []sentIn
	done := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	type pending struct {
		table int
		at    time.Time
	}
	for {
		elapsed := min(time.Since(start), cfg.Duration)
		due := int(elapsed.Seconds() * cfg.Rate)
		if elapsed >= cfg.Duration {
			return out, nil // a source that fell behind stops on time; Events tells
		}
		// A source that falls behind (a loaded machine) catches up a tenth
		// of a second's events at a time, not in one huge batch.
		due = min(due, done+max(1, int(cfg.Rate/10)))
		var recs []*kgo.Record
		// By record: ProduceSync returns results as they complete, not
		// in the order given.
		meta := map[*kgo.Record]pending{}
		now := time.Now()
		for ; done < due; done++ {
			i, _ := slices.BinarySearch(s.cdf, rng.Float64())
			i = min(i, len(s.states)-1)
			st := &s.states[i]
			id := 1 + rng.Int64N(int64(st.Rows))
			v := version[i][id] + 1
			if len(version[i]) < 1<<16 { // a bounded memory of versions; the values only need to change
				version[i][id] = v
			}
			name, qty, note := estateRow(id, v)
			_, oldQty, oldNote := estateRow(id, v-1)
			lsn := s.nextLSN()
			ev := dbzgen.Event{Table: s.tables[i], Op: dbzgen.OpUpdate,
				Before: dbzgen.Row{"id": id, "name": name, "qty": oldQty, "note": oldNote},
				After:  dbzgen.Row{"id": id, "name": name, "qty": qty, "note": note},
				Source: dbzgen.Source{Time: now, CommitLSN: lsn, ChangeLSN: lsn, SerialNo: 2}, ProcessedAt: now}
			key, value, err := s.gen.Encode(ctx, ev)
			if err != nil {
				return nil, err
			}
			r := &kgo.Record{Topic: s.tables[i].Topic(), Key: key, Value: value}
			recs = append(recs, r)
			meta[r] = pending{table: i, at: now}
		}
		if len(recs) > 0 {
			rs := s.cl.ProduceSync(ctx, recs...)
			if err := rs.FirstErr(); err != nil {
				return nil, fmt.Errorf("producing: %w", err)
			}
			acked := time.Now()
			for _, r := range rs {
				m := meta[r.Record]
				st := &s.states[m.table]
				if st.Events%stride[m.table] == 0 {
					out = append(out, sentIn{sent: sent{cdctable.TopicPartition{Topic: r.Record.Topic, Partition: r.Record.Partition}, r.Record.Offset, m.at}, table: m.table, acked: acked})
				}
				st.Events++
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// sentIn is a sent event, its table's index and when its produce was
// acknowledged.
type sentIn struct {
	sent
	table int
	acked time.Time
}

// sampleLag samples the group's lag every interval until ctx ends.
func (s *estateSource) sampleLag(ctx context.Context, start time.Time, every time.Duration) []LagSample {
	var out []LagSample
	for {
		if err := sleep(ctx, every); err != nil {
			return out
		}
		ends, err := s.endOffsets(ctx)
		if err != nil {
			continue
		}
		offs, err := s.adm.FetchOffsets(ctx, s.group)
		if err != nil {
			continue
		}
		var lag int64
		for tp, end := range ends {
			at := int64(0)
			if o, ok := offs.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil {
				at = o.At
			}
			lag += max(end-at, 0)
		}
		out = append(out, LagSample{Seconds: time.Since(start).Seconds(), Records: lag})
	}
}

// readTables reads every table's log for the freshness of the sampled
// events, by hot and rest, by class and by minute of the phase (which
// began at start), and its live files.
func (s *estateSource) readTables(ctx context.Context, res *EstateResult, events []sentIn, start time.Time) error {
	tl := timelines{}
	for i, tb := range s.tables {
		st := &s.states[i]
		store, err := localstore.New(localstore.Options{Dir: st.Dir, NoSync: true})
		if err != nil {
			return err
		}
		if _, err := tl.read(ctx, store, []cdctable.TopicPartition{{Topic: tb.Topic()}}); err != nil {
			return fmt.Errorf("table %s: %w", st.Name, err)
		}
		lf, err := liveFiles(ctx, store)
		if err != nil {
			return fmt.Errorf("table %s: %w", st.Name, err)
		}
		st.LiveFiles, st.LiveDVs, st.OptimalFiles = lf.files, lf.dvs, lf.optimal
	}
	var hot, rest []sent
	var source []time.Duration
	byClass := map[string][]sent{}
	for _, e := range events {
		st := s.states[e.table]
		if st.Hot {
			hot = append(hot, e.sent)
			source = append(source, e.acked.Sub(e.at))
		} else {
			rest = append(rest, e.sent)
		}
		byClass[st.Class] = append(byClass[st.Class], e.sent)
	}
	var err error
	if len(hot) > 0 {
		if res.FreshnessHot, err = tl.latency(hot); err != nil {
			return err
		}
	}
	if len(source) > 0 {
		res.SourceHot = latencyOf(source)
	}
	if len(rest) > 0 {
		if res.FreshnessRest, err = tl.latency(rest); err != nil {
			return err
		}
	}
	res.FreshnessClass = map[string]*Latency{}
	for c, evs := range byClass {
		if res.FreshnessClass[c], err = tl.latency(evs); err != nil {
			return err
		}
	}
	var byMinute [][]sent
	for _, e := range events {
		m := max(int(e.at.Sub(start)/time.Minute), 0)
		for len(byMinute) <= m {
			byMinute = append(byMinute, nil)
		}
		byMinute[m] = append(byMinute[m], e.sent)
	}
	for _, evs := range byMinute {
		var l *Latency
		if len(evs) > 0 {
			if l, err = tl.latency(evs); err != nil {
				return err
			}
		}
		res.FreshnessMinutes = append(res.FreshnessMinutes, l)
	}
	return nil
}

// loadEstateTable loads rows 1..rows into the table at dir with
// merge.Load at estateLoadLSN; row 1, which the creating event wrote
// above that position, is left out as newer.
func loadEstateTable(ctx context.Context, dir string, rows int, _ uint64) error {
	store, err := localstore.New(localstore.Options{Dir: dir})
	if err != nil {
		return err
	}
	lsn, err := codecs.ParseLSN(estateLoadLSN.String())
	if err != nil {
		return err
	}
	pos := codecs.Position{Commit: lsn, Serial: math.MaxInt64}
	for i := range pos.Change {
		pos.Change[i] = 0xff
	}
	next := int64(1)
	_, err = merge.Load(ctx, store, merge.LoadOptions{
		Position: pos, Columns: []string{"id", "name", "qty", "note"},
		Next: func(_ context.Context, n int) ([][]any, error) {
			out := make([][]any, 0, min(int64(n), int64(rows)-next+1))
			for ; next <= int64(rows) && len(out) < n; next++ {
				name, qty, note := estateRow(next, 0)
				out = append(out, []any{next, name, qty, note})
			}
			return out, nil
		},
	})
	return err
}

// writeEstateConfig writes the run's configuration: the broker, the
// tables with their change logs, the control table, maintenance and the
// key index as cfg asks, then cfg.ExtraYAML.
func writeEstateConfig(cfg EstateConfig, s *estateSource, tablesDir string) (string, string, error) {
	brokers := cfg.Brokers
	if s.cluster != nil {
		brokers = s.cluster.ListenAddrs()[:1]
	}
	var extra strings.Builder
	if cfg.Control {
		fmt.Fprintf(&extra, "control: {path: %q}\n", filepath.ToSlash(filepath.Join(cfg.Root, "control")))
	}
	if !cfg.Maintenance {
		extra.WriteString("maintenance: {enabled: false}\n")
	}
	if cfg.KeyIndex != "" {
		fmt.Fprintf(&extra, "memory: {key_index: %s}\n", cfg.KeyIndex)
	}
	extra.WriteString(cfg.ExtraYAML)
	path := filepath.Join(cfg.Root, "cdc2delta.yaml")
	listen, err := writeRunConfig(path, runConfig{brokers: brokers, group: s.group,
		topicRegex: `^` + regexp.QuoteMeta(s.prefix) + `\..*`, registry: s.reg.URL(), tablesDir: tablesDir,
		changeLog: cfg.ChangeLog, instanceID: cfg.InstanceID}, extra.String())
	return path, listen, err
}

// procPeakRSS is a process's peak resident set (VmHWM), 0 if unknown.
func procPeakRSS(pid int) uint64 { return statusHWM(procstatus.Of(pid)) }
