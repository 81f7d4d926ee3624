package e2ebench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// Scenarios of RunMany.
const (
	// ScenarioTrickle sends each table Rate updates per second, evenly
	// spread, the tables out of phase.
	ScenarioTrickle = "trickle"
	// ScenarioBurst sends each table BurstSize updates at once every
	// BurstEvery, the tables out of phase.
	ScenarioBurst = "burst"
)

// ManyConfig shapes RunMany: many small tables, one partition each, fed by
// an in-process Kafka (kfake) and consumed by a `cdc2delta run` process.
type ManyConfig struct {
	// Binary is the cdc2delta executable to run. Required.
	Binary string
	// ExtraYAML is appended to the run's configuration file (the policy
	// under test: batch, commits, maintenance sections).
	ExtraYAML string
	// Tables is the number of source tables (default 10).
	Tables int
	// Rows is each table's snapshot size (default 2,000).
	Rows int
	// Scenario is ScenarioTrickle (default) or ScenarioBurst.
	Scenario string
	// Rate is the trickle's updates per second per table (default 1).
	Rate float64
	// BurstSize and BurstEvery shape the burst scenario (default 100
	// updates every 10s).
	BurstSize  int
	BurstEvery time.Duration
	// Duration is the measured phase (default 60s).
	Duration time.Duration
	// Root holds the tables and the run's files; it must be empty or
	// missing. Required.
	Root string
	// Seed makes the workloads reproducible.
	Seed uint64
	// Log receives progress lines (nil: none).
	Log io.Writer
}

