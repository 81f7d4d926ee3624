package e2ebench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// ScaleOutConfig shapes RunScaleOut: one table's backlog on a real broker,
// consumed by 1, 2, … `cdc2delta run` processes in one group, each held to
// one core (taskset and GOMAXPROCS=1), so that the throughput of n
// instances can be set beside that of one (issue 15, goal 3).
type ScaleOutConfig struct {
	// Brokers are the Kafka bootstrap addresses; Binary the cdc2delta
	// executable. Required.
	Brokers []string
	Binary  string
	// Root holds the tables and the runs' files. Required.
	Root string
	// Instances are the group sizes to run, one after the other, on the
	// same backlog (default 1 and 2).
	Instances []int
	// Events, Keys and Partitions shape the backlog (defaults 600,000,
	// 100,000 and 6): a snapshot of Keys rows, then updates and deletes.
	Events, Keys, Partitions int
	// ExtraYAML is appended to each run's configuration file.
	ExtraYAML string
	// Timeout bounds each run (default 15 minutes).
	Timeout time.Duration
	// BrokerPID, when set, is the broker's process, whose CPU time during
	// each run is reported: it shares the cores with the instances.
	BrokerPID int
	// CPUQuota, when above 0, also holds each instance to this many cores
	// of CPU time (a cgroup's quota, which needs root): on a machine with
	// as many cores as instances, the broker and the harness otherwise
	// take a core's spare time from one instance alone and from every
	// instance of a group, which caps the ratio however well writers
	// share a table.
	CPUQuota float64
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// ScaleOutRun is one group size's figures. The clock starts when every
// instance owns a partition (joins are a fixed cost) and stops at the Delta
// commit of the backlog's last offset; Events counts the offsets committed
// in between, by the commits' txn actions and times.
type ScaleOutRun struct {
	Instances       int     `json:"instances"`
	Events          int64   `json:"events"`
	Seconds         float64 `json:"seconds"`
	EventsPerSecond float64 `json:"events_per_second"`
	// Commits, Replans and Rebases are summed over the instances' metrics:
	// Delta commits, batches planned again after a concurrent commit that
	// touched their keys or files, and versions lost to concurrent commits
	// that cost only a rebase.
	Commits float64 `json:"commits"`
	Replans float64 `json:"replans"`
	Rebases float64 `json:"rebases"`
	// Compactions, CompactionConflicts and CompactionSeconds are the
	// automatic compactions that committed, those that gave way to a
	// concurrent commit (their work is lost), and the time of those that
	// did work: compaction is the other cost two writers may double.
	Compactions         float64   `json:"compactions"`
	CompactionConflicts float64   `json:"compaction_conflicts"`
	CompactionSeconds   float64   `json:"compaction_seconds"`
	CPUSeconds          []float64 `json:"cpu_seconds"` // per instance, over the whole run
	// HarnessCPUSeconds and BrokerCPUSeconds are what this process and the
	// broker (when known) spent during the run, on the same cores.
	HarnessCPUSeconds float64 `json:"harness_cpu_seconds"`
	BrokerCPUSeconds  float64 `json:"broker_cpu_seconds,omitempty"`
	// CPUQuota is ScaleOutConfig.CPUQuota (0: none).
	CPUQuota float64 `json:"cpu_quota,omitempty"`
}

// ScaleOutResult holds the runs and, when both ran, the throughput of the
// largest group over that of one instance.
type ScaleOutResult struct {
	Runs  []ScaleOutRun `json:"runs"`
	Ratio float64       `json:"ratio,omitempty"`
}

func (r ScaleOutRun) String() string {
	quota := ""
	if r.CPUQuota > 0 {
		quota = fmt.Sprintf(" (quota %g cores each)", r.CPUQuota)
	}
	return fmt.Sprintf("%d instance(s): %.0f events/s (%d events in %.1fs), %.0f commits, %.0f re-plans (%.1f%%), %.0f rebases (%.1f%%); "+
		"%.0f compactions (%.0f gave way, %.1fs); CPU s: instances %v%s, harness %.1f, broker %.1f",
		r.Instances, r.EventsPerSecond, r.Events, r.Seconds, r.Commits,
		r.Replans, 100*r.Replans/max(r.Commits, 1), r.Rebases, 100*r.Rebases/max(r.Commits, 1),
		r.Compactions, r.CompactionConflicts, r.CompactionSeconds,
		r.CPUSeconds, quota, r.HarnessCPUSeconds, r.BrokerCPUSeconds)
}

// RunScaleOut produces the backlog once and runs each group size on it,
// each into a table of its own.
func RunScaleOut(ctx context.Context, cfg ScaleOutConfig) (res ScaleOutResult, err error) {
	if len(cfg.Brokers) == 0 || cfg.Binary == "" || cfg.Root == "" {
		return res, fmt.Errorf("%w: brokers, binary and root are required", ErrConfig)
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return res, fmt.Errorf("%w: taskset (util-linux) holds each instance to a core: %w", ErrConfig, err)
	}
	if len(cfg.Instances) == 0 {
		cfg.Instances = []int{1, 2}
	}
	cfg.Events, cfg.Keys, cfg.Partitions = cmp.Or(cfg.Events, 600_000), cmp.Or(cfg.Keys, 100_000), cmp.Or(cfg.Partitions, 6)
	if cfg.Timeout == 0 {
		cfg.Timeout = 15 * time.Minute
	}
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, format+"\n", args...)
		}
	}
	prefix := fmt.Sprintf("scaleout%d", time.Now().UnixNano())
	src, err := newSource(ctx, Config{Brokers: cfg.Brokers, Prefix: prefix, Tables: 1, Keys: cfg.Keys, Redeliver: -1}.withDefaults())
	if err != nil {
		return res, err
	}
	defer src.close()
	if err := src.createTopics(ctx, cfg.Partitions); err != nil {
		return res, err
	}
	defer func() {
		if derr := src.deleteTopics(context.WithoutCancel(ctx)); err == nil {
			err = derr
		}
	}()
	logf("producing %d events into %d partitions", cfg.Events, cfg.Partitions)
	if err := src.produceBacklog(ctx, cfg.Events); err != nil {
		return res, fmt.Errorf("producing the backlog: %w", err)
	}
	ends, err := src.endOffsets(ctx)
	if err != nil {
		return res, err
	}
	var first []string
	for _, n := range cfg.Instances {
		logf("running %d instance(s)", n)
		r, rows, err := runScaleOut(ctx, cfg, src, fmt.Sprintf("%s-group-%d", prefix, n), ends, n)
		if err != nil {
			return res, fmt.Errorf("%d instance(s): %w", n, err)
		}
		logf("%s", r)
		res.Runs = append(res.Runs, r)
		// The same backlog must give the same table, however many wrote it.
		switch {
		case len(rows) == 0:
			return res, fmt.Errorf("%w: %d instances wrote an empty table", ErrTablesDiffer, n)
		case first == nil:
			first = rows
		case !slices.Equal(first, rows):
			return res, fmt.Errorf("%w: the table %d instances wrote differs from the one %d wrote (%d rows, %d rows)",
				ErrTablesDiffer, n, cfg.Instances[0], len(rows), len(first))
		}
	}
	if first, last := res.Runs[0], res.Runs[len(res.Runs)-1]; first.Instances == 1 && last.Instances > 1 {
		res.Ratio = last.EventsPerSecond / first.EventsPerSecond
	}
	return res, nil
}

