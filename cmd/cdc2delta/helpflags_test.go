package main

import (
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHelpListsOnlyRelevantFlags: each command taking --config lists the
// overrides it uses, and no other: --metrics-listen only where something serves
// metrics, --log-level only where something logs, --tables-path only where
// tables are read.
func TestHelpListsOnlyRelevantFlags(t *testing.T) {
	tests := map[string][]string{
		"run":      {"brokers", "config", "group-id", "log-level", "metrics-listen", "tables-path"},
		"validate": {"brokers", "config", "group-id", "log-level", "metrics-listen", "tables-path"},
		"offsets":  {"brokers", "config", "group-id", "json", "tables-path", "timeout"},
		"replay":   {"brokers", "config", "group-id", "partition", "timeout", "to-earliest", "to-offset", "to-timestamp", "topic"},
		"skip":     nil, // checked below against its own flags
		"status":   {"config", "group"},
	}
	flagLine := regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`)
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			r := cli(t, name, "--help")
			require.Equal(t, exitOK, r.code, r.stderr)
			var got []string
			for _, m := range flagLine.FindAllStringSubmatch(r.stdout, -1) {
				got = append(got, m[1])
			}
			if name == "skip" {
				require.NotContains(t, got, "metrics-listen", r.stdout)
				require.Contains(t, got, "log-level", r.stdout)
				return
			}
			slices.Sort(got)
			require.Equal(t, want, got, r.stdout)
		})
	}
}
