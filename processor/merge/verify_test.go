package merge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// verifyTable builds a table with deletes, deletion vectors and an
// on-disk key index in a directory, and returns the directory and the
// index's.
func verifyTable(t *testing.T) (tableDir, indexDir string) {
	t.Helper()
	tableDir = t.TempDir()
	store, err := localstore.New(localstore.Options{Dir: tableDir})
	require.NoError(t, err)
	d := newDiskIndexTable(t)
	d.store.Store = store
	s := d.open()
	d.apply(s, len(d.batches))
	require.NoError(t, s.Close())
	return tableDir, d.dir
}

func localStore(t *testing.T, dir string) deltalog.Store {
	t.Helper()
	s, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	return s
}

// copyTable copies a table directory for one corruption.
func copyTable(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "table")
	require.NoError(t, os.CopyFS(out, os.DirFS(dir)))
	return out
}

// corruptCommit commits actions to the table in dir as they are.
func corruptCommit(t *testing.T, dir string, actions ...deltalog.Action) {
	t.Helper()
	table, err := deltalog.Open(t.Context(), localStore(t, dir))
	require.NoError(t, err)
	snap, err := table.Snapshot(t.Context())
	require.NoError(t, err)
	_, err = table.Commit(t.Context(), snap, actions, deltalog.Operation{Name: "WRITE"})
	require.NoError(t, err)
}

// liveFiles returns the table's files, those with a deletion vector first.
func liveFiles(t *testing.T, dir string) (*deltalog.Snapshot, []deltalog.Add) {
	t.Helper()
	table, err := deltalog.Open(t.Context(), localStore(t, dir))
	require.NoError(t, err)
	snap, err := table.Snapshot(t.Context())
	require.NoError(t, err)
	files := snap.Files()
	var out []deltalog.Add
	for _, f := range files {
		if f.DeletionVector != nil {
			out = append(out, f)
		}
	}
	for _, f := range files {
		if f.DeletionVector == nil {
			out = append(out, f)
		}
	}
	return snap, out
}