func (c ManyConfig) withDefaults() ManyConfig {
	if c.Tables == 0 {
		c.Tables = 10
	}
	if c.Rows == 0 {
		c.Rows = 2000
	}
	if c.Scenario == "" {
		c.Scenario = ScenarioTrickle
	}
	if c.Rate == 0 {
		c.Rate = 1
	}
	if c.BurstSize == 0 {
		c.BurstSize = 100
	}
	if c.BurstEvery == 0 {
		c.BurstEvery = 10 * time.Second
	}
	if c.Duration == 0 {
		c.Duration = time.Minute
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c
}

// ManyResult is what one RunMany measured. Times are in seconds.
type ManyResult struct {
	Tables   int     `json:"tables"`
	Rows     int     `json:"rows"`
	Scenario string  `json:"scenario"`
	Seconds  float64 `json:"seconds"`
	// Events is the updates produced in the measured phase.
	Events int `json:"events"`
	// Commits counts the versions committed (over all tables) from the
	// phase's start until its last event was visible; VersionsPerTableMinute
	// divides them by tables and the phase's minutes.
	Commits                int     `json:"commits"`
	VersionsPerTableMinute float64 `json:"versions_per_table_minute"`
	// FilesCreated and BytesCreated count the files that appeared under the
	// tables in the same window, by kind (data, dv, log, checkpoint, other).
	FilesCreated int            `json:"files_created"`
	BytesCreated int64          `json:"bytes_created"`
	FilesByKind  map[string]int `json:"files_by_kind"`
	// CPUSeconds is the run process's CPU time (user+system) over the
	// phase; CPUShare divides it by the phase's length (1 = one core).
	CPUSeconds float64 `json:"cpu_seconds"`
	CPUShare   float64 `json:"cpu_share"`
	// Freshness is source commit (the event's time, set as it is
	// produced) to visible in Delta (the commitInfo timestamp).
	Freshness *Latency `json:"freshness"`
	// LiveFiles and LiveDVs are the live data files and deletion vectors per
	// table at the end (mean and max); OptimalFiles is what OPTIMIZE would
	// leave (mean): per partition the live bytes over the target size,
	// rounded up.
	LiveFilesMean float64 `json:"live_files_mean"`
	LiveFilesMax  int     `json:"live_files_max"`
	LiveDVsMean   float64 `json:"live_dvs_mean"`
	OptimalFiles  float64 `json:"optimal_files_mean"`
	// RestartSeconds is from starting a new run process over the tables to
	// /readyz answering 200 with every table open.
	RestartSeconds float64 `json:"restart_seconds"`
	// ShutdownSeconds is how long the first run took to stop on SIGTERM.
	ShutdownSeconds float64 `json:"shutdown_seconds"`
	// Metrics are the run's cdc2delta_* counters at the end of the phase,
	// summed over labels other than the ones kept (see scrapeMetrics).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// TableDirs are the tables' directories.
	TableDirs []string `json:"table_dirs"`
}

// RunMany produces every table's snapshot, runs the binary until it has
// applied them, then produces the scenario's updates for Duration while it
// runs, measures, stops it with SIGTERM, and measures a restart.
func RunMany(ctx context.Context, cfg ManyConfig) (res ManyResult, err error) {
	cfg = cfg.withDefaults()
	if cfg.Binary == "" || cfg.Root == "" {
		return res, fmt.Errorf("%w: Binary and Root are required", ErrConfig)
	}
	if cfg.Scenario != ScenarioTrickle && cfg.Scenario != ScenarioBurst {
		return res, fmt.Errorf("%w: scenario %q is not %s or %s", ErrConfig, cfg.Scenario, ScenarioTrickle, ScenarioBurst)
	}
	res = ManyResult{Tables: cfg.Tables, Rows: cfg.Rows, Scenario: cfg.Scenario}
	logf := func(format string, args ...any) {
		fmt.Fprintf(cfg.Log, "many: "+format+"\n", args...)
	}
	if err := newOutputDir(cfg.Root); err != nil {
		return res, err
	}
	src, err := newManySource(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer src.close()
	tablesDir := filepath.Join(cfg.Root, "tables")
	for _, tb := range src.tables {
		d := tb.Def()
		res.TableDirs = append(res.TableDirs, filepath.Join(tablesDir, d.Database, d.Schema, d.Name))
	}
	cfgPath, listen, err := writeManyConfig(cfg, src, tablesDir)
	if err != nil {
		return res, err
	}

	logf("%d tables: producing %d snapshot rows each", cfg.Tables, cfg.Rows)
	if err := src.produceSnapshots(ctx, cfg.Rows); err != nil {
		return res, err
	}
	run, err := startManyRun(cfg.Binary, cfgPath, filepath.Join(cfg.Root, "run-1.log"))
	if err != nil {
		return res, err
	}
	defer run.stop()
	if err := src.waitAllApplied(ctx, run, 10*time.Minute); err != nil {
		return res, err
	}
	logf("snapshots applied; measuring %s for %v", cfg.Scenario, cfg.Duration)

	before, err := walkFiles(tablesDir)
	if err != nil {
		return res, err
	}
	cpu0, err := run.cpu()
	if err != nil {
		return res, err
	}
	start := time.Now()
	sent, err := src.produceScenario(ctx, cfg, start)
	if err != nil {
		return res, err
	}
	cpu1, err := run.cpu()
	if err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.Events = len(sent)
	res.CPUSeconds = (cpu1 - cpu0).Seconds()
	res.CPUShare = res.CPUSeconds / res.Seconds
	if err := src.waitAllApplied(ctx, run, 5*time.Minute); err != nil {
		return res, err
	}
	res.Metrics = scrapeMetrics(ctx, listen)
	after, err := walkFiles(tablesDir)
	if err != nil {
		return res, err
	}
	res.FilesByKind = map[string]int{}
	for p, size := range after {
		if _, ok := before[p]; ok {
			continue
		}
		res.FilesCreated++
		res.BytesCreated += size
		res.FilesByKind[fileKind(p)]++
	}

	stopAt := time.Now()
	if err := run.terminate(2 * time.Minute); err != nil {
		return res, err
	}
	res.ShutdownSeconds = time.Since(stopAt).Seconds()

	tl := timelines{}
	parts := make([]cdctable.TopicPartition, 0, len(src.tables))
	for _, tb := range src.tables {
		parts = append(parts, cdctable.TopicPartition{Topic: tb.Topic()})
	}
	for i, dir := range res.TableDirs {
		store, err := localstore.New(localstore.Options{Dir: dir, NoSync: true})
		if err != nil {
			return res, err
		}
		if _, err := tl.read(ctx, store, parts[i:i+1]); err != nil {
			return res, err
		}
		n, err := commitsSince(ctx, store, start)
		if err != nil {
			return res, err
		}
		res.Commits += n
		lf, err := liveFiles(ctx, store)
		if err != nil {
			return res, fmt.Errorf("table %s: %w", dir, err)
		}
		res.LiveFilesMean += float64(lf.files) / float64(cfg.Tables)
		res.LiveDVsMean += float64(lf.dvs) / float64(cfg.Tables)
		res.OptimalFiles += float64(lf.optimal) / float64(cfg.Tables)
		res.LiveFilesMax = max(res.LiveFilesMax, lf.files)
	}
	res.VersionsPerTableMinute = float64(res.Commits) / float64(cfg.Tables) / (res.Seconds / 60)
	if res.Freshness, err = tl.latency(sent); err != nil {
		return res, err
	}

	logf("restarting over %d tables", cfg.Tables)
	restart, err := startManyRun(cfg.Binary, cfgPath, filepath.Join(cfg.Root, "run-2.log"))
	if err != nil {
		return res, err
	}
	defer restart.stop()
	t0 := time.Now()
	if err := waitReady(ctx, restart, listen, cfg.Tables, 10*time.Minute); err != nil {
		return res, err
	}
	res.RestartSeconds = time.Since(t0).Seconds()
	if err := restart.terminate(2 * time.Minute); err != nil {
		return res, err
	}
	logf("done: %s", res.Summary())
	return res, nil
}

// Summary renders the headline figures on one line.
func (r ManyResult) Summary() string {
	s := fmt.Sprintf("%d tables %s: %.1f versions/table/min, %d files created, CPU %.0f%% of a core, live files %.1f (optimal %.1f), restart %.1fs",
		r.Tables, r.Scenario, r.VersionsPerTableMinute, r.FilesCreated, 100*r.CPUShare, r.LiveFilesMean, r.OptimalFiles, r.RestartSeconds)
	if f := r.Freshness; f != nil {
		s += fmt.Sprintf(", freshness p50 %.2fs p99 %.2fs", f.P50Seconds, f.P99Seconds)
	}
	return s
}

// manySource is the in-process Kafka, the schema registry, one workload per
// table and the producer.
type manySource struct {
	cluster *kfake.Cluster
	reg     *registry.Registry
	gen     *dbzgen.Generator
	tables  []*dbzgen.Table
	loads   []*dbzgen.Workload
	cl      *kgo.Client
	adm     *kadm.Client
	prefix  string
	group   string
}

func newManySource(ctx context.Context, cfg ManyConfig) (_ *manySource, err error) {
	s := &manySource{prefix: "many", group: fmt.Sprintf("many-%d", time.Now().UnixNano())}
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
	for i := range cfg.Tables {
		def := dbzgen.Customers()
		def.Name = fmt.Sprintf("t%03d", i)
		tb, err := s.gen.Table(def)
		if err != nil {
			return nil, err
		}
		w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: cfg.Seed + uint64(i), Keys: cfg.Rows, Snapshot: true, DeleteRatio: -1}, tb)
		if err != nil {
			return nil, err
		}
		s.tables = append(s.tables, tb)
		s.loads = append(s.loads, w)
		topics = append(topics, tb.Topic())
	}
	if s.cluster, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topics...)); err != nil {
		return nil, fmt.Errorf("starting kfake: %w", err)
	}
	if s.cl, err = kgo.NewClient(kgo.SeedBrokers(s.cluster.ListenAddrs()...), kgo.ProducerLinger(0)); err != nil {
		return nil, err
	}
	s.adm = kadm.NewClient(s.cl)
	return s, nil
}

