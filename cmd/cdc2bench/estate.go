package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
)

// estateGoal is one goal of the estate scenario and whether the run met it.
type estateGoal struct {
	Name     string `json:"name"`
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Pass     bool   `json:"pass"`
}

// estateRead is a full scan of one table as the run left it and of a copy
// after OPTIMIZE (delta-rs, median of 3).
type estateRead struct {
	Table            string  `json:"table"`
	Class            string  `json:"class"`
	Rank             int     `json:"rank"`
	Seconds          float64 `json:"seconds"`
	OptimizedSeconds float64 `json:"optimized_seconds"`
	Ratio            float64 `json:"ratio"`
	Error            string  `json:"error,omitempty"`
}

// estateCosts are the run's costs per unit.
type estateCosts struct {
	CPUMicrosPerEvent     float64 `json:"cpu_us_per_event"`
	RSSMiBPerTable        float64 `json:"rss_mib_per_table"`
	RSSMiBPerMillionRows  float64 `json:"rss_mib_per_million_rows"`
	LoadRowsPerSecond     float64 `json:"load_rows_per_second"`
	OpenSecondsPerMillion float64 `json:"open_seconds_per_million_rows"`
	LiveFilesPerTable     float64 `json:"live_files_per_table"`
	OptimalFilesPerTable  float64 `json:"optimal_files_per_table"`
	KillRestartMsPerTable float64 `json:"kill_restart_ms_per_table"`
}

// estateReport is `cdc2bench estate`'s results.json.
type estateReport struct {
	Command  string                 `json:"command"`
	Started  time.Time              `json:"started"`
	Classes  []e2ebench.EstateClass `json:"classes"`
	Scale    int                    `json:"scale"`
	Rate     float64                `json:"rate"`
	Zipf     float64                `json:"zipf"`
	Hot      int                    `json:"hot"`
	MaxDelay float64                `json:"max_delay_seconds"`
	Duration float64                `json:"duration_seconds"`
	Error    string                 `json:"error,omitempty"`
	Run      *e2ebench.EstateResult `json:"run,omitempty"`
	Reads    []estateRead           `json:"reads,omitempty"`
	Goals    []estateGoal           `json:"goals,omitempty"`
	Costs    *estateCosts           `json:"costs,omitempty"`
	Config   map[string]string      `json:"config"`
}

