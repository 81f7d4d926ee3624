package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestHistoryTimesSelectTheirVersions: the time history prints for a version is the
// one time travel resolves, so `--timestamp <printed time>` selects that version:
// the commit file's modification time (made increasing, in milliseconds) before
// in-commit timestamps and without them, the inCommitTimestamp from their enablement
// on, never commitInfo.timestamp, which here disagrees with both.
func TestHistoryTimesSelectTheirVersions(t *testing.T) {
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return base.Add(d).UnixMilli() }
	const (
		schema = `{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}`
		proto  = `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`
	)
	meta := func(conf string) string {
		return `{"metaData":{"id":"t1","format":{"provider":"parquet","options":{}},"schemaString":"` + schema +
			`","partitionColumns":[],"configuration":{` + conf + `}}}`
	}
	commitInfo := func(ts int64, ict *int64) string {
		s := fmt.Sprintf(`{"commitInfo":{"timestamp":%d,"operation":"WRITE"`, ts)
		if ict != nil {
			s = fmt.Sprintf(`{"commitInfo":{"inCommitTimestamp":%d,"timestamp":%d,"operation":"WRITE"`, *ict, ts)
		}
		return s + "}}"
	}
	add := func(v int) string {
		return fmt.Sprintf(`{"add":{"path":"f%d.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`, v)
	}
	ict := func(d time.Duration) *int64 { v := ms(d); return &v }
	// Commit file times with nanoseconds, a tie (v3 = v2) and one going back (v4).
	mtimes := []time.Duration{123456789, 10*time.Minute + 1, 20*time.Minute + 999999, 20*time.Minute + 999999, 15 * time.Minute}
	tests := []struct {
		name    string
		commits [][]string
		mtimes  []time.Duration
	}{
		{"file times", [][]string{
			{commitInfo(ms(-24*time.Hour), nil), proto, meta("")},
			{commitInfo(ms(-23*time.Hour), nil), add(1)},
			{commitInfo(ms(-22*time.Hour), nil), add(2)},
			{commitInfo(ms(-21*time.Hour), nil), add(3)},
			{commitInfo(ms(-20*time.Hour), nil), add(4)},
		}, mtimes},
		{"in-commit timestamps enabled at version 3", [][]string{
			{commitInfo(ms(-24*time.Hour), nil), proto, meta("")},
			{commitInfo(ms(-23*time.Hour), nil), add(1)},
			{commitInfo(ms(-22*time.Hour), nil), add(2)},
			{commitInfo(ms(-21*time.Hour), ict(25*time.Minute)),
				`{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["inCommitTimestamp"]}}`,
				meta(fmt.Sprintf(`"delta.enableInCommitTimestamps":"true","delta.inCommitTimestampEnablementVersion":"3","delta.inCommitTimestampEnablementTimestamp":"%d"`, ms(25*time.Minute)))},
			{commitInfo(ms(-20*time.Hour), ict(25*time.Minute+time.Millisecond)), add(4)},
			{commitInfo(ms(-19*time.Hour), ict(40*time.Minute)), add(5)},
		}, []time.Duration{mtimes[0], mtimes[1], mtimes[2], -time.Hour, 2 * time.Hour, time.Minute}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for v, lines := range tc.commits {
				writeCommit(t, dir, v, lines...)
				p := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v))
				require.NoError(t, os.Chtimes(p, base.Add(tc.mtimes[v]), base.Add(tc.mtimes[v])))
			}
			r := cli(t, "history", dir)
			require.Equal(t, exitOK, r.code, r.stderr)
			t.Log(r.stdout)
			_, rows := historyRows(t, r.stdout)
			require.Len(t, rows, len(tc.commits))
			for _, row := range rows {
				f := strings.Fields(row)
				printed := f[1] + " " + f[2]
				d := cli(t, "describe", "--json", "--timestamp", printed, dir)
				require.Equal(t, exitOK, d.code, "version %s at %s: %s", f[0], printed, d.stderr)
				var got struct {
					Version    int64
					CommitTime time.Time
				}
				require.NoError(t, json.Unmarshal([]byte(d.stdout), &got))
				require.Equal(t, f[0], strconv.FormatInt(got.Version, 10), "history prints %s for version %s", printed, f[0])

				d = cli(t, "describe", "--json", "--version", f[0], dir)
				require.Equal(t, exitOK, d.code, d.stderr)
				require.NoError(t, json.Unmarshal([]byte(d.stdout), &got))
				want, err := parseTime(printed)
				require.NoError(t, err)
				require.Equal(t, want, got.CommitTime, "describe says version %s was committed at another time than history", f[0])
			}
		})
	}
}

// TestHistoryShowsATornTable: history is what one reads to pick a version when the
// latest commit is torn (cut short by a crash of another writer): it shows every commit
// although the latest version does not load.
func TestHistoryShowsATornTable(t *testing.T) {
	dir := t.TempDir()
	testTable(t, dir)
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	require.NoError(t, err)
	latest := filepath.Join(dir, "_delta_log", entries[len(entries)-1].Name())
	data, err := os.ReadFile(latest)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(latest, data[:len(data)-40], 0o644))
	require.Equal(t, exitFailure, cli(t, "describe", dir).code, "the latest version does not load")

	r := cli(t, "history", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	_, rows := historyRows(t, r.stdout)
	require.Len(t, rows, len(entries))
}
