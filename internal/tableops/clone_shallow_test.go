package tableops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

type rootedStore struct {
	deltalog.Store
	root string
}

func (s rootedStore) Root() string { return s.root }

// TestSourceURI: a shallow clone names a local source by its escaped absolute path and
// a bucket's by its URL; a store without a root cannot be named.
func TestSourceURI(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	for root, want := range map[string]string{
		"/data/src table%":         "/data/src%20table%25",
		"/data/t/":                 "/data/t",
		"s3://bucket/sales/orders": "s3://bucket/sales/orders",
		"s3://bucket/":             "s3://bucket",
		"gs://bucket/a b":          "gs://bucket/a%20b",
		"abfss://box@acct.dfs.core.windows.net/t/x": "abfss://box@acct.dfs.core.windows.net/t/x",
	} {
		got, err := tableops.SourceURI(rootedStore{mem, root})
		require.NoError(t, err, root)
		require.Equal(t, want, got, root)
		// Every name resolves back to the root it came from.
		_, key, err := deltalog.SplitAbsoluteURI(got + "/part-0.parquet")
		require.NoError(t, err)
		require.Contains(t, key, "part-0.parquet")
	}
	_, err := tableops.SourceURI(mem)
	require.ErrorContains(t, err, "no root URL")
}
