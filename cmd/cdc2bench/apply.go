package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// runnerResult is what every system's runner writes (the contract's JSON).
type runnerResult struct {
	System       string            `json:"system"`
	SetupSeconds float64           `json:"setup_seconds"`
	Batches      []batchTiming     `json:"batches"`
	Versions     map[string]string `json:"versions,omitempty"`
	// Settings are the runner's configuration (Spark confs, merge options).
	Settings map[string]any `json:"settings,omitempty"`
	// Extra carries runner-specific figures (cdc2delta: files and DVs written).
	Extra map[string]float64 `json:"extra,omitempty"`
}

// batchTiming is one applied batch.
type batchTiming struct {
	Index   int     `json:"index"`
	Rows    int     `json:"rows"`
	Seconds float64 `json:"seconds"`
	// TableRowsBefore is filled in by the orchestrator.
	TableRowsBefore int `json:"table_rows_before,omitempty"`
}

// applyCmd is `cdc2bench apply`: it applies every batch file to a table with
// cdc2delta's Sink, timing Apply only (batches are read and converted first).
func applyCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fset := flag.NewFlagSet("apply", flag.ContinueOnError)
	fset.SetOutput(stderr)
	mode := fset.String("mode", "dv", "merge mode: dv or cow")
	table := fset.String("table", "", "table directory or s3://bucket/prefix")
	batches := fset.String("batches", "", "directory of batch files")
	out := fset.String("out", "", "result JSON file")
	endpoint := fset.String("s3-endpoint", "", "S3 endpoint URL (path style)")
	fsync := fset.Bool("fsync", false, "fsync local writes (the peers do not)")
	memprofile := fset.String("memprofile", "", "write a heap profile after the last batch (diagnosis of peak RSS)")
	cpuprofile := fset.String("cpuprofile", "", "write a CPU profile of the batches (not of opening the table)")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *table == "" || *batches == "" || *out == "" || (*mode != "dv" && *mode != "cow") {
		return fmt.Errorf("%w: apply needs -mode dv|cow, -table, -batches and -out", errUsage)
	}
	files, err := batchFiles(*batches)
	if err != nil {
		return err
	}
	loaded := make([][]change, len(files))
	for i, f := range files {
		if loaded[i], err = readBatch(f); err != nil {
			return err
		}
	}
	res := runnerResult{System: "cdc2delta-" + *mode, Versions: map[string]string{"cdc2delta": moduleVersion()}, Extra: map[string]float64{},
		Settings: map[string]any{"merge_mode": *mode, "fsync": *fsync, "target_file_size": "default"}}
	start := time.Now()
	store, err := openStore(ctx, *table, *endpoint, !*fsync)
	if err != nil {
		return err
	}
	mm := merge.ModeDV
	if *mode == "cow" {
		mm = merge.ModeCoW
	}
	// No tail file: the workloads compare MERGE strategies with the peers,
	// which have none (ADR 0032's tail is a trickle's, and off for them).
	sink, err := merge.Open(ctx, merge.Options{Store: store, TableName: "orders", Mode: mm, TailFileSize: -1})
	if err != nil {
		return err
	}
	res.SetupSeconds = time.Since(start).Seconds()
	if *cpuprofile != "" {
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
	}
	for i, cs := range loaded {
		b := processorBatch(cs)
		t0 := time.Now()
		ar, err := sink.Apply(ctx, b)
		if err != nil {
			return fmt.Errorf("applying batch %d: %w", i+1, err)
		}
		took := time.Since(t0)
		res.Batches = append(res.Batches, batchTiming{Index: i + 1, Rows: len(cs), Seconds: took.Seconds()})
		fmt.Fprintf(stderr, "%s: batch %d/%d: %d events in %.3fs (elapsed %.1fs)\n", res.System, i+1, len(loaded), len(cs), took.Seconds(), time.Since(start).Seconds())
		res.Extra["files_added"] += float64(ar.FilesAdded)
		res.Extra["files_removed"] += float64(ar.FilesRemoved)
		res.Extra["deletion_vectors"] += float64(ar.DeletionVectors)
	}
	if *memprofile != "" {
		if err := writeHeapProfile(*memprofile); err != nil {
			return err
		}
	}
	return writeJSON(*out, res)
}

// startCPUProfile profiles the process into path until the returned stop runs.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting CPU profile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeHeapProfile writes the live heap (after a collection) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("writing heap profile %s: %w", path, err)
	}
	return f.Close()
}

// openStore opens a local directory or an s3:// URL.
func openStore(ctx context.Context, table, endpoint string, noSync bool) (deltalog.Store, error) {
	if strings.HasPrefix(table, "s3://") {
		o, err := s3store.ParseURL(table)
		if err != nil {
			return nil, err
		}
		o.Endpoint, o.UsePathStyle = endpoint, true
		return s3store.New(ctx, o)
	}
	return localstore.New(localstore.Options{Dir: table, NoSync: noSync})
}

// moduleVersion is the VCS revision the binary was built from, if known.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return bi.Main.Version
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

// errUsage marks command-line mistakes (exit code 2).
var errUsage = errors.New("cdc2bench: usage")
