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

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// manySide is one column of the many-tables comparison: a binary and the
// configuration it runs with.
type manySide struct {
	Name   string `json:"name"`
	Binary string `json:"binary"`
	YAML   string `json:"yaml"`
}

// manyCase is one scenario at one table count, for every side.
type manyCase struct {
	Tables   int               `json:"tables"`
	Scenario string            `json:"scenario"`
	Results  []*manyCaseResult `json:"results"`
}

type manyCaseResult struct {
	Side  string               `json:"side"`
	Error string               `json:"error,omitempty"`
	Run   *e2ebench.ManyResult `json:"run,omitempty"`
	// ReadSeconds and OptimizedReadSeconds are delta-rs full scans
	// (median of 3) of the first table as the run left it and of a copy
	// after OPTIMIZE; ReadError says why they are missing.
	ReadSeconds          float64 `json:"read_seconds,omitempty"`
	OptimizedReadSeconds float64 `json:"optimized_read_seconds,omitempty"`
	ReadError            string  `json:"read_error,omitempty"`
}

// manyReport is `cdc2bench many`'s results.json.
type manyReport struct {
	Command  string      `json:"command"`
	Started  time.Time   `json:"started"`
	Sides    []manySide  `json:"sides"`
	Duration float64     `json:"duration_seconds"`
	Rows     int         `json:"rows"`
	Cases    []*manyCase `json:"cases"`
}

// manyCmd is `cdc2bench many`: the many-tables scenario (small tables
// changing a few times a second) against two binaries or policies, side
// by side.
func manyCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fset := flag.NewFlagSet("many", flag.ContinueOnError)
	fset.SetOutput(stderr)
	out := fset.String("out", "", "output directory (required)")
	before := fset.String("before", "", "cdc2delta binary of the 'before' side (empty: no before side)")
	beforeYAML := fset.String("before-yaml", "", "YAML appended to the before side's configuration")
	after := fset.String("after", "", "cdc2delta binary of the 'after' side (required)")
	afterYAML := fset.String("after-yaml", "", "YAML appended to the after side's configuration")
	tables := fset.String("tables", "10,50,200", "comma-separated table counts")
	scenarios := fset.String("scenarios", "trickle,burst", "comma-separated scenarios: trickle, burst")
	duration := fset.Duration("duration", time.Minute, "measured phase per run")
	rows := fset.Int("rows", 2000, "snapshot rows per table")
	rate := fset.Float64("rate", 1, "trickle updates per second per table")
	python := fset.String("python", os.Getenv("CDC2DELTA_PYTHON"), "Python with deltalake and duckdb, for the read times (empty: none)")
	peers := fset.String("peers", defaultPeers(), "path of bench_peers.py")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *out == "" || *after == "" || fset.NArg() > 0 {
		return fmt.Errorf("%w: many needs -out DIR and -after BIN (see -h)", errUsage)
	}
	var sides []manySide
	if *before != "" {
		sides = append(sides, manySide{Name: "before", Binary: *before, YAML: *beforeYAML})
	}
	sides = append(sides, manySide{Name: "after", Binary: *after, YAML: *afterYAML})
	var counts []int
	for f := range strings.SplitSeq(*tables, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("%w: -tables %q", errUsage, *tables)
		}
		counts = append(counts, n)
	}
	rep := &manyReport{Command: "cdc2bench many " + strings.Join(args, " "), Started: time.Now().UTC(), Sides: sides,
		Duration: duration.Seconds(), Rows: *rows}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for sc := range strings.SplitSeq(*scenarios, ",") {
		for _, n := range counts {
			c := &manyCase{Tables: n, Scenario: strings.TrimSpace(sc)}
			rep.Cases = append(rep.Cases, c)
			for _, side := range sides {
				r := &manyCaseResult{Side: side.Name}
				c.Results = append(c.Results, r)
				root := filepath.Join(*out, fmt.Sprintf("%s-%d-%s", c.Scenario, n, side.Name))
				run, err := e2ebench.RunMany(ctx, e2ebench.ManyConfig{
					Binary: side.Binary, ExtraYAML: side.YAML, Tables: n, Rows: *rows, Scenario: c.Scenario, Rate: *rate,
					Duration: *duration, Root: root, Seed: uint64(n), Log: stderr,
				})
				if err != nil {
					r.Error = err.Error()
					fmt.Fprintf(stderr, "many: %s %d %s: %v\n", c.Scenario, n, side.Name, err)
				} else {
					r.Run = &run
					if *python != "" {
						r.ReadSeconds, r.OptimizedReadSeconds, err = readTimes(ctx, *python, *peers, run.TableDirs[0], root)
						if err != nil {
							r.ReadError = err.Error()
						}
					}
					// The tables are large in number and small in value: keep the first.
					for _, d := range run.TableDirs[1:] {
						_ = os.RemoveAll(d) // best effort
					}
				}
				if err := writeJSON(filepath.Join(*out, "results.json"), rep); err != nil {
					return err
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
	}
	f, err := os.Create(filepath.Join(*out, "MANY.md"))
	if err != nil {
		return err
	}
	defer f.Close()
	renderMany(f, rep)
	fmt.Fprintf(stderr, "report: %s\n", filepath.Join(*out, "MANY.md"))
	return nil
}

// readTimes copies table, OPTIMIZEs the copy and has bench_peers.py check
// time a delta-rs full scan of both (and compare their rows).
func readTimes(ctx context.Context, python, peers, table, root string) (trickled, optimized float64, err error) {
	cp := filepath.Join(root, "optimized")
	if err := os.CopyFS(cp, os.DirFS(table)); err != nil {
		return 0, 0, fmt.Errorf("copying %s: %w", table, err)
	}
	store, err := localstore.New(localstore.Options{Dir: cp})
	if err != nil {
		return 0, 0, err
	}
	tbl, err := deltalog.Open(ctx, store)
	if err != nil {
		return 0, 0, err
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return 0, 0, err
	}
	if _, err := tableops.Optimize(ctx, tbl, snap, tableops.OptimizeOptions{TargetSize: datafile.DefaultTargetFileSize}); err != nil {
		return 0, 0, fmt.Errorf("optimizing the copy: %w", err)
	}
	outFile := filepath.Join(root, "read.json")
	cmd := exec.CommandContext(ctx, python, peers, "check", "--strict", "--table", "trickled="+table, "--table", "optimized="+cp, "--out", outFile)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, msg)
	}
	var c struct {
		Tables map[string]struct {
			ReadSeconds float64 `json:"read_seconds"`
		} `json:"tables"`
	}
	if err := readJSON(outFile, &c); err != nil {
		return 0, 0, err
	}
	return c.Tables["trickled"].ReadSeconds, c.Tables["optimized"].ReadSeconds, nil
}