func (s *manySource) close() {
	if s.cl != nil {
		s.cl.Close()
	}
	if s.cluster != nil {
		s.cluster.Close()
	}
	if s.reg != nil {
		_ = s.reg.Close() // best effort at the end of a run
	}
}

// produceSnapshots produces every table's snapshot events: one op=r
// event per key.
func (s *manySource) produceSnapshots(ctx context.Context, rows int) error {
	for _, w := range s.loads {
		recs := make([]*kgo.Record, 0, rows)
		for range rows {
			ev := w.Next()
			key, value, err := s.gen.Encode(ctx, ev)
			if err != nil {
				return err
			}
			recs = append(recs, &kgo.Record{Topic: ev.Table.Topic(), Key: key, Value: value})
		}
		if err := s.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("producing snapshots: %w", err)
		}
	}
	return nil
}

// produceScenario produces the scenario's updates from start for
// cfg.Duration, each stamped with its produce time as source commit time.
func (s *manySource) produceScenario(ctx context.Context, cfg ManyConfig, start time.Time) ([]sent, error) {
	n := len(s.tables)
	// due returns how many events table i should have sent by elapsed.
	due := func(i int, elapsed time.Duration) int {
		phase := float64(i) / float64(n)
		if cfg.Scenario == ScenarioTrickle {
			return int(elapsed.Seconds()*cfg.Rate + 1 - phase)
		}
		bursts := int(elapsed.Seconds()/cfg.BurstEvery.Seconds() + 1 - phase)
		return max(bursts, 0) * cfg.BurstSize
	}
	done := make([]int, n)
	var out []sent
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		elapsed := min(time.Since(start), cfg.Duration)
		var recs []*kgo.Record
		at := map[*kgo.Record]time.Time{}
		for i, w := range s.loads {
			for ; done[i] < due(i, elapsed); done[i]++ {
				ev := w.Next()
				now := time.Now()
				ev.Source.Time = now
				key, value, err := s.gen.Encode(ctx, ev)
				if err != nil {
					return nil, err
				}
				r := &kgo.Record{Topic: ev.Table.Topic(), Key: key, Value: value}
				recs = append(recs, r)
				at[r] = now
			}
		}
		if len(recs) > 0 {
			rs := s.cl.ProduceSync(ctx, recs...)
			if err := rs.FirstErr(); err != nil {
				return nil, fmt.Errorf("producing: %w", err)
			}
			for _, r := range rs {
				out = append(out, sent{cdctable.TopicPartition{Topic: r.Record.Topic, Partition: r.Record.Partition}, r.Record.Offset, at[r.Record]})
			}
		}
		if elapsed >= cfg.Duration {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

func (s *manySource) endOffsets(ctx context.Context) (map[cdctable.TopicPartition]int64, error) {
	var topics []string
	for _, tb := range s.tables {
		topics = append(topics, tb.Topic())
	}
	ends, err := s.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("listing end offsets: %w", err)
	}
	out := map[cdctable.TopicPartition]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		out[cdctable.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.Offset
	})
	return out, nil
}

