package deltalog_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestCommitSnapshot checks that the snapshot a commit returns, built without reading
// the log back, is the one a full load of that version gives, commit after commit, each
// built on the one before: adds, removes, deletion vectors, escaped paths, re-added
// tombstones, expiring tombstones and txns, domains and a schema change.
func TestCommitSnapshot(t *testing.T) {
	for _, ict := range []bool{false, true} {
		t.Run(fmt.Sprintf("ict=%v", ict), func(t *testing.T) {
			ctx := t.Context()
			tbl, _, clk := newMemTable(t)
			config := map[string]string{
				"delta.enableDeletionVectors":           "true",
				"delta.deletedFileRetentionDuration":    "interval 1 hour",
				"delta.setTransactionRetentionDuration": "interval 1 hour",
			}
			if ict {
				config["delta.enableInCommitTimestamps"] = "true"
			}
			res, err := tbl.Commit(ctx, nil, createActions(t, testSchema(), config), deltalog.Operation{Name: deltalog.OpCreateTable})
			require.NoError(t, err)
			snap := res.Snapshot
			require.NotNil(t, snap, "the create commit's snapshot")
			// A hundred tombstones, so that most commits share them (tombstoneSet).
			var adds, removes []deltalog.Action
			for i := range 100 {
				adds = append(adds, addFile(fmt.Sprintf("b%03d.parquet", i)))
				removes = append(removes, removeFile(fmt.Sprintf("b%03d.parquet", i)))
			}
			for _, actions := range [][]deltalog.Action{adds, removes} {
				res, err := tbl.Commit(ctx, snap, actions, deltalog.Operation{Name: deltalog.OpWrite})
				require.NoError(t, err)
				snap = res.Snapshot
			}
			require.Len(t, snap.Tombstones(), 100)
			dv := &deltalog.DeletionVector{StorageType: "u", PathOrInlineDV: "ab^-aqEH.-t@S}K{vb[*k^", SizeInBytes: 36, Cardinality: 2}
			for i := range 30 {
				actions := []deltalog.Action{addFile(fmt.Sprintf("f%02d.parquet", i)), txnAction(fmt.Sprint("app", i%4), int64(i))}
				switch i % 6 {
				case 0: // one of the hundred comes back
					actions = append(actions, addFile(fmt.Sprintf("b%03d.parquet", i)))
				case 1: // remove the file before, by its escaped path
					actions = append(actions, addFile(fmt.Sprintf("p%%3D%d/g.parquet", i)), removeFile(fmt.Sprintf("f%02d.parquet", i-1)))
				case 2: // the escaped file, removed by its decoded path
					actions = append(actions, removeFile(fmt.Sprintf("p=%d/g.parquet", i-1)))
				case 3: // a deletion vector on an older file
					old := addFile(fmt.Sprintf("f%02d.parquet", i-3)).Add
					withDV := *old
					withDV.DeletionVector = dv
					actions = append(actions, removeFile(old.Path), deltalog.Action{Add: &withDV},
						deltalog.Action{DomainMetadata: &deltalog.DomainMetadata{Domain: "d", Configuration: fmt.Sprint(i)}})
				case 4: // the file removed at i-3 comes back
					actions = append(actions, addFile(fmt.Sprintf("f%02d.parquet", i-4)))
				case 5:
					actions = append(actions, deltalog.Action{DomainMetadata: &deltalog.DomainMetadata{Domain: "d", Removed: true}})
				}
				if i == 12 { // a schema change
					m := snap.Metadata()
					schema := testSchema()
					schema.Fields = append(schema.Fields, deltalog.StructField{Name: fmt.Sprint("c", i), Type: deltalog.TypeLong, Nullable: true})
					m.SchemaString, err = schema.SchemaString()
					require.NoError(t, err)
					actions = append(actions, deltalog.Action{Metadata: &m})
				}
				if i == 20 {
					clk.Advance(90 * time.Minute) // tombstones and txns so far expire
				}
				res, err := tbl.Commit(ctx, snap, actions, deltalog.Operation{Name: deltalog.OpMerge}, deltalog.ReadFiles())
				require.NoError(t, err)
				require.NotNil(t, res.Snapshot, "version %d", res.Version)
				full, err := tbl.SnapshotAt(ctx, res.Version)
				require.NoError(t, err)
				got := res.Snapshot
				require.Equal(t, full.Version(), got.Version())
				require.Equal(t, full.Files(), got.Files(), "version %d", got.Version())
				require.Equal(t, full.Tombstones(), got.Tombstones(), "version %d", got.Version())
				require.Equal(t, full.Txns(), got.Txns(), "version %d", got.Version())
				require.Equal(t, full.DomainMetadata(), got.DomainMetadata(), "version %d", got.Version())
				require.Equal(t, full.Metadata(), got.Metadata())
				require.Equal(t, full.Protocol(), got.Protocol())
				require.Equal(t, full.Schema(), got.Schema())
				ci, err := tbl.CommitInfo(ctx, res.Version)
				require.NoError(t, err)
				if ict {
					require.Equal(t, full.CommitTimestamp(), got.CommitTimestamp())
				} else {
					require.Equal(t, time.UnixMilli(*ci.Timestamp), got.CommitTimestamp())
				}
				snap = got
			}
			require.Less(t, len(snap.Tombstones()), 10, "the tombstones of the first 22 versions expired")
			require.NotEmpty(t, snap.Tombstones())
		})
	}
}

// TestCommitSnapshotAfterRace: a commit that lost a race returns no snapshot (the
// winners are not in it); Update then reads them.
func TestCommitSnapshotAfterRace(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t)
	snap := createTable(t, tbl, nil)
	_, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile("a.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile("b.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	require.Equal(t, 1, res.Retries)
	require.Nil(t, res.Snapshot)
}
