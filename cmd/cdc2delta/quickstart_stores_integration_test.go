//go:build integration

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestQuickstartOnObjectStores runs the built binary's quickstart with --dir
// on Azure (Azurite, an abfss:// URL naming a real account's host, the
// endpoint and key from the environment as a shell sets them) and on GCS
// (fake-gcs-server through STORAGE_EMULATOR_HOST), then reads every printed
// table back with delta-rs and DuckDB and compares each row with the sample
// workload's. A --dir whose container does not exist ends the quickstart
// with the table's error instead of waiting for events that never apply.
func TestQuickstartOnObjectStores(t *testing.T) {
	const events = 2*quickstartKeys + 1000
	azure := fulltier.AzureEndpoint(t)
	gcs := fulltier.GCSEndpoint(t)
	azureEnv := []string{"CDC2DELTA_AZURE_ENDPOINT=" + azure, "AZURE_STORAGE_ACCOUNT_KEY=" + fulltier.AzuriteKey}
	for _, tc := range []struct {
		name string
		dir  string
		env  []string
	}{
		{"azure", "abfss://" + fulltier.NewContainer(t, azure) + "@" + fulltier.AzuriteAccount + ".dfs.core.windows.net/qs", azureEnv},
		{"gcs", "gs://" + fulltier.NewGCSBucket(t) + "/qs", []string{"STORAGE_EMULATOR_HOST=" + gcs}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := quickstartIn(t, tc.env, "--dir", tc.dir, "--events", strconv.Itoa(events))
			require.NoError(t, err, "quickstart: %s%s", out, stderr)
			// The readers open the az:// form: DuckDB sends an abfss:// URL's
			// account host to DNS, not to the endpoint override.
			requirePrintedTables(t, out, events, strings.TrimSuffix(tc.dir, "/")+"/", azurePath)
		})
	}
	t.Run("missing container", func(t *testing.T) {
		out, stderr, err := quickstartIn(t, azureEnv, "--dir", "az://nosuchcontainer/qs", "--events", "100")
		require.Error(t, err, "a quickstart whose tables cannot open must fail: %s", out)
		require.Contains(t, stderr, "stopped before applying every event")
		require.Contains(t, stderr, "ContainerNotFound")
	})
}

// quickstartIn runs the binary's quickstart in a fresh folder with env added
// to the test's environment and returns what it printed on stdout and stderr.
func quickstartIn(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binary, append([]string{"quickstart", "--kafka-port", "0", "--registry-port", "0"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	var outb, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	err = cmd.Run()
	return outb.String(), errb.String(), err
}

// azurePath is the az://container/path form of an abfss:// URL, other URLs
// as they are.
func azurePath(u string) string {
	rest, ok := strings.CutPrefix(u, "abfss://")
	if !ok {
		return u
	}
	container, hostPath, _ := strings.Cut(rest, "@")
	_, p, _ := strings.Cut(hostPath, "/")
	return "az://" + container + "/" + p
}