// waitAllApplied waits until run has applied every record produced so far.
func (s *manySource) waitAllApplied(ctx context.Context, run *manyRun, timeout time.Duration) error {
	ends, err := s.endOffsets(ctx)
	if err != nil {
		return err
	}
	return s.waitApplied(ctx, run, ends, timeout)
}

// waitApplied waits until the group's offsets (the txn + 1 of each table)
// reach ends.
func (s *manySource) waitApplied(ctx context.Context, run *manyRun, ends map[cdctable.TopicPartition]int64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if err := run.exited(); err != nil {
			return err
		}
		offs, err := s.adm.FetchOffsets(ctx, s.group)
		if err == nil && committedAll(offs, ends) {
			return nil
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("%w: %w (log: %s)", ErrCatchUp, err, run.logPath)
		}
	}
}

// newOutputDir makes root, which must hold nothing yet: a table left by an
// earlier run would take this run's offsets, which start again at 0, as
// replays of what it already holds.
func newOutputDir(root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if des, err := os.ReadDir(root); err != nil || len(des) > 0 {
		return fmt.Errorf("%w: %s is not empty (%v): an earlier run's tables would skip this run's records; use a new output directory", ErrConfig, root, err)
	}
	return nil
}

// writeManyConfig writes the run's configuration and returns its path and
// the metrics listener's address.
func writeManyConfig(cfg ManyConfig, s *manySource, tablesDir string) (string, string, error) {
	path := filepath.Join(cfg.Root, "cdc2delta.yaml")
	listen, err := writeRunConfig(path, runConfig{brokers: s.cluster.ListenAddrs()[:1], group: s.group,
		topicRegex: `^` + regexp.QuoteMeta(s.prefix) + `\..*`, registry: s.reg.URL(), tablesDir: tablesDir}, cfg.ExtraYAML)
	return path, listen, err
}

