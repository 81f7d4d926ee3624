//go:build integration

package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestFrozenGCSStallsWithinBudget runs the binary against the real broker and a
// private fake-gcs-server, shows that it applies, then freezes the emulator (SIGSTOP:
// it accepts connections and never answers). Within the retry budget plus one request
// timeout every table must be stalled in /readyz (503), and the log must name GCS, the
// endpoint and the operation that hung. After SIGCONT everything must be applied
// exactly once.
func TestFrozenGCSStallsWithinBudget(t *testing.T) {
	const (
		requestTimeout = 2 * time.Second
		budget         = 6 * time.Second
	)
	brokers := fulltier.KafkaBrokers(t)
	gcs := fulltier.StartFakeGCS(t)
	const bucket = "frozen"
	gcs.CreateBucket(bucket)
	prefix := fmt.Sprintf("frozengcs%d", time.Now().UnixNano())
	src := newCrashSource(t, brokers, prefix, dbzgen.WorkloadOptions{Seed: 43, Keys: 100, Snapshot: true, MaxTxEvents: 3})
	gc, err := gcsstore.NewClient(t.Context(), gcsstore.Options{Endpoint: gcs.Endpoint})
	require.NoError(t, err)
	run := startStoreRun(t, src, brokers[0], prefix, storeTables{scheme: "gs", bucket: bucket,
		storage: fmt.Sprintf("{gcs: {endpoint: %q, request_timeout: %s}}", gcs.Endpoint, requestTimeout),
		open:    func(prefix string) (deltalog.Store, error) { return gc.Store(bucket, prefix) }}, budget)

	run.stallsWhileFrozen(gcs, budget, requestTimeout, storeStall{name: "GCS", at: "GCS at " + gcs.Endpoint,
		ops: "get|put|list|delete", object: "gs://" + bucket + "/"})
}
