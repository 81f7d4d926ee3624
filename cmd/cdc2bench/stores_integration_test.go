//go:build integration

package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestE2EOnGCSEmulator runs a tiny e2e with the tables on the full tier's
// fake-gcs-server: the commits it counts are read back from the emulator's
// _delta_log, so the tables landed there.
func TestE2EOnGCSEmulator(t *testing.T) {
	gcs := fulltier.GCSEndpoint(t)
	brokers := strings.Join(fulltier.KafkaBrokers(t), ",")
	out := filepath.Join(t.TempDir(), "result.json")
	err := e2eCmd(t.Context(), []string{"-brokers", brokers, "-out", out, "-events", "5000", "-keys", "500", "-live", "0",
		"-store", "gcs", "-endpoint", gcs}, io.Discard)
	require.NoError(t, err)
	var res e2ebench.Result
	require.NoError(t, readJSON(out, &res))
	require.EqualValues(t, 5000, res.Events)
	require.Positive(t, res.Commits)
	require.Positive(t, res.EventsPerSecond)
}
