package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

// ageFiles sets the modification time of every file outside _delta_log.
func ageFiles(t *testing.T, dir string, mtime time.Time) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, "_delta_log") {
			return err
		}
		return os.Chtimes(p, mtime, mtime)
	}))
}

func writeFile(t *testing.T, dir, rel string, mtime time.Time) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	require.NoError(t, os.Chtimes(p, mtime, mtime))
}

// vacuumTable extends testTable:
//
//	v3: remove B, removed 8 days ago (its tombstone has expired)
//	v4: remove A (with its DV) one hour ago, add C (ids 1, 3)
//
// and ages every data file to 10 days, then adds orphans and hidden files.
func vacuumTable(t *testing.T, dir string) (tbl *deltalog.Table, a, b, c deltalog.Add) {
	t.Helper()
	ctx := t.Context()
	tbl = testTable(t, dir)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	files := snap.Files()
	for _, f := range files {
		if f.DeletionVector != nil {
			a = f
		} else {
			b = f
		}
	}
	remove := func(f deltalog.Add, at time.Time) deltalog.Action {
		r, ts := f.Remove(true), at.UnixMilli()
		r.DeletionTimestamp = &ts
		return deltalog.Action{Remove: r}
	}
	now := time.Now()
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{remove(b, now.Add(-8*24*time.Hour))}, deltalog.Operation{Name: deltalog.OpDelete})
	require.NoError(t, err)
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	w, err := datafile.NewWriter(datafile.Options{Schema: snap.Schema(), Properties: snap.Metadata().Configuration})
	require.NoError(t, err)
	adds, err := w.Write(ctx, tbl.Store(), [][]any{row(1, "a", 1250), row(3, "c", 300)})
	require.NoError(t, err)
	c = adds[0]
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{remove(a, now.Add(-time.Hour)), {Add: &c}}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)

	old := now.Add(-10 * 24 * time.Hour)
	ageFiles(t, dir, old)
	writeFile(t, dir, "orphan-old.parquet", old)
	writeFile(t, dir, "orphan-new.parquet", now)
	writeFile(t, dir, "_hidden/x.parquet", old)
	writeFile(t, dir, ".staging/y.parquet", old)
	writeFile(t, dir, "_change_data/cdc-old.parquet", old)
	return tbl, a, b, c
}

func TestVacuum(t *testing.T) {
	dir := t.TempDir()
	tbl, a, b, c := vacuumTable(t, dir)
	dvFile, err := a.DeletionVector.RelativePath()
	require.NoError(t, err)
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		return err == nil
	}
	doomed := []string{b.Path, "orphan-old.parquet", "_change_data/cdc-old.parquet"}
	kept := []string{a.Path, dvFile, c.Path, "orphan-new.parquet", "_hidden/x.parquet", ".staging/y.parquet"}

	r := cli(t, "vacuum", "--dry-run", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	listed := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.ElementsMatch(t, doomed, listed[:len(listed)-1])
	require.Contains(t, listed[len(listed)-1], "would delete 3 files")
	for _, p := range doomed {
		require.True(t, exists(p), "dry run deleted %s", p)
	}

	r = exe(t, "vacuum", "--retain", "1h", dir)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "shorter than the table's delta.deletedFileRetentionDuration (168h0m0s)")

	r = exe(t, "vacuum", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "deleted 3 files")
	for _, p := range doomed {
		require.False(t, exists(p), "%s should be deleted", p)
	}
	for _, p := range kept {
		require.True(t, exists(p), "%s should be kept", p)
	}

	// Every version still within the retention reads completely: the latest (6, after
	// the two VACUUM commits), 4, and 3, whose file A was removed only an hour ago.
	for v := int64(3); v <= 6; v++ {
		require.NotEmpty(t, readRows(t, tbl, v), "version %d", v)
	}
	require.Equal(t, []int64{1, 3}, ids(t, tbl, 3))

	h := jsonLines(t, cli(t, "history", "--json", "--limit", "2", dir).stdout)
	require.Equal(t, "VACUUM END", h[0]["operation"])
	require.Equal(t, "3", h[0]["operationMetrics"].(map[string]any)["numDeletedFiles"])
	require.Equal(t, "COMPLETED", h[0]["operationParameters"].(map[string]any)["status"])
	require.Equal(t, "VACUUM START", h[1]["operation"])
	require.Equal(t, "3", h[1]["operationMetrics"].(map[string]any)["numFilesToDelete"])

	// A forced zero retention releases A and its deletion vector; the latest version still reads.
	r = exe(t, "vacuum", "--retain", "0s", "--force", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.False(t, exists(a.Path))
	require.False(t, exists(dvFile))
	require.True(t, exists(c.Path))
	require.True(t, exists("_hidden/x.parquet"))
	require.Equal(t, []int64{1, 3}, ids(t, tbl, -1))
	require.True(t, exists("_delta_log/00000000000000000000.json"))
}

func TestOptimize(t *testing.T) {
	dir := t.TempDir()
	tbl := testTable(t, dir)
	ctx := t.Context()
	before := readRows(t, tbl, -1)

	r := exe(t, "optimize", "--order-by-key", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "compacted 2 files into 1 (1 deletion vector purged)")

	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 3, snap.Version())
	files := snap.Files()
	require.Len(t, files, 1)
	require.Nil(t, files[0].DeletionVector)
	require.False(t, files[0].DataChange)
	after := readRows(t, tbl, -1)
	require.ElementsMatch(t, before, after)
	var got []int64
	for _, r := range after {
		got = append(got, r[0].(int64))
	}
	require.Equal(t, []int64{1, 3, 4, 5}, got, "rows are sorted by the key")
	require.True(t, slices.IsSorted(got))
	v, _ := snap.TxnVersion("orders-0")
	require.EqualValues(t, 30, v, "optimize leaves txns alone")
	require.Equal(t, []int64{1, 2, 3}, ids(t, tbl, 0), "time travel still reads")

	h := jsonLines(t, cli(t, "history", "--json", "--limit", "1", dir).stdout)[0]
	require.Equal(t, "OPTIMIZE", h["operation"])
	m := h["operationMetrics"].(map[string]any)
	require.Equal(t, "2", m["numRemovedFiles"])
	require.Equal(t, "1", m["numAddedFiles"])
	require.Equal(t, "1", m["numDeletionVectorsRemoved"])

	r = exe(t, "optimize", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "nothing to optimize")
}
