package deltalog_test

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// putCommit writes raw commit lines for version v.
func putCommit(t *testing.T, st *memstore.Store, v int64, lines ...string) {
	t.Helper()
	data := ""
	for _, l := range lines {
		data += l + "\n"
	}
	require.NoError(t, st.PutIfAbsent(t.Context(), fmt.Sprintf("_delta_log/%020d.json", v), []byte(data)))
}

const (
	lineProto = `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors","domainMetadata"]}}`
	lineMeta  = `{"metaData":{"id":"t1","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{"delta.enableDeletionVectors":"true"}}}`
)

func TestReplayReconciliation(t *testing.T) {
	ctx := t.Context()
	tbl, st, clk := newMemTable(t)
	now := clk.Now().UnixMilli()
	old := now - int64(8*24*time.Hour/time.Millisecond) // older than the 7-day default
	dv := `{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2}`
	putCommit(t, st, 0, `{"commitInfo":{"operation":"CREATE TABLE"}}`, lineProto, lineMeta,
		`{"add":{"path":"a.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`,
		`{"add":{"path":"b%20c.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`,
		`{"add":{"path":"old.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`,
		`{"txn":{"appId":"k/0","version":10,"lastUpdated":1}}`,
		`{"domainMetadata":{"domain":"keep","configuration":"{}","removed":false}}`,
		`{"domainMetadata":{"domain":"gone","configuration":"{}","removed":false}}`,
		`{"someFutureAction":{"x":1}}`)
	putCommit(t, st, 1,
		// DV update: remove the old key, add the new one.
		`{"remove":{"path":"a.parquet","deletionTimestamp":`+fmt.Sprint(now)+`,"dataChange":true}}`,
		`{"add":{"path":"a.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true,"deletionVector":`+dv+`}}`,
		// A remove whose DV differs from the live add does not remove it.
		`{"remove":{"path":"b%20c.parquet","deletionTimestamp":1,"dataChange":true,"deletionVector":`+dv+`}}`,
		`{"remove":{"path":"old.parquet","deletionTimestamp":`+fmt.Sprint(old)+`,"dataChange":true}}`,
		`{"txn":{"appId":"k/0","version":7,"lastUpdated":2}}`,
		`{"txn":{"appId":"k/1","version":3,"lastUpdated":2}}`,
		`{"domainMetadata":{"domain":"gone","configuration":"","removed":true}}`)
	// Paths are keyed decoded: this removes "b%20c.parquet".
	putCommit(t, st, 2, `{"remove":{"path":"b c.parquet","deletionTimestamp":`+fmt.Sprint(now)+`,"dataChange":true,`+
		`"extendedFileMetadata":true,"partitionValues":{},"size":1,"stats":"{\"numRecords\":1}","tags":{"k":"v"}}}`)

	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), snap.Version())
	files := snap.Files()
	require.Equal(t, []string{"a.parquet"}, paths(files))
	require.NotNil(t, files[0].DeletionVector)
	require.Equal(t, int64(2), files[0].DeletionVector.Cardinality)

	tomb := snap.Tombstones()
	var tp []string
	for _, r := range tomb {
		tp = append(tp, r.Path)
	}
	// old.parquet's tombstone expired; a.parquet (no DV) and "b c.parquet" remain; the
	// DV'd remove of b%20c with deletionTimestamp 1 expired long ago.
	require.Equal(t, []string{"a.parquet", "b c.parquet"}, tp)
	// Tombstones keep what VACUUM and checkpoints use, not statistics or tags.
	require.Equal(t, int64(1), *tomb[1].Size)
	require.Empty(t, tomb[1].Stats)
	require.Nil(t, tomb[1].Tags)

	v, ok := snap.TxnVersion("k/0")
	require.True(t, ok)
	require.Equal(t, int64(7), v, "latest txn wins even when it goes down")
	_, ok = snap.TxnVersion("nope")
	require.False(t, ok)
	require.Len(t, snap.Txns(), 2)
	require.Equal(t, []string{"keep"}, keys(snap.DomainMetadata()))

	at1, err := tbl.SnapshotAt(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, []string{"a.parquet", "b%20c.parquet"}, paths(at1.Files()))
	_, err = tbl.SnapshotAt(ctx, 3)
	var vr *deltalog.VersionRangeError
	require.ErrorAs(t, err, &vr)
	require.ErrorIs(t, err, deltalog.ErrNotExist)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestReplayErrors(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, st *memstore.Store)
		wantErr  error
		wantPath string
	}{
		{"truncated line", func(t *testing.T, st *memstore.Store) {
			putCommit(t, st, 0, lineProto, lineMeta)
			putCommit(t, st, 1, `{"add":{"path":"a.parquet","partitionValu`)
		}, nil, "_delta_log/00000000000000000001.json"},
		{"empty commit", func(t *testing.T, st *memstore.Store) {
			putCommit(t, st, 0, lineProto, lineMeta)
			require.NoError(t, st.Put(t.Context(), "_delta_log/00000000000000000001.json", nil))
		}, nil, "_delta_log/00000000000000000001.json"},
		{"gap", func(t *testing.T, st *memstore.Store) {
			putCommit(t, st, 0, lineProto, lineMeta)
			putCommit(t, st, 2, `{"txn":{"appId":"a","version":1}}`)
		}, deltalog.ErrLogGap, ""},
		{"no metadata", func(t *testing.T, st *memstore.Store) {
			putCommit(t, st, 0, lineProto)
		}, nil, "_delta_log/00000000000000000000.json"},
		{"unknown reader feature", func(t *testing.T, st *memstore.Store) {
			putCommit(t, st, 0, `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["variantType"],"writerFeatures":["variantType"]}}`, lineMeta)
		}, deltalog.ErrUnsupportedFeature, ""},
		{"reader version 4", func(t *testing.T, st *memstore.Store) {
			putCommit(t, st, 0, `{"protocol":{"minReaderVersion":4,"minWriterVersion":7}}`, lineMeta)
		}, deltalog.ErrUnsupportedFeature, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, st, _ := newMemTable(t)
			tc.setup(t, st)
			_, err := tbl.Snapshot(t.Context())
			require.Error(t, err)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			}
			if tc.wantPath != "" {
				var ce *deltalog.CorruptFileError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, tc.wantPath, ce.Path)
			}
		})
	}
}

