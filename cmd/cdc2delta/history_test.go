package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// TestHistoryForeignCommitInfo reads commitInfo written by Databricks and delta-rs:
// parameters and metrics of any JSON type and the user, job, notebook, cluster and
// user metadata fields all show.
func TestHistoryForeignCommitInfo(t *testing.T) {
	dir := filepath.Join("testdata", "foreign-history")

	r := cli(t, "history", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	header, rows := historyRows(t, r.stdout)
	require.Len(t, rows, 4)
	require.Equal(t, []string{"VERSION", "TIMESTAMP", "USER", "OPERATION", "PARAMETERS", "JOB", "NOTEBOOK", "CLUSTER", "USER", "METADATA", "METRICS"},
		strings.Fields(header))
	tests := []struct {
		version string
		want    []string
	}{
		{"3", []string{"WRITE", `{"source":"airflow"}`,
			"execution_time_ms=3, num_added_files=0, num_added_rows=0,", "num_partitions=0, num_removed_files=0, num_retries=0"}},
		{"2", []string{"RESTORE", "timestamp=null, version=0", "notebookId=1234567890", "ana@example.com", "numRestoredFiles=0"}},
		{"1", []string{"svc-etl@example.com", "mode=Append, partitionBy=[], statsOnLoad=false",
			"jobId=987, jobName=nightly load, jobOwnerId=5353535353535353, jobRunId=555, runId=556, triggerType=cron",
			"0102-030405-abcdefgh", "backfill after incident 42", "numFiles=0, numOutputBytes=0, numOutputRows=0"}},
		{"0", []string{"CREATE TABLE", "description=null, isManaged=true, partitionBy=[], properties={},", "statsOnLoad=false"}},
	}
	for i, tc := range tests {
		t.Run("version "+tc.version, func(t *testing.T) {
			row := rows[i]
			require.True(t, strings.HasPrefix(row, tc.version+" "), row)
			for _, w := range tc.want {
				require.Contains(t, row, w)
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

// historyRows splits history's text output into its header and its rows, each row its
// lines joined: parameters and metrics wrap onto continuation lines.
func historyRows(t *testing.T, out string) (string, []string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var rows []string
	for _, l := range lines[1:] {
		if l != "" && l[0] != ' ' {
			rows = append(rows, l)
			continue
		}
		require.NotEmpty(t, rows, "a continuation line first: %q", l)
		rows[len(rows)-1] += "\n" + l
	}
	return lines[0], rows
}

// TestHistoryReadable: predicates stored with Go's HTML escapes (\u003e, as cdc2delta
// wrote MERGE predicates before) show as written, and long parameters and metrics wrap
// instead of making one line of hundreds of characters.
func TestHistoryReadable(t *testing.T) {
	dir := t.TempDir()
	st, err := localstore.New(localstore.Options{Dir: dir, NoSync: true})
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), st)
	require.NoError(t, err)
	schema := testSchema()
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	proto := deltalog.MinimalProtocol(schema, nil)
	metrics := map[string]string{}
	for _, m := range []string{"numSourceRows", "numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted",
		"numTargetRowsCopied", "numOutputRows", "numTargetFilesAdded", "numTargetFilesRemoved", "executionTimeMs"} {
		metrics[m] = "12345"
	}
	_, err = tbl.Commit(t.Context(), nil, []deltalog.Action{
		{Protocol: &proto},
		{Metadata: &deltalog.Metadata{ID: "11111111-2222-3333-4444-555555555555", Format: deltalog.Format{Provider: "parquet"},
			SchemaString: ss, PartitionColumns: []string{}}},
	}, deltalog.Operation{Name: deltalog.OpMerge, Metrics: metrics, Parameters: map[string]string{
		"predicate": `["(target.id = source.id)"]`,
		"matchedPredicates": `[{"actionType":"delete","predicate":"(source._cdc_op = 'd' AND source._cdc_position \u003e target._cdc_position)"},` +
			`{"actionType":"update","predicate":"(source._cdc_position \u003e target._cdc_position)"}]`,
		"notMatchedPredicates": `[{"actionType":"insert","predicate":"(source._cdc_op \u003c\u003e 'd')"}]`,
		"note":                 `a literal \u003e that is no JSON`,
	}})
	require.NoError(t, err)

	r := cli(t, "history", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, `"predicate":"(source._cdc_position > target._cdc_position)"`)
	require.Contains(t, r.stdout, `"predicate":"(source._cdc_op <> 'd')"`)
	require.Contains(t, r.stdout, `note=a literal \u003e that is no JSON`, "only JSON text is unescaped")
	_, rows := historyRows(t, r.stdout)
	require.Len(t, rows, 1)
	for line := range strings.SplitSeq(r.stdout, "\n") {
		require.LessOrEqual(t, len(line), 250, line)
	}
}
