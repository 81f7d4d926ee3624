package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
)

// storeRun is one store's end-to-end run.
type storeRun struct {
	Store    string           `json:"store"`
	Endpoint string           `json:"endpoint,omitempty"`
	Error    string           `json:"error,omitempty"`
	Result   *e2ebench.Result `json:"result,omitempty"`
}

// storesCmd is `cdc2bench stores`: the e2e workload of a preset once per
// store, one fresh process each, one after the other, reported as events/s
// and as the ratio to local disk. A store without an emulator is reported
// as not run.
func storesCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fset := flag.NewFlagSet("stores", flag.ContinueOnError)
	fset.SetOutput(stderr)
	brokers := fset.String("brokers", "", "Kafka bootstrap addresses, comma separated")
	out := fset.String("out", "", "result directory: stores.json, stores.md and one directory per store")
	preset := fset.String("preset", "tiny", "workload size: tiny, small, full (as cdc2bench's e2e)")
	endpoints := map[string]*string{
		"s3":    fset.String("s3-endpoint", "", "moto's URL (empty: no s3 run)"),
		"azure": fset.String("azure-endpoint", "", "Azurite's Blob URL, http://HOST:PORT/ACCOUNT (empty: no azure run)"),
		"gcs":   fset.String("gcs-endpoint", "", "fake-gcs-server's URL (empty: no gcs run)"),
	}
	if err := fset.Parse(args); err != nil {
		return err
	}
	size, ok := e2eSizes[*preset]
	if !ok {
		return fmt.Errorf("%w: -preset %q: not tiny, small or full", errUsage, *preset)
	}
	if *brokers == "" || *out == "" {
		return fmt.Errorf("%w: stores needs -brokers and -out", errUsage)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var runs []storeRun
	for _, store := range e2eStores {
		r := storeRun{Store: store}
		if p := endpoints[store]; p != nil {
			r.Endpoint = *p
		}
		if store == "local" || r.Endpoint != "" {
			fmt.Fprintf(stderr, "cdc2bench stores: %s: start (%d events)\n", store, size.Events)
			r.Result, err = runStore(ctx, self, filepath.Join(*out, store), *brokers, store, r.Endpoint, size, stderr)
			if err != nil {
				r.Error = err.Error()
			}
		}
		runs = append(runs, r)
	}
	raw, err := json.MarshalIndent(runs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "stores.json"), raw, 0o644); err != nil {
		return err
	}
	var md strings.Builder
	renderStores(&md, runs)
	fmt.Fprint(stderr, md.String())
	if err := os.WriteFile(filepath.Join(*out, "stores.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	for _, r := range runs {
		if r.Error != "" {
			return fmt.Errorf("store %s: %s", r.Store, r.Error)
		}
	}
	return nil
}

// runStore runs `cdc2bench e2e -store store` in a process of its own, so
// that no run inherits another's heap, and reads its result.
func runStore(ctx context.Context, self, dir, brokers, store, endpoint string, size e2eSize, stderr io.Writer) (*e2ebench.Result, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "result.json")
	cmd := exec.CommandContext(ctx, self, "e2e", "-brokers", brokers, "-out", out, "-events", strconv.Itoa(size.Events),
		"-keys", strconv.Itoa(size.Keys), "-live", "0", "-store", store, "-endpoint", endpoint, "-root", filepath.Join(dir, "tables"))
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	var res e2ebench.Result
	if err := readJSON(out, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// storeServers names what serves each store in the runs.
var storeServers = map[string]string{"local": "local disk", "s3": "moto", "azure": "Azurite (Blob)", "gcs": "fake-gcs-server"}

// renderStores writes the table of the runs, each as events/s and as the
// ratio to local disk's.
func renderStores(w io.Writer, runs []storeRun) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## End to end per store (cdc2delta-e2e)\n\n")
	var local float64
	for _, r := range runs {
		if r.Store == "local" && r.Result != nil {
			local = r.Result.EventsPerSecond
		}
	}
	p("The same workload on each store, through cdc2delta run's storage configuration: local disk synced as run syncs it; the object stores are emulators (in memory, on loopback), so a ratio says what the store's protocol path costs here, not what a cloud would do.\n\n")
	p("| store | server | events | catch-up s | events/s | ratio to local disk | commits |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range runs {
		switch {
		case r.Error != "":
			p("| %s | %s | failed: %s | | | | |\n", r.Store, storeServers[r.Store], r.Error)
		case r.Result == nil:
			p("| %s | %s | not run: no emulator | | | | |\n", r.Store, storeServers[r.Store])
		default:
			ratio := "–"
			if local > 0 {
				ratio = fmt.Sprintf("%.2f", r.Result.EventsPerSecond/local)
			}
			p("| %s | %s | %d | %.2f | %.0f | %s | %d |\n", r.Store, storeServers[r.Store], r.Result.Events, r.Result.CatchUpSeconds,
				r.Result.EventsPerSecond, ratio, r.Result.Commits)
		}
	}
	p("\n")
}