func TestSnapshotUsesCheckpoint(t *testing.T) {
	ctx := t.Context()
	tbl, st, _ := newMemTable(t)
	snap := createTable(t, tbl, nil)
	for i := range 12 {
		res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile(fmt.Sprintf("f%02d.parquet", i)), txnAction("app", int64(i))},
			deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
		require.NoError(t, res.CheckpointErr)
		require.Equal(t, res.Version == 10, res.Checkpointed)
		snap, err = tbl.Snapshot(ctx)
		require.NoError(t, err)
	}
	// Delete commits before the checkpoint: the snapshot must come from it.
	for v := range 10 {
		require.NoError(t, st.Delete(ctx, fmt.Sprintf("_delta_log/%020d.json", v)))
	}
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(12), snap.Version())
	require.Len(t, snap.Files(), 12)
	v, _ := snap.TxnVersion("app")
	require.Equal(t, int64(11), v)
	at10, err := tbl.SnapshotAt(ctx, 10)
	require.NoError(t, err)
	require.Len(t, at10.Files(), 10)
	_, err = tbl.SnapshotAt(ctx, 5)
	require.ErrorIs(t, err, deltalog.ErrNotExist)

	// A corrupt checkpoint with neither an older checkpoint nor the commits before it
	// cannot be recovered from.
	require.NoError(t, st.Put(ctx, "_delta_log/00000000000000000010.checkpoint.parquet", []byte("garbage")))
	_, err = tbl.Snapshot(ctx)
	require.Error(t, err)
}

func TestSnapshotFallsBackFromCorruptCheckpoint(t *testing.T) {
	ctx := t.Context()
	tbl, st, _ := newMemTable(t)
	snap := createTable(t, tbl, nil)
	for i := range 10 {
		_, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile(fmt.Sprintf("f%02d.parquet", i))}, deltalog.Operation{Name: deltalog.OpWrite})
		require.NoError(t, err)
		snap, err = tbl.Snapshot(ctx)
		require.NoError(t, err)
	}
	require.NoError(t, st.Put(ctx, "_delta_log/00000000000000000010.checkpoint.parquet", []byte("garbage")))
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Len(t, snap.Files(), 10)
}

func TestSnapshotCorruptLastCheckpointIgnored(t *testing.T) {
	ctx := t.Context()
	tbl, st, _ := newMemTable(t)
	createTable(t, tbl, nil)
	require.NoError(t, st.Put(ctx, "_delta_log/_last_checkpoint", []byte("{not json")))
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(0), snap.Version())
}

func TestReplayIgnoresForeignFiles(t *testing.T) {
	ctx := t.Context()
	tbl, st, _ := newMemTable(t)
	putCommit(t, st, 0, lineProto, lineMeta)
	for _, p := range []string{
		"_delta_log/.00000000000000000001.json.crc",
		"_delta_log/_commit_abc.json.tmp",
		"_delta_log/00000000000000000001.crc",
		"_delta_log/_commits/00000000000000000001.uuid.json",
		"_delta_log/00000000000000000005.checkpoint.0000000001.0000000002.parquet", // incomplete multi-part
	} {
		require.NoError(t, st.Put(ctx, p, []byte("x")))
	}
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(0), snap.Version())
}

// TestTornLatestCommit checks that a latest commit that does not parse is a
// *TornCommitError, and an earlier one only a *CorruptFileError: versions build
// on it.
func TestTornLatestCommit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int64 // the torn one; the log ends at 2
		latest  bool
	}{{"latest", 2, true}, {"earlier", 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, st, _ := newMemTable(t, deltalog.DisableCheckpoints())
			snap := createTable(t, tbl, nil)
			first := snap
			for _, f := range []string{"a.parquet", "b.parquet"} {
				res, err := tbl.Commit(t.Context(), snap, []deltalog.Action{addFile(f)}, deltalog.Operation{Name: deltalog.OpWrite})
				require.NoError(t, err)
				snap = res.Snapshot
			}
			path := fmt.Sprintf("_delta_log/%020d.json", tc.version)
			rc, err := st.Get(t.Context(), path)
			require.NoError(t, err)
			data, err := io.ReadAll(rc)
			require.NoError(t, rc.Close())
			require.NoError(t, err)
			require.NoError(t, st.Put(t.Context(), path, data[:len(data)/2]))

			// A full load, and a writer's update of a snapshot before it.
			_, err = tbl.Snapshot(t.Context())
			_, uerr := tbl.Update(t.Context(), first)
			for _, err := range []error{err, uerr} {
				ce, ok := errors.AsType[*deltalog.CorruptFileError](err)
				require.True(t, ok, "%v", err)
				require.Equal(t, path, ce.Path)
				torn, ok := errors.AsType[*deltalog.TornCommitError](err)
				require.Equal(t, tc.latest, ok, "%v", err)
				if ok {
					require.Equal(t, tc.version, torn.Version)
				}
			}
			prev, err := tbl.SnapshotAt(t.Context(), tc.version-1)
			require.NoError(t, err, "the versions before it read")
			require.Equal(t, tc.version-1, prev.Version())
		})
	}
}