// runConfig is what a `cdc2delta run` configuration file of a benchmark
// names.
type runConfig struct {
	brokers                                []string
	group, topicRegex, registry, tablesDir string
	// changeLog turns on every table's change log.
	changeLog bool
	// instanceID is kafka.instance_id (static membership); empty: none.
	instanceID string
}

// writeRunConfig writes c, then extra, to path, with a metrics listener on
// a free loopback port, and returns the listener's address.
func writeRunConfig(path string, c runConfig, extra string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	listen := ln.Addr().String()
	_ = ln.Close() // the run listens on it; a race for the port is unlikely here
	kafkaExtra := ""
	if c.instanceID != "" {
		kafkaExtra = fmt.Sprintf("\n  instance_id: %q", c.instanceID)
	}
	defaults := ""
	if c.changeLog {
		defaults = ", defaults: {change_log: true}"
	}
	brokers := make([]string, len(c.brokers))
	for i, b := range c.brokers {
		brokers[i] = strconv.Quote(b)
	}
	yaml := fmt.Sprintf(`kafka:
  brokers: [%s]
  group_id: %q
  topic_regex: '%s'%s
schema_registry: {url: %q}
tables: {path: %q%s}
metrics: {listen: %q}
log: {level: info}
`, strings.Join(brokers, ", "), c.group, c.topicRegex, kafkaExtra, c.registry, filepath.ToSlash(c.tablesDir)+"/{database}/{schema}/{table}", defaults, listen)
	return listen, os.WriteFile(path, []byte(yaml+extra), 0o644)
}

// manyRun is one `cdc2delta run` process.
type manyRun struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
}

func startManyRun(bin, cfgPath, logPath string) (*manyRun, error) {
	return startCmd(exec.Command(bin, "run", "--config", cfgPath), logPath)
}

// startCmd starts cmd with its output to logPath.
func startCmd(cmd *exec.Cmd, logPath string) (*manyRun, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	r := &manyRun{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		logf.Close()
		close(r.done)
	}()
	return r, nil
}

// exited returns an error when the process has ended.
func (r *manyRun) exited() error {
	select {
	case <-r.done:
		return fmt.Errorf("run exited: %v (log: %s)", r.err, r.logPath)
	default:
		return nil
	}
}

// cpu is the process's user+system time so far, from /proc.
func (r *manyRun) cpu() (time.Duration, error) { return procCPU(r.cmd.Process.Pid) }

// procCPU is a process's user+system time so far, from /proc.
func procCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("reading the run's CPU time: %w", err)
	}
	end := bytes.LastIndexByte(data, ')')
	f := bytes.Fields(data[end+1:])
	if end < 0 || len(f) < 13 {
		return 0, fmt.Errorf("reading the run's CPU time: malformed stat %q", data)
	}
	var ticks int64
	for _, i := range []int{11, 12} { // utime, stime (fields 14 and 15)
		v, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reading the run's CPU time: %w", err)
		}
		ticks += v
	}
	return time.Duration(ticks) * (time.Second / 100), nil // USER_HZ is 100 on Linux
}

// terminate sends SIGTERM and waits for the process to exit cleanly.
func (r *manyRun) terminate(timeout time.Duration) error {
	if err := r.exited(); err != nil {
		return err
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-r.done:
	case <-time.After(timeout):
		r.stop()
		return fmt.Errorf("run did not stop within %v of SIGTERM (log: %s)", timeout, r.logPath)
	}
	if r.err != nil {
		return fmt.Errorf("run failed: %v (log: %s)", r.err, r.logPath)
	}
	return nil
}

// stop kills the process if it still runs.
func (r *manyRun) stop() {
	select {
	case <-r.done:
	default:
		_ = r.cmd.Process.Kill() // already stopping
		<-r.done
	}
}

// readyLine matches /readyz's ready answer.
var readyLine = regexp.MustCompile(`^ready: (\d+) partitions?, (\d+) tables?\b`)

