package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// describeMachine reads the CPU count, model and memory of this machine.
func describeMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
				m.MemGiB = kb / (1 << 20)
			}
		}
	}
	return m
}

// writeReport writes results.json and BENCHMARKS.md, then the plots.
func (o *orchestrator) writeReport(ctx context.Context) error {
	if err := writeJSON(filepath.Join(o.cfg.Out, "results.json"), &o.res); err != nil {
		return err
	}
	var plotErr error
	if o.cfg.Python != "" && o.cfg.Peers != "" && len(o.res.Workloads) > 0 && ctx.Err() == nil {
		cmd := exec.Command(o.cfg.Python, o.cfg.Peers, "plot", "--results", filepath.Join(o.cfg.Out, "results.json"), "--out", filepath.Join(o.cfg.Out, "plots"))
		cmd.Stdout, cmd.Stderr = o.cfg.Progress, o.cfg.Progress
		if _, err := runSampled(ctx, cmd, time.Second); err != nil {
			plotErr = fmt.Errorf("plotting: %w", err)
		}
	}
	f, err := os.Create(filepath.Join(o.cfg.Out, "BENCHMARKS.md"))
	if err != nil {
		return err
	}
	renderReport(f, &o.res, func(name string) bool {
		_, err := os.Stat(filepath.Join(o.cfg.Out, "plots", name+".png"))
		return err == nil
	})
	if err := f.Close(); err != nil {
		return err
	}
	return plotErr
}

// writePartial writes results.json and BENCHMARKS.md (without plots) so
// far, marked as partial.
func (o *orchestrator) writePartial() error {
	r := o.res
	r.Seconds = time.Since(r.Started).Seconds()
	r.Notes = append(slices.Clone(r.Notes), "partial: the run was still going when this was written")
	if err := writeJSON(filepath.Join(o.cfg.Out, "results.json"), &r); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(o.cfg.Out, "BENCHMARKS.md"))
	if err != nil {
		return err
	}
	renderReport(f, &r, func(string) bool { return false })
	return f.Close()
}

// peerSystems are the systems cdc2delta-dv is compared with, in order.
var peerSystems = []string{sysRS, sysSpDV, sysSpCoW, sysCoW}

// ratio formats a/b as "12.3×", or "–" when either is missing.
func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "–"
	}
	r := a / b
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2g×", r)
}

// renderReport writes the Markdown report; hasPlot says whether
// plots/<workload>.png exists.
func renderReport(w io.Writer, r *results, hasPlot func(string) bool) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# cdc2delta benchmarks\n\n")
	if len(r.Failures) > 0 {
		p("**This run FAILED** — its figures are not valid:\n\n")
		for _, f := range r.Failures {
			p("- %s\n", strings.ReplaceAll(f, "\n", " "))
		}
		p("\n")
	}
	p("Preset `%s`, run %s, %.0f s in all. Command: `%s`.\n\n", r.Preset, r.Started.Format(time.RFC3339), r.Seconds, r.Command)
	p("Machine: %d CPUs (%s), %.1f GiB memory, %s, %s.\n\n", r.Machine.CPUs, r.Machine.CPUModel, r.Machine.MemGiB, r.Machine.OS, r.Machine.Go)
	if len(r.Versions) > 0 {
		p("Versions: ")
		for i, k := range slices.Sorted(maps.Keys(r.Versions)) {
			if i > 0 {
				p(", ")
			}
			p("%s %s", k, r.Versions[k])
		}
		p(".\n\n")
	}
	p(`## Method

- One starting table per run, written by cdc2delta (protocol 3,7 with deletion vectors for
  cdc2delta-dv and spark-dv; legacy protocol 1,2 for cdc2delta-cow, spark-cow and delta-rs,
  which does not write deletion vectors), copied per system; every system gets the same
  Parquet batches of change events and must keep, per key, the newest event and apply it
  only when it is newer than the stored row.
- Time per batch covers dedup + MERGE + commit, with the batch already in memory; rows/s is
  events applied over the summed batch times. CPU and peak RSS are sampled every 100 ms over
  the runner's whole process tree (the JVM for Spark), start-up included. Bytes per changed
  row is the growth of the table directory over the events applied. Full-scan read time is
  delta-rs → pyarrow over the final table (median of 3).
- cdc2delta writes local files without fsync, like the peers. Spark runs local[2].
- Every workload ends by checking that all systems' tables hold the same rows (row count
  and an order-independent checksum over all columns) and the row count the generator
  expects; the run fails otherwise.

`)
	p("## Summary: cdc2delta-dv against each peer\n\n")
	p("Throughput ratio (rows/s of cdc2delta-dv ÷ peer), p50 latency ratio (peer ÷ cdc2delta-dv) and peak-RSS ratio (peer ÷ cdc2delta-dv); higher is better for cdc2delta.\n\n")
	p("| workload |")
	for _, s := range peerSystems {
		p(" vs %s (rows/s, p50, RSS) |", s)
	}
	p("\n|---|")
	for range peerSystems {
		p("---|")
	}
	p("\n")
	for i := range r.Workloads {
		wr := &r.Workloads[i]
		p("| %s |", wr.Name)
		dv, ok := wr.system(sysDV)
		for _, s := range peerSystems {
			peer, pok := wr.system(s)
			if !ok || !pok || dv.Error != "" || peer.Error != "" {
				p(" – |")
				continue
			}
			p(" %s, %s, %s |", ratio(dv.RowsPerSecond, peer.RowsPerSecond), ratio(peer.P50Millis, dv.P50Millis), ratio(peer.PeakRSSMiB, dv.PeakRSSMiB))
		}
		p("\n")
	}
	p("\n")
	for i := range r.Workloads {
		renderWorkload(w, &r.Workloads[i], hasPlot)
	}
	if r.E2E != nil {
		renderE2E(w, r.E2E)
	}
	renderSettings(w, r)
	if len(r.Notes) > 0 {
		p("## Notes\n\n")
		for _, n := range r.Notes {
			p("- %s\n", n)
		}
	}
}