// estateCmd is `cdc2bench estate`: a whole SQL Server estate on one
// instance (tables of three sizes preloaded in bulk, a Zipf stream of
// updates over them), measured against the estate's goals.
func estateCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fset := flag.NewFlagSet("estate", flag.ContinueOnError)
	fset.SetOutput(stderr)
	out := fset.String("out", "", "output directory (required; must not hold an earlier run)")
	bin := fset.String("bin", "", "cdc2delta binary to run (required)")
	brokers := fset.String("brokers", os.Getenv("CDC2DELTA_KAFKA_BROKERS"), "Kafka brokers (default $CDC2DELTA_KAFKA_BROKERS; empty: an in-process broker, which holds every record in memory)")
	def := e2ebench.DefaultEstate()
	bigTables := fset.Int("big-tables", def[0].Tables, "tables of the big class")
	bigRows := fset.Int("big-rows", def[0].Rows, "rows per big table (before -scale)")
	medTables := fset.Int("medium-tables", def[1].Tables, "tables of the medium class")
	medRows := fset.Int("medium-rows", def[1].Rows, "rows per medium table (before -scale)")
	smallTables := fset.Int("small-tables", def[2].Tables, "tables of the small class")
	smallRows := fset.Int("small-rows", def[2].Rows, "rows per small table (before -scale)")
	scale := fset.Int("scale", 1, "divide every class's rows by this (the same estate, smaller, for a small machine)")
	rate := fset.Float64("rate", 20_000, "updates per second over all tables")
	zipf := fset.Float64("zipf", 1, "Zipf exponent s of the tables' shares of the updates (rank r gets 1/r^s; ranks at random)")
	hot := fset.Int("hot", 10, "the busiest tables held to the hot freshness goal")
	duration := fset.Duration("duration", 30*time.Minute, "measured phase")
	changeLog := fset.Bool("change-log", true, "every table's change log on")
	control := fset.Bool("control", true, "the control table on")
	maintenance := fset.Bool("maintenance", true, "automatic maintenance on")
	keyIndex := fset.String("key-index", "disk", "memory.key_index: memory or disk (empty: the configuration's default)")
	instanceID := fset.String("instance-id", "estate-0", "kafka.instance_id (static membership: a restart takes the partitions back at once); empty: none, and a restart after SIGKILL waits for the broker's session timeout")
	maxDelay := fset.Duration("max-delay", 10*time.Second, "batch.max_delay of the run's configuration (the freshness goal of the tables that are not hot is this plus 1 s)")
	yaml := fset.String("yaml", "", "YAML appended to the run's configuration (no batch, control, maintenance or memory section: those come from flags)")
	python := fset.String("python", os.Getenv("CDC2DELTA_PYTHON"), "Python with deltalake, for the full-scan times (empty: none)")
	peers := fset.String("peers", defaultPeers(), "path of bench_peers.py")
	reads := fset.Int("read-tables", 1, "tables per class whose full scan is timed against OPTIMIZE, busiest first")
	seed := fset.Uint64("seed", 1, "seed of ranks, keys and values")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *out == "" || *bin == "" || fset.NArg() > 0 {
		return fmt.Errorf("%w: estate needs -out DIR and -bin BIN (see -h)", errUsage)
	}
	if *scale < 1 || *rate <= 0 || *zipf <= 0 || *maxDelay <= 0 {
		return fmt.Errorf("%w: -scale ≥ 1, -rate, -zipf and -max-delay > 0", errUsage)
	}
	classes := []e2ebench.EstateClass{{Name: "big", Tables: *bigTables, Rows: *bigRows},
		{Name: "medium", Tables: *medTables, Rows: *medRows}, {Name: "small", Tables: *smallTables, Rows: *smallRows}}
	classes = slices.DeleteFunc(classes, func(c e2ebench.EstateClass) bool { return c.Tables <= 0 })
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	rep := &estateReport{Command: "cdc2bench estate " + strings.Join(args, " "), Started: time.Now().UTC(),
		Classes: classes, Scale: *scale, Rate: *rate, Zipf: *zipf, Hot: *hot, MaxDelay: maxDelay.Seconds(),
		Duration: duration.Seconds(), Config: map[string]string{
			"change_log": fmt.Sprint(*changeLog), "control": fmt.Sprint(*control), "maintenance": fmt.Sprint(*maintenance),
			"key_index": *keyIndex, "instance_id": *instanceID, "max_delay": maxDelay.String(), "extra": *yaml}}
	var bl []string
	if *brokers != "" {
		bl = strings.Split(*brokers, ",")
	}
	root := filepath.Join(*out, "run")
	res, err := e2ebench.RunEstate(ctx, e2ebench.EstateConfig{
		Binary: *bin, Brokers: bl, Classes: classes, Scale: *scale, Rate: *rate, Zipf: *zipf, Hot: *hot,
		Duration: *duration, ChangeLog: *changeLog, Control: *control, Maintenance: *maintenance, KeyIndex: *keyIndex,
		InstanceID: *instanceID,
		ExtraYAML:  fmt.Sprintf("batch: {max_delay: %s}\n%s", *maxDelay, *yaml), Root: root, Seed: *seed, Log: stderr,
	})
	if err != nil {
		rep.Error = err.Error()
	} else {
		rep.Run = &res
		if *python != "" {
			rep.Reads = estateReads(ctx, res.TableStates, *reads, *python, *peers, filepath.Join(*out, "read"))
		}
		rep.Goals = estateGoals(rep)
		rep.Costs = estateCostsOf(&res)
	}
	if werr := writeJSON(filepath.Join(*out, "results.json"), rep); werr != nil {
		return werr
	}
	f, ferr := os.Create(filepath.Join(*out, "ESTATE.md"))
	if ferr != nil {
		return ferr
	}
	defer f.Close()
	renderEstate(f, rep)
	fmt.Fprintf(stderr, "report: %s\n", filepath.Join(*out, "ESTATE.md"))
	return err
}

// estateReads times full scans of the n busiest tables of each class.
func estateReads(ctx context.Context, tables []e2ebench.EstateTable, n int, python, peers, dir string) []estateRead {
	byRank := slices.Clone(tables)
	slices.SortFunc(byRank, func(a, b e2ebench.EstateTable) int { return a.Rank - b.Rank })
	taken := map[string]int{}
	var out []estateRead
	for _, t := range byRank {
		if taken[t.Class] >= n {
			continue
		}
		taken[t.Class]++
		r := estateRead{Table: t.Name, Class: t.Class, Rank: t.Rank}
		var err error
		r.Seconds, r.OptimizedSeconds, err = readTimes(ctx, python, peers, t.Dir, filepath.Join(dir, t.Name))
		if err != nil {
			r.Error = err.Error()
		} else if r.OptimizedSeconds > 0 {
			r.Ratio = r.Seconds / r.OptimizedSeconds
		}
		out = append(out, r)
	}
	return out
}

