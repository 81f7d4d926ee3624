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
)

// TestUnreadableTablesRefused checks that tables deltalog does not read are refused by
// every table command with the cause and where it is, instead of a parquet or JSON error.
func TestUnreadableTablesRefused(t *testing.T) {
	tests := []struct {
		name  string
		table func(t *testing.T) string
		want  []string
	}{
		{"absolute data file path", absoluteTable, []string{"version 3: data file \"file://", "has an absolute path (added in _delta_log/00000000000000000003.json)"}},
		{"metaData without schemaString", noSchemaTable, []string{"corrupt file _delta_log/00000000000000000000.json: metaData of version 0 has no schemaString"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.table(t)
			for _, args := range [][]string{
				{"vacuum", "--dry-run"}, {"vacuum"}, {"optimize"}, {"checkpoint"}, {"restore", "--version", "0"},
			} {
				r := cli(t, append(args, dir)...)
				require.Equal(t, exitFailure, r.code, "%v: %s", args, r.stdout)
				for _, w := range tc.want {
					require.Contains(t, r.stderr, w, args)
				}
			}
		})
	}
	for _, args := range [][]string{{"show"}, {"show", "--format", "jsonl"}} {
		r := cli(t, append(args, noSchemaTable(t))...)
		require.Equal(t, exitFailure, r.code, "%v: %s", args, r.stdout)
	}
	r := cli(t, "describe", noSchemaTable(t))
	require.Equal(t, exitFailure, r.code, r.stdout)
	require.Contains(t, r.stderr, "metaData of version 0 has no schemaString")
}

// TestDescribeNamesAbsolutePaths: describe is what a user runs to see why a table is
// refused, so it describes a table with absolute data file paths and names each
// such file, the log file that added it, why it is refused and what to do.
func TestDescribeNamesAbsolutePaths(t *testing.T) {
	dir := absoluteTable(t)
	r := cli(t, "describe", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	t.Log(r.stdout)
	require.Contains(t, r.stdout, "Version:           3 (committed ")
	require.Contains(t, r.stdout, "Schema:")
	require.Regexp(t, `Read, not written, by cdc2delta: 1 live data file has an absolute path\n`, r.stdout)
	require.Regexp(t, `  file://\S+\.parquet \(added in _delta_log/00000000000000000003\.json\)\n`, r.stdout)
	require.Contains(t, r.stdout, "A DEEP CLONE of the table that holds the files (cdc2delta clone --deep, or Spark's) copies it with relative paths")

	r = cli(t, "describe", "--json", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	var d struct {
		Version       int64
		AbsolutePaths []struct{ Path, AddedIn string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	require.EqualValues(t, 3, d.Version)
	require.Len(t, d.AbsolutePaths, 1)
	require.True(t, strings.HasPrefix(d.AbsolutePaths[0].Path, "file://"), d.AbsolutePaths[0].Path)
	require.Equal(t, "_delta_log/00000000000000000003.json", d.AbsolutePaths[0].AddedIn)
}

// absoluteTable is a table whose live data file is named by its file:// URI.
func absoluteTable(t *testing.T) string {
	dir := t.TempDir()
	tbl := testTable(t, dir)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	f := snap.Files()[0]
	// The same data file again under its file:// URI: inside the table root, readable
	// by Spark, refused by us (see deltalog.AbsolutePathError).
	uri := "file://" + filepath.ToSlash(filepath.Join(dir, f.Path))
	writeCommit(t, dir, 3, `{"remove":{"path":"`+f.Path+`","deletionTimestamp":1,"dataChange":true}}`,
		`{"add":{"path":"`+uri+`","partitionValues":{},"size":`+strconv.FormatInt(f.Size, 10)+`,"modificationTime":1,"dataChange":true}}`)
	return dir
}

// noSchemaTable is a table whose metaData has no schemaString.
func noSchemaTable(t *testing.T) string {
	dir := t.TempDir()
	writeCommit(t, dir, 0, `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`,
		`{"metaData":{"id":"t1","format":{"provider":"parquet","options":{}},"partitionColumns":[],"configuration":{}}}`)
	return dir
}

// writeCommit writes raw commit lines as version v of the table in dir.
func writeCommit(t *testing.T, dir string, v int, lines ...string) {
	t.Helper()
	data := ""
	for _, l := range lines {
		data += l + "\n"
	}
	p := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
}

// TestVacuumRefusesAbsoluteTombstones: a file removed within the retention and named by
// absolute URI may be one a retained version reads; VACUUM must not delete it unmatched.
func TestVacuumRefusesAbsoluteTombstones(t *testing.T) {
	tests := []struct {
		name   string
		remove func(uri string) string
	}{
		{"absolute remove path", func(uri string) string { return `"path":"` + uri + `"` }},
		{"absolute deletion vector", func(uri string) string {
			return `"path":"gone.parquet","deletionVector":{"storageType":"p","pathOrInlineDv":"` + uri + `","offset":1,"sizeInBytes":36,"cardinality":1}`
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			testTable(t, dir)
			old := time.Now().Add(-10 * 24 * time.Hour)
			writeFile(t, dir, "retained.bin", old)
			uri := "file://" + filepath.ToSlash(filepath.Join(dir, "retained.bin"))
			now := strconv.FormatInt(time.Now().UnixMilli(), 10)
			writeCommit(t, dir, 3, `{"remove":{`+tc.remove(uri)+`,"deletionTimestamp":`+now+`,"dataChange":true}}`)
			for _, args := range [][]string{{"vacuum", "--dry-run", dir}, {"vacuum", dir}} {
				r := cli(t, args...)
				require.Equal(t, exitFailure, r.code, "%v: %s", args, r.stdout)
				require.Contains(t, r.stderr, `file "`+uri+`" of a retained version is named by absolute path`)
			}
			require.FileExists(t, filepath.Join(dir, "retained.bin"))
		})
	}
}