// waitReady polls /readyz until it answers 200 naming every table.
func waitReady(ctx context.Context, r *manyRun, listen string, tables int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := "http://" + listen + "/readyz"
	last := ""
	for {
		if err := r.exited(); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = string(body)
			if m := readyLine.FindStringSubmatch(last); resp.StatusCode == http.StatusOK && m != nil && m[2] == strconv.Itoa(tables) {
				return nil
			}
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return fmt.Errorf("not ready after %v: %q (log: %s)", timeout, firstLines(last, 3), r.logPath)
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// metricLabels are the labels scrapeMetrics keeps in a series' name.
var metricLabels = []string{"reason", "op", "kind", "result"}

// scrapeMetrics reads the run's cdc2delta_* counters and gauges, summed
// over the other labels; nil when /metrics does not answer.
func scrapeMetrics(ctx context.Context, listen string) map[string]float64 {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+listen+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	series := regexp.MustCompile(`^(cdc2delta_[a-z_]+)(\{[^}]*\})? ([0-9.eE+-]+|NaN)$`)
	for sc.Scan() {
		m := series.FindStringSubmatch(sc.Text())
		if m == nil || strings.HasSuffix(m[1], "_bucket") {
			continue
		}
		name := m[1]
		for _, l := range metricLabels {
			if v := regexp.MustCompile(`\b` + l + `="([^"]*)"`).FindStringSubmatch(m[2]); v != nil {
				name += "{" + l + "=" + v[1] + "}"
			}
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err == nil {
			out[name] += v
		}
	}
	return out
}

// walkFiles maps every file under dir to its size.
func walkFiles(dir string) (map[string]int64, error) {
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil //nolint:nilerr // removed meanwhile (log cleanup, vacuum)
		}
		out[p] = info.Size()
		return nil
	})
	return out, err
}

// fileKind classifies a table file by its path.
func fileKind(p string) string {
	base := filepath.Base(p)
	switch {
	case strings.Contains(p, "/_delta_log/") && strings.HasSuffix(base, ".checkpoint.parquet"),
		strings.Contains(p, "/_delta_log/") && base == "_last_checkpoint":
		return "checkpoint"
	case strings.Contains(p, "/_delta_log/") && strings.HasSuffix(base, ".json"):
		return "log"
	case strings.HasPrefix(base, "deletion_vector_"):
		return "dv"
	case strings.Contains(p, "/_cdc2delta/"):
		return "tombstones"
	case strings.HasSuffix(base, ".parquet"):
		return "data"
	}
	return "other"
}

// commitsSince counts the table's commits whose commitInfo timestamp is at
// or after t.
func commitsSince(ctx context.Context, store deltalog.Store, t time.Time) (int, error) {
	n := 0
	for obj, err := range store.List(ctx, "_delta_log/", "") {
		if err != nil {
			return n, err
		}
		name := filepath.Base(obj.Path)
		if !strings.HasSuffix(name, ".json") || len(name) != len("00000000000000000000.json") {
			continue
		}
		ci, err := readCommitTime(ctx, store, obj.Path)
		if err != nil {
			return n, err
		}
		if !ci.Before(t) {
			n++
		}
	}
	return n, nil
}

// readCommitTime returns a commit's commitInfo timestamp.
func readCommitTime(ctx context.Context, store deltalog.Store, p string) (time.Time, error) {
	rc, err := store.Get(ctx, p)
	if err != nil {
		return time.Time{}, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		a, ok, err := deltalog.ParseLogLine(sc.Bytes())
		if err != nil {
			return time.Time{}, fmt.Errorf("reading %s: %w", p, err)
		}
		if ok && a.CommitInfo != nil && a.CommitInfo.Timestamp != nil {
			return time.UnixMilli(*a.CommitInfo.Timestamp), nil
		}
	}
	return time.Time{}, sc.Err()
}

// tableFiles are a table's live files at its latest version.
type tableFiles struct {
	files, dvs, optimal int
}

func liveFiles(ctx context.Context, store deltalog.Store) (tableFiles, error) {
	tbl, err := deltalog.Open(ctx, store)
	if err != nil {
		return tableFiles{}, err
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return tableFiles{}, err
	}
	var out tableFiles
	bytes := map[string]int64{}
	for _, f := range snap.Files() {
		out.files++
		if f.DeletionVector != nil {
			out.dvs++
		}
		pv := fmt.Sprint(f.PartitionValues)
		bytes[pv] += f.Size
	}
	for _, b := range bytes {
		out.optimal += int((b + datafile.DefaultTargetFileSize - 1) / datafile.DefaultTargetFileSize)
	}
	return out, nil
}