// renderMany writes the comparison as Markdown: one table per scenario,
// the sides side by side per table count.
func renderMany(w io.Writer, rep *manyReport) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Many tables: %d-row snapshots, then %.0f s measured\n\n", rep.Rows, rep.Duration)
	p("Command: `%s` (started %s).\n\n", rep.Command, rep.Started.Format(time.RFC3339))
	for _, s := range rep.Sides {
		yaml := strings.TrimSpace(s.YAML)
		if yaml == "" {
			yaml = "(defaults)"
		}
		p("- **%s**: `%s`, configuration: `%s`\n", s.Name, s.Binary, strings.ReplaceAll(yaml, "\n", " "))
	}
	p("\n")
	p("| scenario | tables | side | versions/table/min | files created | MiB created | CPU (share of a core) | freshness p50 / p99 s | live files/table (optimal) | live DVs/table | restart to ready s | read s (after OPTIMIZE) |\n")
	p("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range rep.Cases {
		for _, r := range c.Results {
			if r.Run == nil {
				p("| %s | %d | %s | failed: %s |||||||||\n", c.Scenario, c.Tables, r.Side, r.Error)
				continue
			}
			m := r.Run
			fresh := "–"
			if m.Freshness != nil {
				fresh = fmt.Sprintf("%.2f / %.2f", m.Freshness.P50Seconds, m.Freshness.P99Seconds)
			}
			read := "–"
			if r.ReadSeconds > 0 {
				read = fmt.Sprintf("%.3f (%.3f)", r.ReadSeconds, r.OptimizedReadSeconds)
			} else if r.ReadError != "" {
				read = "error"
			}
			p("| %s | %d | %s | %.1f | %d | %.1f | %.0f%% | %s | %.1f (%.1f) | %.1f | %.1f | %s |\n",
				c.Scenario, c.Tables, r.Side, m.VersionsPerTableMinute, m.FilesCreated, float64(m.BytesCreated)/(1<<20),
				100*m.CPUShare, fresh, m.LiveFilesMean, m.OptimalFiles, m.LiveDVsMean, m.RestartSeconds, read)
		}
	}
	if len(rep.Sides) > 1 {
		renderManyRatios(p, rep)
	}
	for _, c := range rep.Cases {
		for _, r := range c.Results {
			if r.Run == nil || len(r.Run.FilesByKind) == 0 {
				continue
			}
			p("\n%s %d %s: files by kind %v", c.Scenario, c.Tables, r.Side, r.Run.FilesByKind)
		}
	}
	p("\n")
}

// renderManyRatios writes before ÷ after for every case that ran on both sides.
func renderManyRatios(p func(string, ...any), rep *manyReport) {
	p("\nRatios (before ÷ after; higher is better for after):\n\n")
	p("| scenario | tables | versions | files created | CPU | restart |\n|---|---:|---:|---:|---:|---:|\n")
	for _, c := range rep.Cases {
		var b, a *e2ebench.ManyResult
		for _, r := range c.Results {
			switch r.Side {
			case "before":
				b = r.Run
			case "after":
				a = r.Run
			}
		}
		if a == nil || b == nil {
			continue
		}
		ratio := func(x, y float64) string {
			if y == 0 {
				return "–"
			}
			return fmt.Sprintf("%.1f×", x/y)
		}
		p("| %s | %d | %s | %s | %s | %s |\n", c.Scenario, c.Tables, ratio(b.VersionsPerTableMinute, a.VersionsPerTableMinute),
			ratio(float64(b.FilesCreated), float64(a.FilesCreated)), ratio(b.CPUShare, a.CPUShare), ratio(b.RestartSeconds, a.RestartSeconds))
	}
}
