package deltalog_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestFileKey(t *testing.T) {
	dv := func(id string) *deltalog.DeletionVector {
		return &deltalog.DeletionVector{StorageType: deltalog.DVStorageUUID, PathOrInlineDV: id}
	}
	tests := []struct {
		name     string
		add      deltalog.Add
		rm       deltalog.Remove
		same     bool
		wantPath string
	}{
		{"same path, no vectors", deltalog.Add{Path: "a.parquet"}, deltalog.Remove{Path: "a.parquet"}, true, "a.parquet"},
		{"encoded path is the decoded one", deltalog.Add{Path: "p=a%20b/x.parquet"}, deltalog.Remove{Path: "p=a b/x.parquet"}, true, "p=a b/x.parquet"},
		{"undecodable path is kept raw", deltalog.Add{Path: "bad%zz.parquet"}, deltalog.Remove{Path: "bad%zz.parquet"}, true, "bad%zz.parquet"},
		{"same vector", deltalog.Add{Path: "a.parquet", DeletionVector: dv("x")}, deltalog.Remove{Path: "a.parquet", DeletionVector: dv("x")}, true, "a.parquet"},
		{"another vector is another file", deltalog.Add{Path: "a.parquet", DeletionVector: dv("x")}, deltalog.Remove{Path: "a.parquet", DeletionVector: dv("y")}, false, "a.parquet"},
		{"a vector against none", deltalog.Add{Path: "a.parquet", DeletionVector: dv("x")}, deltalog.Remove{Path: "a.parquet"}, false, "a.parquet"},
		{"another path", deltalog.Add{Path: "a.parquet"}, deltalog.Remove{Path: "b.parquet"}, false, "a.parquet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.same, tc.add.Key() == tc.rm.Key())
			require.Equal(t, tc.wantPath, tc.add.Key().Path())
		})
	}
}

func TestAddRemove(t *testing.T) {
	region, rowID, version := "eu", int64(7), int64(3)
	add := deltalog.Add{
		Path: "region=eu/a.parquet", PartitionValues: map[string]*string{"region": &region}, Size: 1234,
		ModificationTime: 99, DataChange: true, Stats: `{"numRecords":3}`, Tags: map[string]string{"t": "v"},
		DeletionVector: &deltalog.DeletionVector{StorageType: "i", PathOrInlineDV: "abc", SizeInBytes: 3, Cardinality: 1},
		BaseRowID:      &rowID, DefaultRowCommitVersion: &version,
	}
	for _, dataChange := range []bool{true, false} {
		size := add.Size
		want := &deltalog.Remove{
			Path: add.Path, DataChange: dataChange, ExtendedFileMetadata: true, PartitionValues: add.PartitionValues,
			Size: &size, Stats: add.Stats, Tags: add.Tags, DeletionVector: add.DeletionVector,
			BaseRowID: &rowID, DefaultRowCommitVersion: &version,
		}
		got := add.Remove(dataChange)
		require.Equal(t, want, got)
		require.Nil(t, got.DeletionTimestamp, "Commit stamps it")
		require.Equal(t, add.Key(), got.Key())
	}
	rm := add.Remove(true)
	*rm.Size = 1
	require.EqualValues(t, 1234, add.Size, "the remove's size is its own")
}