// Goal thresholds of the estate scenario.
const (
	goalHotP99     = 2.0     // seconds
	goalRSS        = 4 << 30 // bytes
	goalCores      = 1.2
	goalKillReady  = 10.0 // seconds
	goalReadRatio  = 1.2
	goalLagGrowth  = 1.5 // the second half's largest lag over the first half's
	goalLagSlackS  = 1.0 // seconds of events added to that bound
	goalDrainSlack = 1.0 // seconds past max_delay
)

// estateGoals judges the run against the estate's goals.
func estateGoals(rep *estateReport) []estateGoal {
	r := rep.Run
	var g []estateGoal
	add := func(name, target, measured string, pass bool) {
		g = append(g, estateGoal{Name: name, Target: target, Measured: measured, Pass: pass})
	}
	first, second := lagHalves(r.Lag, r.Seconds)
	lagOK := float64(second) <= goalLagGrowth*float64(first)+goalLagSlackS*rep.Rate && r.DrainSeconds <= rep.MaxDelay+goalDrainSlack
	add("lag bounded", fmt.Sprintf("largest lag of the second half ≤ %.1f× the first half's + %.0f s of events; drained ≤ max_delay + %.0f s after the last event",
		goalLagGrowth, goalLagSlackS, goalDrainSlack),
		fmt.Sprintf("largest lag %d then %d records; drained in %.1f s", first, second, r.DrainSeconds), lagOK)
	if f := r.FreshnessHot; f != nil {
		got := fmt.Sprintf("%.2f s (p50 %.2f, %d events)", f.P99Seconds, f.P50Seconds, f.Events)
		if src := r.SourceHot; src != nil {
			got += fmt.Sprintf("; the source's produce alone: p50 %.2f, p99 %.2f s", src.P50Seconds, src.P99Seconds)
		}
		add("p99 freshness, hot tables", fmt.Sprintf("≤ %.0f s", goalHotP99), got, f.P99Seconds <= goalHotP99)
	}
	if f := r.FreshnessRest; f != nil {
		bound := rep.MaxDelay + 1
		add("p99 freshness, other tables", fmt.Sprintf("≤ max_delay + 1 s = %.0f s", bound), fmt.Sprintf("%.2f s (p50 %.2f, %d events)", f.P99Seconds, f.P50Seconds, f.Events), f.P99Seconds <= bound)
	}
	add("peak RSS", "≤ 4 GiB", fmt.Sprintf("%.0f MiB", float64(r.PeakRSSBytes)/(1<<20)), r.PeakRSSBytes > 0 && r.PeakRSSBytes <= goalRSS)
	add("CPU", fmt.Sprintf("≤ %.1f cores", goalCores), fmt.Sprintf("%.2f cores", r.Cores), r.Cores <= goalCores)
	add("SIGKILL to all ready", fmt.Sprintf("≤ %.0f s", goalKillReady), fmt.Sprintf("%.1f s", r.KillRestartSeconds), r.KillRestartSeconds <= goalKillReady)
	if len(rep.Reads) > 0 {
		worst, ok, what := 0.0, true, ""
		for _, rd := range rep.Reads {
			if rd.Error != "" {
				ok = false
				what = "error on " + rd.Table
				continue
			}
			if rd.Ratio > worst {
				worst = rd.Ratio
				what = fmt.Sprintf("worst %.2f× (%s, %.3f s against %.3f s)", rd.Ratio, rd.Table, rd.Seconds, rd.OptimizedSeconds)
			}
		}
		add("full scan against OPTIMIZE", fmt.Sprintf("≤ %.1f× on each table read", goalReadRatio), what, ok && worst <= goalReadRatio)
	}
	return g
}

// lagHalves returns the largest lag sampled in each half of the phase.
func lagHalves(samples []e2ebench.LagSample, seconds float64) (first, second int64) {
	for _, s := range samples {
		if s.Seconds <= seconds/2 {
			first = max(first, s.Records)
		} else {
			second = max(second, s.Records)
		}
	}
	return first, second
}

// estateCostsOf divides the run's totals by its units. The RSS figures are
// the same peak divided two ways, not two parts of it.
func estateCostsOf(r *e2ebench.EstateResult) *estateCosts {
	c := &estateCosts{LoadRowsPerSecond: r.LoadRowsPerSecond}
	if r.Events > 0 {
		c.CPUMicrosPerEvent = r.CPUSeconds / float64(r.Events) * 1e6
	}
	rss := float64(r.PeakRSSBytes) / (1 << 20)
	if r.Tables > 0 {
		c.RSSMiBPerTable = rss / float64(r.Tables)
		c.KillRestartMsPerTable = 1000 * r.KillRestartSeconds / float64(r.Tables)
		for _, t := range r.TableStates {
			c.LiveFilesPerTable += float64(t.LiveFiles) / float64(r.Tables)
			c.OptimalFilesPerTable += float64(t.OptimalFiles) / float64(r.Tables)
		}
	}
	if r.Rows > 0 {
		c.RSSMiBPerMillionRows = rss / (float64(r.Rows) / 1e6)
		c.OpenSecondsPerMillion = r.OpenSeconds / (float64(r.Rows) / 1e6)
	}
	return c
}