// ErrTablesDiffer means group sizes wrote different tables from one backlog.
var ErrTablesDiffer = errors.New("e2ebench: tables differ")

// runScaleOut runs n instances until the group's offsets reach ends, and
// returns the table's rows, rendered and sorted.
func runScaleOut(ctx context.Context, cfg ScaleOutConfig, src *source, group string, ends map[cdctable.TopicPartition]int64, n int) (ScaleOutRun, []string, error) {
	out := ScaleOutRun{Instances: n, CPUQuota: cfg.CPUQuota}
	harness0 := cpuTime()
	var broker0 time.Duration
	if cfg.BrokerPID > 0 {
		var err error
		if broker0, err = procCPU(cfg.BrokerPID); err != nil {
			return out, nil, fmt.Errorf("reading the broker's CPU time: %w", err)
		}
	}
	dir := filepath.Join(cfg.Root, fmt.Sprintf("instances-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return out, nil, err
	}
	tables := filepath.Join(dir, "tables")
	var runs []*manyRun
	var listens []string
	var groups []*cpuGroup
	defer func() {
		for _, r := range runs {
			r.stop()
		}
		for _, g := range groups {
			_ = g.remove()
		}
	}()
	for i := range n {
		cfgPath := filepath.Join(dir, fmt.Sprintf("cdc2delta-%d.yaml", i))
		listen, err := writeRunConfig(cfgPath, runConfig{brokers: cfg.Brokers, group: group,
			topicRegex: `^` + regexp.QuoteMeta(src.topics()[0]) + `$`, registry: src.reg.URL(), tablesDir: tables}, cfg.ExtraYAML)
		if err != nil {
			return out, nil, err
		}
		argv := []string{"taskset", "-c", strconv.Itoa(i % runtime.NumCPU()), cfg.Binary, "run", "--config", cfgPath}
		if cfg.CPUQuota > 0 {
			g, err := newCPUGroup(fmt.Sprintf("cdc2bench-%d-%d-%d", os.Getpid(), n, i), cfg.CPUQuota)
			if err != nil {
				return out, nil, err
			}
			groups = append(groups, g)
			argv = g.command(argv...)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		r, err := startCmd(cmd, filepath.Join(dir, fmt.Sprintf("run-%d.log", i)))
		if err != nil {
			return out, nil, err
		}
		runs, listens = append(runs, r), append(listens, listen)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	split, err := waitSplit(ctx, runs, listens, cfg.Partitions)
	if err != nil {
		return out, nil, err
	}
	for {
		if err := anyExited(runs); err != nil {
			return out, nil, err
		}
		offs, err := src.adm.FetchOffsets(ctx, group)
		if err == nil && committedAll(offs, ends) {
			break
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return out, nil, fmt.Errorf("%w: %w", ErrCatchUp, err)
		}
	}
	router, err := route.NewRouter(route.DefaultTablePath)
	if err != nil {
		return out, nil, err
	}
	path, err := router.Route(src.topics()[0])
	if err != nil {
		return out, nil, err
	}
	store, err := localstore.New(localstore.Options{Dir: filepath.Join(tables, path)})
	if err != nil {
		return out, nil, err
	}
	tl := timelines{}
	parts := make([]cdctable.TopicPartition, 0, len(ends))
	for tp := range ends {
		parts = append(parts, tp)
	}
	if _, err := tl.read(ctx, store, parts); err != nil {
		return out, nil, err
	}
	end, err := tl.reached(ends)
	if err != nil {
		return out, nil, err
	}
	for tp, last := range ends {
		out.Events += last - 1 - tl.offsetAt(tp, split)
	}
	out.Seconds = end.Sub(split).Seconds()
	if out.Seconds <= 0 {
		return out, nil, fmt.Errorf("%w: the backlog was committed before the instances split it", ErrCatchUp)
	}
	out.EventsPerSecond = float64(out.Events) / out.Seconds
	for i, r := range runs {
		m := scrapeMetrics(ctx, listens[i])
		for name, v := range m {
			switch base, _, _ := strings.Cut(name, "{"); base {
			case "cdc2delta_commits_total":
				out.Commits += v
			case "cdc2delta_commit_conflict_retries_total":
				out.Replans += v
			case "cdc2delta_commit_rebases_total":
				out.Rebases += v
			case "cdc2delta_maintenance_total":
				switch {
				case strings.Contains(name, "{kind=compact}{result=ok}"):
					out.Compactions += v
				case strings.Contains(name, "{kind=compact}{result=conflict}"):
					out.CompactionConflicts += v
				}
			case "cdc2delta_maintenance_seconds_sum":
				if strings.Contains(name, "{kind=compact}") {
					out.CompactionSeconds += v
				}
			}
		}
		cpu, err := r.cpu()
		if err != nil {
			return out, nil, err
		}
		out.CPUSeconds = append(out.CPUSeconds, cpu.Seconds())
	}
	out.HarnessCPUSeconds = (cpuTime() - harness0).Seconds()
	if cfg.BrokerPID > 0 {
		b, err := procCPU(cfg.BrokerPID)
		if err != nil {
			return out, nil, fmt.Errorf("reading the broker's CPU time: %w", err)
		}
		out.BrokerCPUSeconds = (b - broker0).Seconds()
	}
	var errs []error
	for _, r := range runs {
		errs = append(errs, r.terminate(time.Minute))
	}
	if err := errors.Join(errs...); err != nil {
		return out, nil, err
	}
	rows, err := tableRows(ctx, store)
	return out, rows, err
}

func anyExited(runs []*manyRun) error {
	for _, r := range runs {
		if err := r.exited(); err != nil {
			return err
		}
	}
	return nil
}

// waitSplit waits until every instance owns some of the partitions, all
// of them owned, and returns when.
func waitSplit(ctx context.Context, runs []*manyRun, listens []string, partitions int) (time.Time, error) {
	for {
		if err := anyExited(runs); err != nil {
			return time.Time{}, err
		}
		total, all := 0, true
		for _, listen := range listens {
			n := readyPartitions(ctx, listen)
			total += n
			all = all && n > 0
		}
		if all && total == partitions {
			return time.Now(), nil
		}
		if err := sleep(ctx, 5*time.Millisecond); err != nil {
			return time.Time{}, fmt.Errorf("waiting for the instances to split the partitions: %w", err)
		}
	}
}

// readyPartitions is the partitions an instance's /readyz says it owns (0
// when it does not answer ready).
func readyPartitions(ctx context.Context, listen string) int {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+listen+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := readyLine.FindStringSubmatch(string(body))
	if resp.StatusCode != http.StatusOK || m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// tableRows reads every live row of the table in store, rendered and
// sorted.
func tableRows(ctx context.Context, store deltalog.Store) ([]string, error) {
	tbl, err := deltalog.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, add := range snap.Files() {
		rows, err := datafile.Read(ctx, store, &add, snap.Schema(), datafile.ReadOptions{Properties: snap.Metadata().Configuration})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", add.Path, err)
		}
		for _, r := range rows {
			out = append(out, fmt.Sprint(r...))
		}
	}
	slices.Sort(out)
	return out, nil
}
