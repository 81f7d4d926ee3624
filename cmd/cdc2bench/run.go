package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The systems cdc2bench compares.
const (
	sysDV    = "cdc2delta-dv"
	sysCoW   = "cdc2delta-cow"
	sysRS    = "deltars"
	sysSpDV  = "spark-dv"
	sysSpCoW = "spark-cow"
	sysE2E   = "cdc2delta-e2e"
)

// allSystems are the systems in report order.
var allSystems = []string{sysDV, sysCoW, sysRS, sysSpDV, sysSpCoW, sysE2E}

// batchSystems are the systems fed the workloads' batch files; sysE2E runs
// its own workload from the broker.
func batchSystems(systems []string) []string {
	return slices.DeleteFunc(slices.Clone(systems), func(s string) bool { return s == sysE2E })
}

// s3Systems are the systems that run on the S3 endpoint.
var s3Systems = []string{sysDV, sysRS}

// usesDVBase reports whether a system starts from base-dv (protocol 3,7)
// rather than base-legacy. delta-rs cannot write tables with deletion
// vectors, so it merges copy-on-write like the -cow systems.
func usesDVBase(system string) bool { return system == sysDV || system == sysSpDV }

// benchConfig is one orchestrator run.
type benchConfig struct {
	Preset    preset
	Out       string
	Systems   []string
	Workloads []workload
	Seed      uint64
	// Self is the cdc2bench binary re-executed as `apply`.
	Self string
	// Python runs Peers (scripts/py/bench_peers.py).
	Python     string
	Peers      string
	S3Endpoint string
	// Brokers are the Kafka bootstrap addresses of cdc2delta-e2e.
	Brokers  string
	Command  string
	Progress io.Writer
	// Interval is the process sampling period.
	Interval time.Duration
}

// orchestrator runs the workloads and keeps the results.
type orchestrator struct {
	cfg benchConfig
	res results
	s3  *s3Bench
}

func (o *orchestrator) logf(format string, args ...any) {
	fmt.Fprintf(o.cfg.Progress, "[%s] "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
}

// runBench runs every selected workload on every selected system, writes
// results.json and BENCHMARKS.md, and fails when any system failed or the
// final tables differ.
func runBench(ctx context.Context, cfg benchConfig) (*results, error) {
	o := &orchestrator{cfg: cfg}
	o.res = results{Preset: cfg.Preset.Name, Command: cfg.Command, Started: time.Now().UTC(), Machine: describeMachine(), Versions: map[string]string{"cdc2delta": moduleVersion()}}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	start := time.Now()
	err := o.run(ctx)
	if err != nil {
		o.res.Failures = append(o.res.Failures, err.Error())
	}
	o.res.Seconds = time.Since(start).Seconds()
	if werr := o.writeReport(ctx); werr != nil {
		o.res.Failures = append(o.res.Failures, werr.Error())
	}
	if len(o.res.Failures) > 0 {
		return &o.res, fmt.Errorf("benchmark failed:\n  %s", strings.Join(o.res.Failures, "\n  "))
	}
	return &o.res, nil
}

func (o *orchestrator) run(ctx context.Context) error {
	cfg := o.cfg
	systems := batchSystems(cfg.Systems)
	needDV := slices.ContainsFunc(systems, usesDVBase) && len(cfg.Workloads) > 0
	needLegacy := slices.ContainsFunc(systems, func(s string) bool { return !usesDVBase(s) }) && len(cfg.Workloads) > 0
	bases := map[bool]string{true: filepath.Join(cfg.Out, "base-dv"), false: filepath.Join(cfg.Out, "base-legacy")}
	for dv, need := range map[bool]bool{true: needDV, false: needLegacy} {
		if !need {
			continue
		}
		if err := os.RemoveAll(bases[dv]); err != nil {
			return err
		}
		t0 := time.Now()
		o.logf("building %s (%d rows)", filepath.Base(bases[dv]), cfg.Preset.BaseRows)
		if err := buildBase(ctx, bases[dv], cfg.Seed, cfg.Preset.BaseRows, dv); err != nil {
			return err
		}
		o.logf("built %s in %.1fs", filepath.Base(bases[dv]), time.Since(t0).Seconds())
	}
	for _, w := range cfg.Workloads {
		if err := ctx.Err(); err != nil {
			return err
		}
		wr, err := o.runWorkload(ctx, w, bases)
		if wr != nil {
			o.res.Workloads = append(o.res.Workloads, *wr)
		}
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			o.res.Failures = append(o.res.Failures, err.Error())
			o.logf("FAILED: %v", err)
		}
		// A long run that dies later still leaves what it measured.
		if err := o.writePartial(); err != nil {
			return err
		}
	}
	if slices.Contains(cfg.Systems, sysE2E) {
		if cfg.Brokers == "" {
			o.res.Notes = append(o.res.Notes, sysE2E+" skipped: no Kafka brokers (-brokers or $CDC2DELTA_KAFKA_BROKERS)")
			o.logf("%s: skipped, no brokers", sysE2E)
			return nil
		}
		o.res.E2E = o.runE2E(ctx)
		if o.res.E2E.Error != "" {
			o.res.Failures = append(o.res.Failures, sysE2E+": "+o.res.E2E.Error)
		}
	}
	return nil
}

