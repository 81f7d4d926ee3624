package tableops_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

func TestDeepClone(t *testing.T) {
	for _, version := range []int64{1, 2} { // 2 has a deletion vector
		f := newFixture(t)
		ctx := t.Context()
		dstStore := memstore.New(memstore.Options{})
		dst, err := deltalog.Open(ctx, dstStore, deltalog.DisableCheckpoints())
		require.NoError(t, err)
		src := f.snapshot(t, version)
		m, err := tableops.Clone(ctx, f.table, src, dst, tableops.CloneOptions{Source: "mem://src"})
		require.NoError(t, err)
		require.Equal(t, int64(0), m.Version)
		require.Equal(t, src.NumFiles(), m.NumCopiedFiles)

		got, err := dst.Snapshot(ctx)
		require.NoError(t, err)
		require.Equal(t, src.Protocol(), got.Protocol())
		require.NotEqual(t, src.Metadata().ID, got.Metadata().ID, "a clone is a new table")
		require.Equal(t, src.Metadata().SchemaString, got.Metadata().SchemaString)
		require.Equal(t, src.Metadata().Configuration, got.Metadata().Configuration)
		require.Equal(t, src.Txns(), got.Txns(), "txn versions carry over, so a pipeline resumes where version N had it")
		// The rows, read from dst's own store only.
		meta := got.Metadata()
		var rows [][]any
		for _, a := range got.Files() {
			r, err := datafile.Read(ctx, dstStore, &a, got.Schema(), datafile.ReadOptions{Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns})
			require.NoError(t, err)
			rows = append(rows, r...)
		}
		require.ElementsMatch(t, f.rows(t, version), rows)

		ci, err := dst.CommitInfo(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, "CLONE", ci.Operation)
		require.Equal(t, map[string]string{"source": "mem://src", "sourceVersion": strconv.FormatInt(version, 10), "isShallow": "false"}, ci.OperationParameters.Texts())

		_, err = tableops.Clone(ctx, f.table, src, dst, tableops.CloneOptions{Source: "mem://src"})
		require.ErrorIs(t, err, tableops.ErrTableExists)
	}
}
