package deltalog_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// expectedTable is the part of testdata/tables/*/expected.json (written by the engine
// that made the table) that the log alone can confirm.
type expectedTable struct {
	Version          int64             `json:"version"`
	NumRows          int64             `json:"num_rows"`
	PartitionColumns []string          `json:"partition_columns"`
	Protocol         deltalog.Protocol `json:"protocol"`
	Schema           []struct {
		Name     string `json:"name"`
		Nullable bool   `json:"nullable"`
		Type     string `json:"type"`
	} `json:"schema"`
	Txns       map[string]*int64 `json:"txns"`
	TimeTravel []struct {
		Version int64 `json:"version"`
		NumRows int64 `json:"num_rows"`
	} `json:"time_travel"`
}

// TestGoldenReplay replays the tables other engines wrote and checks the snapshot
// against what those engines reported: version, protocol, schema, partitioning, txn
// versions and, from file stats minus deletion vectors, the row count (also at each
// time-travel version).
func TestGoldenReplay(t *testing.T) {
	dirs, err := filepath.Glob("testdata/tables/*/expected.json")
	require.NoError(t, err)
	if len(dirs) == 0 {
		t.Skip("no golden tables in testdata/tables")
	}
	for _, exp := range dirs {
		dir := filepath.Dir(exp)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ctx := t.Context()
			raw, err := os.ReadFile(exp)
			require.NoError(t, err)
			var want expectedTable
			require.NoError(t, json.Unmarshal(raw, &want))

			st, err := localstore.New(localstore.Options{Dir: dir})
			require.NoError(t, err)
			tbl, err := deltalog.Open(ctx, st)
			require.NoError(t, err)
			snap, err := tbl.Snapshot(ctx)
			require.NoError(t, err)

			require.Equal(t, want.Version, snap.Version())
			require.True(t, want.Protocol.Equal(snap.Protocol()), "protocol %+v, want %+v", snap.Protocol(), want.Protocol)
			require.Equal(t, want.PartitionColumns, snap.Metadata().PartitionColumns)
			fields := snap.Schema().Fields
			require.Len(t, fields, len(want.Schema))
			for i, f := range want.Schema {
				require.Equal(t, f.Name, fields[i].Name)
				require.Equal(t, f.Type, fields[i].Type.String())
				require.Equal(t, f.Nullable, fields[i].Nullable)
			}
			for app, v := range want.Txns {
				got, ok := snap.TxnVersion(app)
				require.Equal(t, v != nil, ok, app)
				if v != nil {
					require.Equal(t, *v, got, app)
				}
			}
			require.Equal(t, want.NumRows, liveRows(t, snap))
			for _, tt := range want.TimeTravel {
				old, err := tbl.SnapshotAt(ctx, tt.Version)
				require.NoError(t, err)
				require.Equal(t, tt.NumRows, liveRows(t, old), "version %d", tt.Version)
			}
		})
	}
}

func liveRows(t *testing.T, s *deltalog.Snapshot) int64 {
	t.Helper()
	var n int64
	for _, f := range s.Files() {
		st, ok, err := deltalog.ParseStats(f.Stats)
		require.NoError(t, err)
		require.True(t, ok, "file %s has no stats", f.Path)
		n += st.NumRecords
		if f.DeletionVector != nil {
			n -= f.DeletionVector.Cardinality
		}
	}
	return n
}

// TestWriteToSparkColumnMappedTable checks that Spark's column-mapping protocol (2,7 with
// appendOnly, columnMapping, invariants) is writable and that partition values must use
// the physical column name.
func TestWriteToSparkColumnMappedTable(t *testing.T) {
	const dir = "testdata/tables/spark-colmap/_delta_log"
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		t.Skip("no spark-colmap fixture")
	}
	require.NoError(t, err)
	ctx := t.Context()
	tbl, st, _ := newMemTable(t)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, st.Put(ctx, "_delta_log/"+e.Name(), data))
	}
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, "name", deltalog.ColumnMappingMode(new(snap.Metadata())))
	p, ok := snap.Schema().Field("p")
	require.True(t, ok)
	phys := deltalog.PhysicalName(p)
	require.NotEqual(t, "p", phys)

	logical := addFile("ab/part-00000-new.parquet")
	v := "b"
	logical.Add.PartitionValues = map[string]*string{"p": &v}
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{logical}, deltalog.Operation{Name: deltalog.OpWrite})
	require.ErrorIs(t, err, deltalog.ErrInvalidCommit, "logical partition key is wrong under column mapping")

	physical := addFile("ab/part-00000-new.parquet")
	physical.Add.PartitionValues = map[string]*string{phys: &v}
	res, err := tbl.Commit(ctx, snap, []deltalog.Action{physical}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	after, err := tbl.SnapshotAt(ctx, res.Version)
	require.NoError(t, err)
	require.Len(t, after.Files(), len(snap.Files())+1)
}
