package deltalog_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestIsAbsolutePath(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"part-00000.parquet", false},
		{"p=a%3Ab/part-0.parquet", false},
		{"p=a:b/part-0.parquet", false}, // "=" is no scheme character: relative
		{"dir/x:y.parquet", false},
		{"deletion_vector_x.bin", false},
		{"file:///data/t/part-0.parquet", true},
		{"file:/data/t/part-0.parquet", true},
		{"s3://bucket/t/part-0.parquet", true},
		{"s3a://bucket/t/part-0.parquet", true},
		{"abfss://c@acct.dfs.core.windows.net/t/part-0.parquet", true},
		{"/data/t/part-0.parquet", true},
		{"C:/data/part-0.parquet", true},
		{":x.parquet", false},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			require.Equal(t, tc.want, deltalog.IsAbsolutePath(tc.path))
		})
	}
}

func lineAdd(path string) string {
	return `{"add":{"path":"` + path + `","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`
}

// TestSnapshotRefusesUnreadableTables checks that a table deltalog cannot read right is
// refused when it is loaded, with an error naming the cause, the version and the file.
func TestSnapshotRefusesUnreadableTables(t *testing.T) {
	const (
		v0 = "_delta_log/00000000000000000000.json"
		v1 = "_delta_log/00000000000000000001.json"
	)
	metaWithout := func(schema string) string {
		return `{"metaData":{"id":"t1","format":{"provider":"parquet","options":{}},` + schema + `"partitionColumns":[],"configuration":{}}}`
	}
	tests := []struct {
		name    string
		commits [][]string
		at      int64 // -1: latest
		wantErr error
		wantMsg []string
	}{
		{
			name:    "absolute file URI",
			commits: [][]string{{lineProto, lineMeta, lineAdd("a.parquet")}, {lineAdd("file:///data/t/b.parquet")}},
			at:      -1,
			wantErr: &deltalog.AbsolutePathError{Version: 1, Path: "file:///data/t/b.parquet", File: v1},
			wantMsg: []string{`version 1: data file "file:///data/t/b.parquet" has an absolute path (added in ` + v1 + `)`, "DEEP CLONE"},
		},
		{
			name:    "absolute s3 URI",
			commits: [][]string{{lineProto, lineMeta, lineAdd("s3://other/t/b.parquet")}},
			at:      -1,
			wantErr: &deltalog.AbsolutePathError{Version: 0, Path: "s3://other/t/b.parquet", File: v0},
		},
		{
			name:    "absolute path",
			commits: [][]string{{lineProto, lineMeta, lineAdd("/data/t/b.parquet")}},
			at:      -1,
			wantErr: &deltalog.AbsolutePathError{Version: 0, Path: "/data/t/b.parquet", File: v0},
		},
		{
			name: "absolute file removed again reads",
			commits: [][]string{{lineProto, lineMeta, lineAdd("file:///data/t/b.parquet")},
				{`{"remove":{"path":"file:///data/t/b.parquet","deletionTimestamp":1,"dataChange":true}}`, lineAdd("a.parquet")}},
			at: -1,
		},
		{
			name: "absolute file at an earlier version",
			commits: [][]string{{lineProto, lineMeta, lineAdd("file:///data/t/b.parquet")},
				{`{"remove":{"path":"file:///data/t/b.parquet","deletionTimestamp":1,"dataChange":true}}`}},
			at:      0,
			wantErr: &deltalog.AbsolutePathError{Version: 0, Path: "file:///data/t/b.parquet", File: v0},
		},
		{
			name:    "metaData without schemaString",
			commits: [][]string{{lineProto, metaWithout("")}},
			at:      -1,
			wantErr: &deltalog.CorruptFileError{Path: v0},
			wantMsg: []string{"corrupt file " + v0 + ": metaData of version 0 has no schemaString"},
		},
		{
			name:    "later metaData without schemaString",
			commits: [][]string{{lineProto, lineMeta}, {metaWithout(`"schemaString":null,`)}},
			at:      -1,
			wantErr: &deltalog.CorruptFileError{Path: v1},
			wantMsg: []string{"corrupt file " + v1 + ": metaData of version 1 has no schemaString"},
		},
		{
			name:    "invalid schemaString",
			commits: [][]string{{lineProto, metaWithout(`"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"varchar\"}]}",`)}},
			at:      -1,
			wantErr: deltalog.ErrInvalidSchema,
			wantMsg: []string{"corrupt file " + v0 + ": metaData.schemaString of version 0:", `unknown type "varchar"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, st, _ := newMemTable(t)
			for v, lines := range tc.commits {
				putCommit(t, st, int64(v), lines...)
			}
			var err error
			if tc.at < 0 {
				_, err = tbl.Snapshot(t.Context())
			} else {
				_, err = tbl.SnapshotAt(t.Context(), tc.at)
			}
			checkRefusal(t, err, tc.wantErr, tc.wantMsg)
		})
	}
}

// checkRefusal compares err with want: a typed error by its fields (a CorruptFileError
// by Path only), a sentinel with errors.Is.
func checkRefusal(t *testing.T, err, want error, msg []string) {
	t.Helper()
	switch w := want.(type) {
	case nil:
		require.NoError(t, err)
	case *deltalog.AbsolutePathError:
		got, ok := errors.AsType[*deltalog.AbsolutePathError](err)
		require.True(t, ok, "%v", err)
		require.Equal(t, w, got)
	case *deltalog.CorruptFileError:
		got, ok := errors.AsType[*deltalog.CorruptFileError](err)
		require.True(t, ok, "%v", err)
		require.Equal(t, w.Path, got.Path)
	default:
		require.ErrorIs(t, err, want)
	}
	for _, m := range msg {
		require.ErrorContains(t, err, m)
	}
}

// TestUpdateRefusesUnreadableCommits covers the incremental path: Update applies only
// the new commits and must refuse them the same way.
func TestUpdateRefusesUnreadableCommits(t *testing.T) {
	tests := []struct {
		name    string
		next    string
		wantErr error
	}{
		{"absolute add", lineAdd("s3://other/t/b.parquet"),
			&deltalog.AbsolutePathError{Version: 1, Path: "s3://other/t/b.parquet", File: "_delta_log/00000000000000000001.json"}},
		{"metaData without schemaString", `{"metaData":{"id":"t1","format":{"provider":"parquet","options":{}},"partitionColumns":[],"configuration":{}}}`,
			&deltalog.CorruptFileError{Path: "_delta_log/00000000000000000001.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, st, _ := newMemTable(t)
			putCommit(t, st, 0, lineProto, lineMeta, lineAdd("a.parquet"))
			snap, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			putCommit(t, st, 1, tc.next)
			_, err = tbl.Update(t.Context(), snap)
			checkRefusal(t, err, tc.wantErr, nil)
		})
	}
}

// TestKeepAbsolutePaths: a table opened to be shown loads with its absolute files
// listed, and a commit from that snapshot is refused as any other use is.
func TestKeepAbsolutePaths(t *testing.T) {
	tbl, st, _ := newMemTable(t, deltalog.KeepAbsolutePaths())
	putCommit(t, st, 0, lineProto, lineMeta, lineAdd("a.parquet"), lineAdd("s3://other/t/b.parquet"))
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	want := &deltalog.AbsolutePathError{Version: 0, Path: "s3://other/t/b.parquet", File: "_delta_log/00000000000000000000.json"}
	require.Equal(t, []*deltalog.AbsolutePathError{want}, snap.AbsolutePaths())
	_, err = tbl.Commit(t.Context(), snap, []deltalog.Action{{Add: &deltalog.Add{Path: "c.parquet", Size: 1, DataChange: true}}},
		deltalog.Operation{Name: deltalog.OpWrite})
	checkRefusal(t, err, want, nil)
}
