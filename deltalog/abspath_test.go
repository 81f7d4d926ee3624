package deltalog_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestSplitAbsoluteURI: an absolute add.path is an RFC 2396 URI, percent-decoded to
// find the object, in the store of its scheme and authority; the local forms Hadoop
// (file:/t), RFC 8089 (file:///t) and a bare path all name the file system root.
func TestSplitAbsoluteURI(t *testing.T) {
	for _, tc := range []struct{ in, root, key string }{
		{"file:/data/t/a%20b.parquet", "/", "data/t/a b.parquet"},
		{"file:///data/t/a%20b.parquet", "/", "data/t/a b.parquet"},
		{"file://localhost/data/t/x.parquet", "/", "data/t/x.parquet"},
		{"/data/t/a%20b.parquet", "/", "data/t/a b.parquet"},
		{"s3://bucket/t/p=a%3Ab/x.parquet", "s3://bucket", "t/p=a:b/x.parquet"},
		{"s3a://bucket/t/x.parquet", "s3a://bucket", "t/x.parquet"},
		{"gs://bucket/t/%25.parquet", "gs://bucket", "t/%.parquet"},
		{"abfss://box@acct.dfs.core.windows.net/t/x.parquet", "abfss://box@acct.dfs.core.windows.net", "t/x.parquet"},
	} {
		root, key, err := deltalog.SplitAbsoluteURI(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.root, root, tc.in)
		require.Equal(t, tc.key, key, tc.in)
	}
	for _, bad := range []string{
		"t/x.parquet", "s3:///t/x.parquet", "s3://bucket/t/../x.parquet", "s3://bucket/", "file://host/t/x.parquet",
		"s3://bucket/t/x.parquet?v=1", "s3://bucket/t/x.parquet#f", "s3://bucket/t/%zz.parquet", "abfss://u:p@h/t/x.parquet",
		"mailto:x.parquet", "//host/t/x.parquet",
	} {
		_, _, err := deltalog.SplitAbsoluteURI(bad)
		require.ErrorIs(t, err, deltalog.ErrInvalidPath, bad)
	}
}

// TestResolveAbsolutePathsReadsButDoesNotCommit: a table opened to read a shallow
// clone loads its absolute files and lists them; a commit from that snapshot is
// refused as in any table that has them.
func TestResolveAbsolutePathsReadsButDoesNotCommit(t *testing.T) {
	open := func(context.Context, string) (deltalog.Store, error) { return nil, nil }
	tbl, st, _ := newMemTable(t, deltalog.ResolveAbsolutePaths(open))
	putCommit(t, st, 0, lineProto, lineMeta, lineAdd("a.parquet"), lineAdd("s3://other/t/b.parquet"))
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	want := &deltalog.AbsolutePathError{Version: 0, Path: "s3://other/t/b.parquet", File: "_delta_log/00000000000000000000.json"}
	require.Equal(t, []*deltalog.AbsolutePathError{want}, snap.AbsolutePaths())
	require.Len(t, snap.Files(), 2)
	_, err = tbl.Commit(t.Context(), snap, []deltalog.Action{{Add: &deltalog.Add{Path: "c.parquet", Size: 1, DataChange: true}}},
		deltalog.Operation{Name: deltalog.OpWrite})
	checkRefusal(t, err, want, []string{"read but not written"})
}
