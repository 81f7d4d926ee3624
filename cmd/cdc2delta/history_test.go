package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHistoryForeignCommitInfo reads commitInfo written by Databricks and delta-rs:
// parameters and metrics of any JSON type and the user, job, notebook, cluster and
// user metadata fields all show.
func TestHistoryForeignCommitInfo(t *testing.T) {
	dir := filepath.Join("testdata", "foreign-history")

	r := cli(t, "history", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 5)
	require.Equal(t, []string{"VERSION", "TIMESTAMP", "USER", "OPERATION", "PARAMETERS", "JOB", "NOTEBOOK", "CLUSTER", "USER", "METADATA", "METRICS"},
		strings.Fields(lines[0]))
	tests := []struct {
		version string
		want    []string
	}{
		{"3", []string{"WRITE", `{"source":"airflow"}`,
			"execution_time_ms=3, num_added_files=0, num_added_rows=0, num_partitions=0, num_removed_files=0, num_retries=0"}},
		{"2", []string{"RESTORE", "timestamp=null, version=0", "notebookId=1234567890", "ana@example.com", "numRestoredFiles=0"}},
		{"1", []string{"svc-etl@example.com", "mode=Append, partitionBy=[], statsOnLoad=false",
			"jobId=987, jobName=nightly load, jobOwnerId=5353535353535353, jobRunId=555, runId=556, triggerType=cron",
			"0102-030405-abcdefgh", "backfill after incident 42", "numFiles=0, numOutputBytes=0, numOutputRows=0"}},
		{"0", []string{"CREATE TABLE", "description=null, isManaged=true, partitionBy=[], properties={}, statsOnLoad=false"}},
	}
	for i, tc := range tests {
		t.Run("version "+tc.version, func(t *testing.T) {
			line := lines[i+1]
			require.True(t, strings.HasPrefix(line, tc.version+" "), line)
			for _, w := range tc.want {
				require.Contains(t, line, w)
			}
		})
	}

	r = cli(t, "history", "--json", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	h := jsonLines(t, r.stdout)
	require.Len(t, h, 4)
	require.Equal(t, map[string]any{"execution_time_ms": float64(3), "num_added_files": float64(0), "num_added_rows": float64(0),
		"num_partitions": float64(0), "num_removed_files": float64(0), "num_retries": float64(0)}, h[0]["operationMetrics"],
		"numbers stay numbers")
	require.Equal(t, map[string]any{"version": float64(0), "timestamp": nil}, h[1]["operationParameters"])
	require.Equal(t, false, h[2]["operationParameters"].(map[string]any)["statsOnLoad"])
	require.Equal(t, "svc-etl@example.com", h[2]["userName"])
	require.Equal(t, "5353535353535353", h[2]["userId"])
	require.Equal(t, "nightly load", h[2]["job"].(map[string]any)["jobName"])
	require.Equal(t, "0102-030405-abcdefgh", h[2]["clusterId"])
	require.Equal(t, "backfill after incident 42", h[2]["userMetadata"])
	require.Equal(t, map[string]any{"notebookId": "1234567890"}, h[3]["notebook"])
}
