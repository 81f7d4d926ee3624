package e2ebench

import (
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
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/processor"
	"github.com/cdc2delta/cdc2delta/processor/merge"
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
	Commits    float64   `json:"commits"`
	Replans    float64   `json:"replans"`
	Rebases    float64   `json:"rebases"`
	CPUSeconds []float64 `json:"cpu_seconds"` // per instance, over the whole run
}

// ScaleOutResult holds the runs and, when both ran, the throughput of the
// largest group over that of one instance.
type ScaleOutResult struct {
	Runs  []ScaleOutRun `json:"runs"`
	Ratio float64       `json:"ratio,omitempty"`
}

func (r ScaleOutRun) String() string {
	return fmt.Sprintf("%d instance(s): %.0f events/s (%d events in %.1fs), %.0f commits, %.0f re-plans (%.1f%%), %.0f rebases (%.1f%%)",
		r.Instances, r.EventsPerSecond, r.Events, r.Seconds, r.Commits,
		r.Replans, 100*r.Replans/max(r.Commits, 1), r.Rebases, 100*r.Rebases/max(r.Commits, 1))
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
	cfg.Events, cfg.Keys, cfg.Partitions = cmpOr(cfg.Events, 600_000), cmpOr(cfg.Keys, 100_000), cmpOr(cfg.Partitions, 6)
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
	for _, n := range cfg.Instances {
		logf("running %d instance(s)", n)
		r, err := runScaleOut(ctx, cfg, src, fmt.Sprintf("%s-group-%d", prefix, n), ends, n)
		if err != nil {
			return res, fmt.Errorf("%d instance(s): %w", n, err)
		}
		logf("%s", r)
		res.Runs = append(res.Runs, r)
	}
	if first, last := res.Runs[0], res.Runs[len(res.Runs)-1]; first.Instances == 1 && last.Instances > 1 {
		res.Ratio = last.EventsPerSecond / first.EventsPerSecond
	}
	return res, nil
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// runScaleOut runs n instances until the group's offsets reach ends.
func runScaleOut(ctx context.Context, cfg ScaleOutConfig, src *source, group string, ends map[merge.TopicPartition]int64, n int) (ScaleOutRun, error) {
	out := ScaleOutRun{Instances: n}
	dir := filepath.Join(cfg.Root, fmt.Sprintf("instances-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return out, err
	}
	tables := filepath.Join(dir, "tables")
	var runs []*manyRun
	var listens []string
	defer func() {
		for _, r := range runs {
			r.stop()
		}
	}()
	for i := range n {
		cfgPath := filepath.Join(dir, fmt.Sprintf("cdc2delta-%d.yaml", i))
		listen, err := writeRunConfig(cfgPath, runConfig{brokers: cfg.Brokers, group: group,
			topicRegex: `^` + regexp.QuoteMeta(src.topics()[0]) + `$`, registry: src.reg.URL(), tablesDir: tables}, cfg.ExtraYAML)
		if err != nil {
			return out, err
		}
		cmd := exec.Command("taskset", "-c", strconv.Itoa(i%runtime.NumCPU()), cfg.Binary, "run", "--config", cfgPath)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		r, err := startCmd(cmd, filepath.Join(dir, fmt.Sprintf("run-%d.log", i)))
		if err != nil {
			return out, err
		}
		runs, listens = append(runs, r), append(listens, listen)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	split, err := waitSplit(ctx, runs, listens, cfg.Partitions)
	if err != nil {
		return out, err
	}
	for {
		if err := anyExited(runs); err != nil {
			return out, err
		}
		offs, err := src.adm.FetchOffsets(ctx, group)
		if err == nil && committedAll(offs, ends) {
			break
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return out, fmt.Errorf("%w: %w", ErrCatchUp, err)
		}
	}
	router, err := processor.NewRouter(processor.DefaultTablePath)
	if err != nil {
		return out, err
	}
	path, err := router.Route(src.topics()[0])
	if err != nil {
		return out, err
	}
	store, err := localstore.New(localstore.Options{Dir: filepath.Join(tables, path)})
	if err != nil {
		return out, err
	}
	tl := timelines{}
	parts := make([]merge.TopicPartition, 0, len(ends))
	for tp := range ends {
		parts = append(parts, tp)
	}
	if _, err := tl.read(ctx, store, parts); err != nil {
		return out, err
	}
	end, err := tl.reached(ends)
	if err != nil {
		return out, err
	}
	for tp, last := range ends {
		out.Events += last - 1 - tl.offsetAt(tp, split)
	}
	out.Seconds = end.Sub(split).Seconds()
	if out.Seconds <= 0 {
		return out, fmt.Errorf("%w: the backlog was committed before the instances split it", ErrCatchUp)
	}
	out.EventsPerSecond = float64(out.Events) / out.Seconds
	for i, r := range runs {
		m := scrapeMetrics(ctx, listens[i])
		for name, v := range m {
			switch strings.TrimSuffix(name, name[strings.IndexByte(name+"{", '{'):]) {
			case "cdc2delta_commits_total":
				out.Commits += v
			case "cdc2delta_commit_conflict_retries_total":
				out.Replans += v
			case "cdc2delta_commit_rebases_total":
				out.Rebases += v
			}
		}
		cpu, err := r.cpu()
		if err != nil {
			return out, err
		}
		out.CPUSeconds = append(out.CPUSeconds, cpu.Seconds())
	}
	var errs []error
	for _, r := range runs {
		errs = append(errs, r.terminate(time.Minute))
	}
	return out, errors.Join(errs...)
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
