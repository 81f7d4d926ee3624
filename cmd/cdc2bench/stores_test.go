package main

import (
	"strings"
	"testing"

	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
)

// TestRenderStores: each store's row sets its events/s beside local disk's,
// and a store that failed or had no emulator says so instead of a number.
func TestRenderStores(t *testing.T) {
	var b strings.Builder
	renderStores(&b, []storeRun{
		{Store: "local", Result: &e2ebench.Result{Events: 1000, CatchUpSeconds: 1, EventsPerSecond: 1000, Commits: 3}},
		{Store: "s3", Result: &e2ebench.Result{Events: 1000, CatchUpSeconds: 2, EventsPerSecond: 500, Commits: 3}},
		{Store: "azure", Error: "boom"},
		{Store: "gcs"},
	})
	for _, want := range []string{
		"| local | local disk | 1000 | 1.00 | 1000 | 1.00 | 3 |",
		"| s3 | moto | 1000 | 2.00 | 500 | 0.50 | 3 |",
		"| azure | Azurite (Blob) | failed: boom |",
		"| gcs | fake-gcs-server | not run: no emulator |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
}
