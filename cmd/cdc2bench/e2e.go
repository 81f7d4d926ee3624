package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/cmd/internal/runopts"
	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
)

// e2eSize is the end-to-end run of a preset.
type e2eSize struct {
	Events, Keys int
	Live         time.Duration
}

var e2eSizes = map[string]e2eSize{
	"tiny":  {Events: 20_000, Keys: 2_000, Live: 3 * time.Second},
	"small": {Events: 300_000, Keys: 20_000, Live: 10 * time.Second},
	"full":  {Events: 1_000_000, Keys: 200_000, Live: 30 * time.Second},
}

// e2eResult is the end-to-end system's figures: e2ebench's own and the
// sampler's view of the process.
type e2eResult struct {
	Error       string           `json:"error,omitempty"`
	Result      *e2ebench.Result `json:"result,omitempty"`
	CPUSeconds  float64          `json:"cpu_seconds"`
	PeakRSSMiB  float64          `json:"peak_rss_mib"`
	WallSeconds float64          `json:"wall_seconds"`
}

// e2eCmd is `cdc2bench e2e`: one e2ebench.Run from the real broker.
func e2eCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fset := flag.NewFlagSet("e2e", flag.ContinueOnError)
	fset.SetOutput(stderr)
	brokers := fset.String("brokers", "", "Kafka bootstrap addresses, comma separated")
	out := fset.String("out", "", "result JSON file")
	events := fset.Int("events", 300_000, "backlog events")
	keys := fset.Int("keys", 20_000, "keys per table")
	live := fset.Duration("live", 10*time.Second, "latency phase length (0: none, and the harness's model is dropped before the catch-up)")
	root := fset.String("root", "", "table directory (empty: temporary); with -store local, required")
	store := fset.String("store", "", "where the tables land, through cdc2delta run's own storage configuration: "+
		"local (a directory, synced as run syncs it), s3, azure, gcs (a fresh bucket or container on the emulator at -endpoint); "+
		"empty: a directory, unsynced as the other benchmarks")
	endpoint := fset.String("endpoint", "", "the URL of the -store emulator (moto, Azurite, fake-gcs-server)")
	heap := fset.Bool("heap-profile", false, "also write a heap profile (OUT.heap.pprof) when the catch-up ends")
	batch := fset.String("batch", "config", "batch limits and upkeep: config (the configuration's defaults, what users run), "+
		"config-nodrain (those with commit_when_drained false)")
	changeLog := fset.Bool("changelog", false, "keep every table's change log too (change_log: true)")
	err := fset.Parse(args)
	if err != nil {
		return err
	}
	if *batch != "config" && *batch != "config-nodrain" {
		return fmt.Errorf("%w: -batch %q (config or config-nodrain)", errUsage, *batch)
	}
	limits := runopts.Batch(config.Default().Batch)
	limits.Drained = limits.Drained && *batch == "config"
	upkeep := runopts.Maintenance(config.Default().Maintenance)
	if *brokers == "" || *out == "" {
		return fmt.Errorf("%w: e2e needs -brokers and -out", errUsage)
	}
	if err := checkStore(*store, *endpoint); err != nil {
		return err
	}
	if *store == "local" && *root == "" {
		return fmt.Errorf("%w: -store local needs -root", errUsage)
	}
	cfg := e2ebench.Config{
		Brokers: strings.Split(*brokers, ","), Prefix: "cdc2bench" + strconv.FormatInt(time.Now().UnixNano(), 10),
		Events: *events, Keys: *keys, LiveDuration: *live, Root: *root, Profile: true, Batch: limits, Maintenance: upkeep,
		ProfilePath: strings.TrimSuffix(*out, ".json") + ".pprof", ChangeLog: *changeLog,
	}
	if *live == 0 {
		cfg.LiveRate = -1
	}
	if *store != "" {
		if cfg.Root, cfg.OpenStore, err = e2eStore(ctx, *store, *endpoint, *root); err != nil {
			return err
		}
	}
	if *heap {
		cfg.HeapProfilePath = strings.TrimSuffix(*out, ".json") + ".heap.pprof"
	}
	res, err := e2ebench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "cdc2delta-e2e: %s\n", res)
	return res.WriteJSON(*out)
}

// runE2E runs `cdc2bench e2e` under the sampler.
func (o *orchestrator) runE2E(ctx context.Context) *e2eResult {
	cfg := o.cfg
	r := &e2eResult{}
	size := e2eSizes[cfg.Preset.Name]
	dir, err := filepath.Abs(filepath.Join(cfg.Out, "e2e"))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	out := filepath.Join(dir, "result.json")
	cmd := exec.Command(cfg.Self, "e2e", "-brokers", cfg.Brokers, "-out", out, "-events", strconv.Itoa(size.Events),
		"-keys", strconv.Itoa(size.Keys), "-live", size.Live.String(), "-root", filepath.Join(dir, "tables"))
	cmd.Stdout, cmd.Stderr = cfg.Progress, cfg.Progress
	o.logf("%s: start (%d events from %s)", sysE2E, size.Events, cfg.Brokers)
	u, err := runSampled(ctx, cmd, cfg.Interval)
	r.CPUSeconds, r.PeakRSSMiB, r.WallSeconds = u.CPUSeconds, float64(u.PeakRSS)/(1<<20), u.WallSeconds
	if err != nil {
		r.Error = fmt.Sprintf("%s: %v", strings.Join(cmd.Args, " "), err)
		return r
	}
	var res e2ebench.Result
	if err := readJSON(out, &res); err != nil {
		r.Error = err.Error()
		return r
	}
	r.Result = &res
	o.logf("%s: done: %.0f events/s", sysE2E, res.EventsPerSecond)
	return r
}

// renderE2E writes the end-to-end section.
func renderE2E(w io.Writer, r *e2eResult) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## End to end from Kafka (cdc2delta-e2e)\n\n")
	if r.Error != "" {
		p("Failed: %s\n\n", r.Error)
		return
	}
	res := r.Result
	p("Debezium Avro events (internal/dbzgen, %d tables × %d partitions, %d keys per table) produced to the real broker first (untimed), then consumed by a fresh processor into Delta tables on local disk, with the configuration's defaults (batch limits, commit budget, upkeep).\n\n",
		res.Config.Tables, res.Config.Partitions, res.Config.Keys)
	p("| events | catch-up s | events/s | events per CPU s | commits | peak RSS MiB (process) | peak RSS MiB (sampled) |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	p("| %d | %.2f | %.0f | %.0f | %d | %.0f | %.0f |\n\n", res.Events, res.CatchUpSeconds, res.EventsPerSecond, res.EventsPerCPUSecond, res.Commits, float64(res.PeakRSSBytes)/(1<<20), r.PeakRSSMiB)
	if len(res.CPUShares) > 0 {
		var parts []string
		for _, c := range e2ebench.Categories() {
			if s, ok := res.CPUShares[c]; ok {
				parts = append(parts, fmt.Sprintf("%s %.0f%%", c, 100*s))
			}
		}
		p("Where the CPU time goes (share of profile samples during the catch-up): %s.\n\n", strings.Join(parts, ", "))
	}
	if l := res.Latency; l != nil {
		p("Source commit to visible in Delta at %d events/s: p50 %.0f ms, p99 %.0f ms, max %.0f ms over %d events.\n\n", res.Config.LiveRate, 1000*l.P50Seconds, 1000*l.P99Seconds, 1000*l.MaxSeconds, l.Events)
	}
}