// renderEstate writes the report as Markdown.
func renderEstate(w io.Writer, rep *estateReport) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	var parts []string
	for _, c := range rep.Classes {
		parts = append(parts, fmt.Sprintf("%d × %d rows (%s)", c.Tables, max(c.Rows/rep.Scale, 2), c.Name))
	}
	p("# Estate: %s; %.0f updates/s, Zipf s=%.2f, %.0f s\n\n", strings.Join(parts, ", "), rep.Rate, rep.Zipf, rep.Duration)
	p("Command: `%s` (started %s). Rows divided by %d. Configuration: change log %s, control table %s, maintenance %s, key index %s, kafka.instance_id %q, max_delay %s.\n\n",
		rep.Command, rep.Started.Format(time.RFC3339), rep.Scale, rep.Config["change_log"], rep.Config["control"],
		rep.Config["maintenance"], rep.Config["key_index"], rep.Config["instance_id"], rep.Config["max_delay"])
	if rep.Run == nil {
		p("**FAILED**: %s\n", rep.Error)
		return
	}
	r := rep.Run
	p("| goal | target | measured | |\n|---|---|---|---|\n")
	for _, g := range rep.Goals {
		v := "FAIL"
		if g.Pass {
			v = "pass"
		}
		p("| %s | %s | %s | %s |\n", g.Name, g.Target, g.Measured, v)
	}
	c := rep.Costs
	p("\nPer-unit costs: %.1f CPU-µs per event (maintenance, change logs and control table included); peak RSS %.0f MiB = %.2f MiB per table = %.1f MiB per million rows (the same peak divided two ways); bulk load %.0f rows/s; open %.2f s per million rows; SIGKILL to ready %.1f ms per table; live files %.1f per table (OPTIMIZE would leave %.1f).\n\n",
		c.CPUMicrosPerEvent, float64(r.PeakRSSBytes)/(1<<20), c.RSSMiBPerTable, c.RSSMiBPerMillionRows, c.LoadRowsPerSecond,
		c.OpenSecondsPerMillion, c.KillRestartMsPerTable, c.LiveFilesPerTable, c.OptimalFilesPerTable)
	p("Run: %d tables, %d rows loaded in %.1f s, open in %.1f s; %d events in %.0f s (%.0f/s of the %.0f/s asked), drained in %.1f s; CPU %.1f s.\n\n",
		r.Tables, r.Rows, r.LoadSeconds, r.OpenSeconds, r.Events, r.Seconds, r.EventsPerSecond, rep.Rate, r.DrainSeconds, r.CPUSeconds)
	if r.EventsPerSecond < 0.95*rep.Rate {
		p("**The source kept %.0f%% of the rate asked**: the goals above are for that rate, not the one asked.\n\n", 100*r.EventsPerSecond/rep.Rate)
	}
	p("| class | p50 s | p99 s | max s | events sampled |\n|---|---:|---:|---:|---:|\n")
	for _, cl := range rep.Classes {
		if f := r.FreshnessClass[cl.Name]; f != nil {
			p("| %s | %.2f | %.2f | %.2f | %d |\n", cl.Name, f.P50Seconds, f.P99Seconds, f.MaxSeconds, f.Events)
		}
	}
	if len(r.FreshnessMinutes) > 0 {
		p("\n| minute of the phase | p50 s | p99 s | max s | events sampled |\n|---:|---:|---:|---:|---:|\n")
		for m, f := range r.FreshnessMinutes {
			if f != nil {
				p("| %d | %.2f | %.2f | %.2f | %d |\n", m+1, f.P50Seconds, f.P99Seconds, f.MaxSeconds, f.Events)
			}
		}
	}
	renderEstateResources(w, r)
	if len(rep.Reads) > 0 {
		p("\n| table read | class | rank | full scan s | after OPTIMIZE s | ratio |\n|---|---|---:|---:|---:|---:|\n")
		for _, rd := range rep.Reads {
			if rd.Error != "" {
				p("| %s | %s | %d | error: %s |||\n", rd.Table, rd.Class, rd.Rank, rd.Error)
				continue
			}
			p("| %s | %s | %d | %.3f | %.3f | %.2f× |\n", rd.Table, rd.Class, rd.Rank, rd.Seconds, rd.OptimizedSeconds, rd.Ratio)
		}
	}
	p("\n")
}