func TestVerifyTable(t *testing.T) {
	golden, indexDir := verifyTable(t)
	rep, err := VerifyTable(t.Context(), localStore(t, golden), VerifyOptions{IndexDir: indexDir})
	require.NoError(t, err)
	require.Empty(t, rep.Problems, rep.Summary())
	require.True(t, rep.OK())
	require.Positive(t, rep.DeletionVectors, "the table must have deletion vectors to check")
	require.Positive(t, rep.TombstoneKeys, "the table must have tombstones to check")
	require.True(t, rep.IndexChecked)
	t.Log(rep.Summary())

	// A pipeline that has not saved its key index yet leaves nothing to
	// check there: that is not a problem of the table.
	rep, err = VerifyTable(t.Context(), localStore(t, golden), VerifyOptions{IndexDir: t.TempDir()})
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.Summary())
	require.False(t, rep.IndexChecked)
	require.True(t, rep.IndexUnsaved)
	require.Contains(t, rep.Summary(), "no key index saved yet")

	tests := []struct {
		name    string
		corrupt func(t *testing.T, dir string)
		kind    ProblemKind
		msg     string // in the first problem's text
	}{
		{"duplicate key", func(t *testing.T, dir string) {
			_, files := liveFiles(t, dir)
			f := files[len(files)-1] // no deletion vector
			copyPath := "part-copy-" + filepath.Base(f.Path)
			data, err := os.ReadFile(filepath.Join(dir, f.Path))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, copyPath), data, 0o644))
			cp := f
			cp.Path = copyPath
			corruptCommit(t, dir, deltalog.Action{Add: &cp})
		}, ProblemDuplicateKey, "also live in file"},
		{"deletion vector past the end", func(t *testing.T, dir string) {
			_, files := liveFiles(t, dir)
			f := files[len(files)-1]
			st, _, err := deltalog.ParseStats(f.Stats)
			require.NoError(t, err)
			dvs, err := deltalog.WriteDeletionVectors(t.Context(), localStore(t, dir), "",
				[]*roaring64.Bitmap{roaring64.BitmapOf(0, uint64(st.NumRecords)+3)})
			require.NoError(t, err)
			withDV := f
			withDV.DeletionVector = &dvs[0]
			corruptCommit(t, dir, deltalog.Action{Remove: f.Remove(true)}, deltalog.Action{Add: &withDV})
		}, ProblemDeletionVector, "deletes row"},
		{"deletion vector on a removed file", func(t *testing.T, dir string) {
			_, files := liveFiles(t, dir)
			f := files[0] // a deletion vector
			require.NotNil(t, f.DeletionVector)
			require.NoError(t, os.Remove(filepath.Join(dir, f.Path)))
		}, ProblemMissingFile, "deletion vector but the file is not in storage"},
		{"wrong statistics", func(t *testing.T, dir string) {
			_, files := liveFiles(t, dir)
			f := files[len(files)-1]
			var st map[string]any
			require.NoError(t, json.Unmarshal([]byte(f.Stats), &st))
			st["numRecords"] = st["numRecords"].(float64) + 1
			b, err := json.Marshal(st)
			require.NoError(t, err)
			wrong := f
			wrong.Stats = string(b)
			corruptCommit(t, dir, deltalog.Action{Remove: f.Remove(false)}, deltalog.Action{Add: &wrong})
		}, ProblemStats, "numRecords is"},
		{"wrong maximum", func(t *testing.T, dir string) {
			_, files := liveFiles(t, dir)
			f := files[len(files)-1]
			var st map[string]any
			require.NoError(t, json.Unmarshal([]byte(f.Stats), &st))
			st["maxValues"].(map[string]any)["order_id"] = 1e9
			b, err := json.Marshal(st)
			require.NoError(t, err)
			wrong := f
			wrong.Stats = string(b)
			corruptCommit(t, dir, deltalog.Action{Remove: f.Remove(false)}, deltalog.Action{Add: &wrong})
		}, ProblemStats, "maxValues.order_id is 1000000000, the rows give 400"},
		{"live row below its tombstone", func(t *testing.T, dir string) {
			snap, files := liveFiles(t, dir)
			f := files[len(files)-1]
			l, err := cdctable.LayoutOf(snap.Metadata())
			require.NoError(t, err)
			rows, err := datafile.Read(t.Context(), localStore(t, dir), &f, l.Schema, datafile.ReadOptions{Properties: snap.Metadata().Configuration})
			require.NoError(t, err)
			key, err := l.AppendRowKey(nil, rows[0])
			require.NoError(t, err)
			above := codecs.Position{Commit: codecs.LSN{0xff}}
			line := cdctable.AppendTombstoneLine(nil, string(key), above, 1, false)
			require.NoError(t, os.WriteFile(filepath.Join(dir, cdctable.TombstoneDir, cdctable.TombstoneCompactedPrefix+"x.json"), line, 0o644))
		}, ProblemTombstone, "at or below its delete"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTable(t, golden)
			tc.corrupt(t, dir)
			rep, err := VerifyTable(t.Context(), localStore(t, dir), VerifyOptions{MaxProblems: 3})
			require.NoError(t, err)
			require.False(t, rep.OK())
			require.LessOrEqual(t, len(rep.Problems), 3)
			p := rep.Problems[0]
			require.Equal(t, tc.kind, p.Kind, "%v", rep.Problems)
			require.Contains(t, p.String(), tc.msg)
			require.NotEmpty(t, p.File, p.String())
			t.Log(p)
		})
	}
}

// TestVerifyTableSpills finds a duplicate among keys sorted through spill
// files, with a memory budget far below the table's keys.
func TestVerifyTableSpills(t *testing.T) {
	golden, _ := verifyTable(t)
	dir := copyTable(t, golden)
	_, files := liveFiles(t, dir)
	f := files[len(files)-1]
	data, err := os.ReadFile(filepath.Join(dir, f.Path))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "part-copy.parquet"), data, 0o644))
	cp := f
	cp.Path = "part-copy.parquet"
	corruptCommit(t, dir, deltalog.Action{Add: &cp})
	st, _, err := deltalog.ParseStats(f.Stats)
	require.NoError(t, err)

	spillDir := t.TempDir()
	opts := VerifyOptions{MemoryBytes: 2 << 10, TempDir: spillDir, MaxProblems: 1000}
	rep, err := VerifyTable(t.Context(), localStore(t, dir), opts)
	require.NoError(t, err)
	require.Greater(t, rep.KeySpills, 10, "keys must spill")
	require.Equal(t, int(st.NumRecords), rep.Total, "one duplicate per row of the copied file: %v", rep.Problems[:3])
	left, err := os.ReadDir(spillDir)
	require.NoError(t, err)
	require.Empty(t, left, "spill files removed")
}