// renderSettings lists each system's configuration as its runner reported
// it (first workload that ran it).
func renderSettings(w io.Writer, r *results) {
	seen := map[string]bool{}
	var lines []string
	for _, wr := range r.Workloads {
		for _, s := range wr.Systems {
			if seen[s.System] || len(s.Settings) == 0 {
				continue
			}
			seen[s.System] = true
			data, err := json.Marshal(s.Settings)
			if err != nil {
				continue
			}
			lines = append(lines, fmt.Sprintf("- %s: `%s`\n", s.System, data))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "## Settings\n\n%s\n", strings.Join(lines, ""))
}

func renderWorkload(w io.Writer, wr *workloadResult, hasPlot func(string) bool) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## Workload %s: %s\n\n", wr.Name, wr.Title)
	p("%d batches of %d events into a table of %d rows (%d rows at the end).\n\n", wr.Batches, wr.BatchSize, wr.BaseRows, wr.ExpectedRows)
	if len(wr.Systems) > 0 {
		p("| system | p50 ms/batch | p99 ms/batch | rows/s | CPU s | peak RSS MiB | bytes/changed row | full-scan read s | setup s |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range wr.Systems {
			if s.Error != "" {
				p("| %s | failed: %s |||||||\n", s.System, strings.ReplaceAll(s.Error, "|", "/"))
				continue
			}
			p("| %s | %.1f | %.1f | %.0f | %.1f | %.0f | %.0f | %.3f | %.2f |\n", s.System, s.P50Millis, s.P99Millis, s.RowsPerSecond, s.CPUSeconds, s.PeakRSSMiB, s.BytesPerChange, s.ReadSeconds, s.SetupSeconds)
		}
		p("\n")
	}
	if len(wr.Systems) > 0 {
		if wr.ChecksumsEqual {
			var sum string
			if len(wr.Systems) > 0 {
				sum = wr.Systems[0].Checksum
			}
			p("Final tables: all equal, %d rows, checksum `%s`.\n\n", wr.ExpectedRows, sum)
		} else {
			p("Final tables: **NOT EQUAL** (see failures above).\n\n")
		}
	}
	for _, n := range wr.Notes {
		p("- %s\n", n)
	}
	if len(wr.Notes) > 0 {
		p("\n")
	}
	if hasPlot(wr.Name) {
		p("![time per batch against table size, workload %s](plots/%s.png)\n\n", wr.Name, wr.Name)
	}
}
