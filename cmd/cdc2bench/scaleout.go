package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
)

// scaleOutCmd is `cdc2bench scaleout`: one table's backlog on the real
// broker, consumed by one and then by several `cdc2delta run` instances
// of one group, each held to a core (e2ebench.RunScaleOut).
func scaleOutCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fset := flag.NewFlagSet("scaleout", flag.ContinueOnError)
	fset.SetOutput(stderr)
	brokers := fset.String("brokers", "", "Kafka bootstrap addresses, comma separated (required)")
	bin := fset.String("bin", "", "cdc2delta binary (required)")
	out := fset.String("out", "", "result JSON file (required)")
	root := fset.String("root", "", "directory for the tables and the runs' logs (required)")
	instances := fset.String("instances", "1,2", "comma-separated group sizes, run one after the other")
	events := fset.Int("events", 600_000, "backlog events")
	keys := fset.Int("keys", 100_000, "keys of the table")
	extra := fset.String("yaml", "", "YAML appended to each instance's configuration")
	brokerPID := fset.Int("broker-pid", 0, "the broker's process id, whose CPU time is reported (0: not reported)")
	quota := fset.Float64("cpu-quota", 0, "also hold each instance to this many cores of CPU time with a cgroup (root; 0: taskset alone)")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *brokers == "" || *bin == "" || *out == "" || *root == "" || fset.NArg() > 0 {
		return fmt.Errorf("%w: scaleout needs -brokers, -bin, -out and -root (see -h)", errUsage)
	}
	var sizes []int
	for f := range strings.SplitSeq(*instances, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("%w: -instances %q", errUsage, *instances)
		}
		sizes = append(sizes, n)
	}
	res, err := e2ebench.RunScaleOut(ctx, e2ebench.ScaleOutConfig{Brokers: strings.Split(*brokers, ","), Binary: *bin,
		Root: *root, Instances: sizes, Events: *events, Keys: *keys, ExtraYAML: *extra, BrokerPID: *brokerPID, CPUQuota: *quota, Log: stderr})
	if err != nil {
		return err
	}
	if res.Ratio > 0 {
		fmt.Fprintf(stderr, "throughput of %d instances over one: %.2f×\n", sizes[len(sizes)-1], res.Ratio)
	}
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(*out, append(js, '\n'), 0o644)
}
