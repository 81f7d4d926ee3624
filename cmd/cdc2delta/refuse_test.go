package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestUnreadableTablesRefused checks that tables deltalog does not read are refused by
// every table command with the cause and where it is, instead of a parquet or JSON error.
func TestUnreadableTablesRefused(t *testing.T) {
	absolute := func(t *testing.T) string {
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
	noSchema := func(t *testing.T) string {
		dir := t.TempDir()
		writeCommit(t, dir, 0, `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`,
			`{"metaData":{"id":"t1","format":{"provider":"parquet","options":{}},"partitionColumns":[],"configuration":{}}}`)
		return dir
	}
	tests := []struct {
		name  string
		table func(t *testing.T) string
		want  []string
	}{
		{"absolute data file path", absolute, []string{"version 3: data file \"file://", "has an absolute path (added in _delta_log/00000000000000000003.json)"}},
		{"metaData without schemaString", noSchema, []string{"corrupt file _delta_log/00000000000000000000.json: metaData of version 0 has no schemaString"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.table(t)
			for _, args := range [][]string{
				{"show"}, {"show", "--format", "jsonl"}, {"describe"}, {"vacuum", "--dry-run"}, {"vacuum"}, {"optimize"}, {"checkpoint"}, {"restore", "--version", "0"},
			} {
				r := cli(t, append(args, dir)...)
				require.Equal(t, exitFailure, r.code, "%v: %s", args, r.stdout)
				for _, w := range tc.want {
					require.Contains(t, r.stderr, w, args)
				}
			}
		})
	}
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
