// Command cdc2bench benchmarks cdc2delta's MERGE engine against delta-rs and
// Spark on the same change batches and the same machine (issue #6).
//
// Usage:
//
//	cdc2bench -preset small|full|tiny -out DIR [-systems a,b] [-workloads 1,2b,6]
//	cdc2bench apply -mode dv|cow -table DIR|s3://b/p -batches DIR -out FILE.json
//	cdc2bench e2e -brokers HOST:PORT -out FILE.json [-store local|s3|azure|gcs -endpoint URL]
//	cdc2bench stores -brokers HOST:PORT -out DIR [-s3-endpoint URL] [-azure-endpoint URL] [-gcs-endpoint URL]
//	cdc2bench many -after BIN [-before BIN] -out DIR [-tables 10,50,200] [-scenarios trickle,burst]
//	cdc2bench scaleout -brokers HOST:PORT -bin BIN -out FILE.json -root DIR [-instances 1,2]
//	cdc2bench estate -bin BIN -out DIR [-brokers HOST:PORT] [-scale N] [-rate N] [-duration D]
//
// The first form is the orchestrator: it builds the starting table once,
// generates every workload's batches as Parquet, runs each system as a
// subprocess under a process-tree sampler (peak RSS, CPU), checks that all
// final tables are equal with scripts/py/bench_peers.py, and writes
// DIR/results.json, DIR/BENCHMARKS.md and DIR/plots/. The second form is the
// cdc2delta runner the orchestrator re-executes; the third runs the
// end-to-end benchmark from a real Kafka broker (internal/harness/e2ebench) as the
// system cdc2delta-e2e, on a local directory or, through cdc2delta run's
// own store opener, on an emulated object store; the next runs it once per
// store and sets each beside local disk; the fifth runs the many-tables scenario (small
// tables changing a few times a second, e2ebench.RunMany) against one or
// two cdc2delta binaries side by side; the sixth sets the throughput of
// several instances sharing one table beside that of one, each held to a
// core (e2ebench.RunScaleOut); the seventh runs a whole estate on one
// instance (tables of three sizes loaded in bulk, a Zipf stream of updates
// over them; e2ebench.RunEstate) and judges it against the estate's goals.
// scripts/bench.sh sets up the Python environment and the S3 endpoint and runs the first form.
//
// Exit codes: 0 success, 1 a system failed or the tables differ, 2 usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	var err error
	switch {
	case len(args) > 1 && args[1] == "apply":
		err = applyCmd(ctx, args[2:], stderr)
	case len(args) > 1 && args[1] == "e2e":
		err = e2eCmd(ctx, args[2:], stderr)
	case len(args) > 1 && args[1] == "stores":
		err = storesCmd(ctx, args[2:], stderr)
	case len(args) > 1 && args[1] == "many":
		err = manyCmd(ctx, args[2:], stderr)
	case len(args) > 1 && args[1] == "estate":
		err = estateCmd(ctx, args[2:], stderr)
	case len(args) > 1 && args[1] == "scaleout":
		err = scaleOutCmd(ctx, args[2:], stderr)
	default:
		err = benchCmd(ctx, args, stderr)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, err)
		return 2
	}
	fmt.Fprintln(stderr, "cdc2bench:", err)
	return 1
}

func benchCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fset := flag.NewFlagSet("cdc2bench", flag.ContinueOnError)
	fset.SetOutput(stderr)
	presetName := fset.String("preset", "small", "size preset: tiny, small or full")
	out := fset.String("out", "", "output directory (required)")
	systems := fset.String("systems", "", "comma-separated systems to run (default: the preset's; all but full's copy-on-write ones): "+strings.Join(allSystems, ","))
	wls := fset.String("workloads", "", "comma-separated workloads (1, 2a, 2b, 2c, 3, 4, 5, 6-local, 6-s3; 2 and 6 name their group); empty: all")
	seed := fset.Uint64("seed", 1, "generator seed")
	python := fset.String("python", os.Getenv("CDC2DELTA_PYTHON"), "Python with deltalake, pyspark, duckdb (default $CDC2DELTA_PYTHON)")
	peers := fset.String("peers", defaultPeers(), "path of bench_peers.py")
	endpoint := fset.String("s3-endpoint", os.Getenv("CDC2DELTA_S3_ENDPOINT"), "S3 endpoint for workload 6-s3 (default $CDC2DELTA_S3_ENDPOINT; empty skips it)")
	brokers := fset.String("brokers", os.Getenv("CDC2DELTA_KAFKA_BROKERS"), "Kafka brokers for cdc2delta-e2e (default $CDC2DELTA_KAFKA_BROKERS; empty skips it)")
	interval := fset.Duration("sample", 100*time.Millisecond, "process sampling interval")
	if err := fset.Parse(args[1:]); err != nil {
		return err
	}
	p, ok := presets[*presetName]
	if !ok || *out == "" || fset.NArg() > 0 {
		return fmt.Errorf("%w: want -preset tiny|small|full -out DIR (see -h)", errUsage)
	}
	cfg := benchConfig{Preset: p, Out: *out, Seed: *seed, Python: *python, Peers: *peers, S3Endpoint: *endpoint, Brokers: *brokers, Progress: stderr, Interval: *interval, Command: strings.Join(args, " ")}
	var err error
	if *systems == "" {
		def := p.Systems
		if def == nil {
			def = allSystems
		}
		*systems = strings.Join(def, ",")
	}
	if cfg.Systems, err = selectSystems(*systems); err != nil {
		return err
	}
	if cfg.Workloads, err = selectWorkloads(workloads(p), *wls); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if len(batchSystems(cfg.Systems)) == 0 {
		cfg.Workloads = nil // only cdc2delta-e2e, which has its own workload
	}
	if cfg.Python == "" && slices.ContainsFunc(batchSystems(cfg.Systems), func(s string) bool { return s != sysDV && s != sysCoW }) {
		return fmt.Errorf("%w: the peers need -python or $CDC2DELTA_PYTHON", errUsage)
	}
	if cfg.Python == "" && len(cfg.Workloads) > 0 {
		return fmt.Errorf("%w: checking the tables needs -python or $CDC2DELTA_PYTHON", errUsage)
	}
	if cfg.Self, err = os.Executable(); err != nil {
		return err
	}
	_, err = runBench(ctx, cfg)
	if err == nil {
		fmt.Fprintf(stderr, "report: %s\n", filepath.Join(cfg.Out, "BENCHMARKS.md"))
	}
	return err
}

// selectSystems parses -systems.
func selectSystems(list string) ([]string, error) {
	var out []string
	for s := range strings.SplitSeq(list, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(allSystems, s) {
			return nil, fmt.Errorf("%w: unknown system %q (have %s)", errUsage, s, strings.Join(allSystems, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	// Report order, whatever the flag's order.
	slices.SortFunc(out, func(a, b string) int { return slices.Index(allSystems, a) - slices.Index(allSystems, b) })
	return out, nil
}

// defaultPeers finds bench_peers.py from $CDC2DELTA_SCRIPTS or the working
// directory (the repository root under scripts/bench.sh).
func defaultPeers() string {
	if d := os.Getenv("CDC2DELTA_SCRIPTS"); d != "" {
		return filepath.Join(d, "bench_peers.py")
	}
	p, err := filepath.Abs(filepath.Join("scripts", "py", "bench_peers.py"))
	if err != nil {
		return ""
	}
	return p
}