// workloadSeed derives a workload's seed from the run's, so selecting a
// subset of workloads does not change their batches. 6-local and 6-s3 share
// their batches, so that local disk and S3 compare on the same events.
func workloadSeed(seed uint64, name string) uint64 {
	if workloadGroup(name) == "6" {
		name = "6"
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return seed ^ h.Sum64()
}

func (o *orchestrator) runWorkload(ctx context.Context, w workload, bases map[bool]string) (*workloadResult, error) {
	cfg := o.cfg
	dir := filepath.Join(cfg.Out, w.Name)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	wr := &workloadResult{Name: w.Name, Title: w.Title, BatchSize: w.Batch, Batches: w.Batches, BaseRows: cfg.Preset.BaseRows}
	systems := batchSystems(cfg.Systems)
	if w.S3 {
		systems = slices.DeleteFunc(slices.Clone(systems), func(s string) bool { return !slices.Contains(s3Systems, s) })
		wr.Notes = append(wr.Notes, "Spark is not run on S3: reading s3a:// needs hadoop-aws and the AWS SDK bundle, which the harness does not install.")
		if cfg.S3Endpoint == "" {
			wr.Notes = append(wr.Notes, "skipped: no S3 endpoint (-s3-endpoint)")
			o.logf("workload %s: skipped, no S3 endpoint", w.Name)
			return wr, nil
		}
		if o.s3 == nil {
			s, err := newS3Bench(ctx, cfg.S3Endpoint, fmt.Sprintf("cdc2bench-%d", time.Now().UnixNano()))
			if err != nil {
				return wr, err
			}
			o.s3 = s
		}
	}
	if len(systems) == 0 {
		wr.Notes = append(wr.Notes, "skipped: none of the selected systems runs this workload")
		return wr, nil
	}

	g := newGenerator(workloadSeed(cfg.Seed, w.Name), cfg.Preset.BaseRows)
	batches := g.batches(w)
	wr.ExpectedRows = g.rows
	batchDir := filepath.Join(dir, "batches")
	if err := os.MkdirAll(batchDir, 0o755); err != nil {
		return wr, err
	}
	for i, b := range batches {
		if err := writeBatch(filepath.Join(batchDir, batchFileName(i+1)), b.Changes); err != nil {
			return wr, err
		}
	}
	o.logf("workload %s: %s; %d batches of %d events, %d rows before, %d after", w.Name, w.Title, len(batches), w.Batch, cfg.Preset.BaseRows, g.rows)

	tables := map[string]string{}
	for _, sys := range systems {
		sr := o.runSystem(ctx, w, sys, bases[usesDVBase(sys)], batchDir, batches)
		if sr.Error != "" {
			o.res.Failures = append(o.res.Failures, fmt.Sprintf("workload %s, %s: %s", w.Name, sys, sr.Error))
			o.logf("workload %s %s: FAILED: %s", w.Name, sys, sr.Error)
		} else {
			tables[sys] = sr.Table
		}
		wr.Systems = append(wr.Systems, sr)
		if err := ctx.Err(); err != nil {
			return wr, err
		}
	}
	if len(tables) == 0 {
		return wr, nil
	}
	checked, err := o.check(ctx, w, tables)
	if err != nil {
		return wr, fmt.Errorf("workload %s: checking tables: %w", w.Name, err)
	}
	for i := range wr.Systems {
		s := &wr.Systems[i]
		if t, ok := checked.Tables[s.System]; ok {
			s.TableRows, s.Checksum, s.ReadSeconds = deref(t.Rows), deref(t.Checksum), deref(t.ReadSeconds)
		}
	}
	for k, v := range checked.Versions {
		o.res.Versions[k] = v
	}
	names := slices.Sorted(maps.Keys(tables))
	if err := compareTables(w.Name, checked, names, wr.ExpectedRows); err != nil {
		o.logf("CHECKSUM MISMATCH: %v", err)
		return wr, err
	}
	wr.ChecksumsEqual = true
	o.logf("workload %s: all %d tables equal (%d rows)", w.Name, len(names), wr.ExpectedRows)
	return wr, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// runSystem copies the base table for sys, applies the batches with it
// under the sampler, and measures what it wrote.
func (o *orchestrator) runSystem(ctx context.Context, w workload, sys, base, batchDir string, batches []generatedBatch) systemResult {
	cfg := o.cfg
	sr := systemResult{System: sys}
	sysDir, err := filepath.Abs(filepath.Join(cfg.Out, w.Name, sys))
	if err != nil {
		sr.Error = err.Error()
		return sr
	}
	local := filepath.Join(sysDir, "table")
	if err := copyTable(base, local); err != nil {
		sr.Error = fmt.Sprintf("copying the base table: %v", err)
		return sr
	}
	sr.Table = local
	var prefix string
	if w.S3 {
		prefix = w.Name + "/" + sys + "/table"
		if err := o.s3.upload(ctx, local, prefix); err != nil {
			sr.Error = err.Error()
			return sr
		}
		sr.Table = o.s3.url(prefix)
	}
	size := func() (int64, error) {
		if w.S3 {
			return o.s3.bytes(ctx, prefix)
		}
		return dirBytes(local)
	}
	before, err := size()
	if err != nil {
		sr.Error = err.Error()
		return sr
	}
	outFile := filepath.Join(sysDir, "result.json")
	cmd := o.command(sys, sr.Table, batchDir, outFile)
	logFile, err := os.Create(filepath.Join(sysDir, "stderr.log"))
	if err != nil {
		sr.Error = err.Error()
		return sr
	}
	defer logFile.Close()
	// Runner output goes to the log and, for progress, to our stderr.
	cmd.Stdout = logFile
	cmd.Stderr = io.MultiWriter(logFile, cfg.Progress)
	o.logf("workload %s %s: start (%d batches)", w.Name, sys, len(batches))
	u, err := runSampled(ctx, cmd, cfg.Interval)
	sr.CPUSeconds, sr.PeakRSSMiB, sr.WallSeconds = u.CPUSeconds, float64(u.PeakRSS)/(1<<20), u.WallSeconds
	if err != nil {
		sr.Error = fmt.Sprintf("%s failed: %v (see %s)", strings.Join(cmd.Args, " "), err, logFile.Name())
		return sr
	}
	var rr runnerResult
	if err := readJSON(outFile, &rr); err != nil {
		sr.Error = err.Error()
		return sr
	}
	if len(rr.Batches) != len(batches) {
		sr.Error = fmt.Sprintf("runner reported %d batches, want %d", len(rr.Batches), len(batches))
		return sr
	}
	for i := range rr.Batches {
		rr.Batches[i].TableRowsBefore = batches[i].TableRowsBefore
	}
	sr.SetupSeconds, sr.Batches, sr.Versions, sr.Settings, sr.Extra = rr.SetupSeconds, rr.Batches, rr.Versions, rr.Settings, rr.Extra
	sr.summarize()
	after, err := size()
	if err != nil {
		sr.Error = err.Error()
		return sr
	}
	sr.BytesWritten = after - before
	if sr.Events > 0 {
		sr.BytesPerChange = float64(sr.BytesWritten) / float64(sr.Events)
	}
	o.logf("workload %s %s: done: %d events in %.2fs apply (%.0f rows/s, p50 %.1f ms), CPU %.1fs, peak RSS %.0f MiB, wall %.1fs",
		w.Name, sys, sr.Events, sr.ApplySeconds, sr.RowsPerSecond, sr.P50Millis, sr.CPUSeconds, sr.PeakRSSMiB, sr.WallSeconds)
	return sr
}

// command builds the runner of sys; runSampled ties it to the context.
func (o *orchestrator) command(sys, table, batchDir, out string) *exec.Cmd {
	cfg := o.cfg
	var args []string
	name := cfg.Python
	switch sys {
	case sysDV, sysCoW:
		name = cfg.Self
		args = []string{"apply", "-mode", strings.TrimPrefix(sys, "cdc2delta-"), "-table", table, "-batches", batchDir, "-out", out}
		if cfg.S3Endpoint != "" {
			args = append(args, "-s3-endpoint", cfg.S3Endpoint)
		}
	default:
		args = []string{cfg.Peers, "run", "--system", sys, "--table", table, "--batches", batchDir, "--out", out}
		if strings.HasPrefix(table, "s3://") {
			args = append(args, "--s3-endpoint", cfg.S3Endpoint)
		}
	}
	return exec.Command(name, args...)
}

// check runs `bench_peers.py check` over the systems' tables.
func (o *orchestrator) check(ctx context.Context, w workload, tables map[string]string) (checkOutput, error) {
	cfg := o.cfg
	out := filepath.Join(cfg.Out, w.Name, "check.json")
	args := []string{cfg.Peers, "check", "--out", out}
	for _, s := range slices.Sorted(maps.Keys(tables)) {
		args = append(args, "--table", s+"="+tables[s])
	}
	if w.S3 {
		args = append(args, "--s3-endpoint", cfg.S3Endpoint)
	}
	cmd := exec.Command(cfg.Python, args...)
	cmd.Stdout, cmd.Stderr = cfg.Progress, cfg.Progress
	o.logf("workload %s: checking %d tables", w.Name, len(tables))
	if _, err := runSampled(ctx, cmd, time.Second); err != nil {
		return checkOutput{}, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	var c checkOutput
	if err := readJSON(out, &c); err != nil {
		return checkOutput{}, err
	}
	return c, nil
}
