package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestApplyMatchesModel builds both base tables, applies chains and upserts
// with `cdc2bench apply` in each merge mode, and compares the tables, read
// back independently, with the contract's semantics applied in memory.
func TestApplyMatchesModel(t *testing.T) {
	const seed, rows = 9, 600
	p := preset{BaseRows: rows, Batches: 3, Batch: 150, UpsertBatches: [3]int{60, 150, 300}, Small: 10, SmallBatches: 3}
	dir := t.TempDir()
	bases := map[bool]string{true: filepath.Join(dir, "base-dv"), false: filepath.Join(dir, "base-legacy")}
	for dv, base := range bases {
		require.NoError(t, buildBase(t.Context(), base, seed, rows, dv))
		require.Equal(t, baseModel(seed, rows), readTable(t, base), "base dv=%v", dv)
	}
	for _, name := range []string{"5", "2b", "4", "3"} {
		ws, err := selectWorkloads(workloads(p), name)
		require.NoError(t, err)
		g := newGenerator(workloadSeed(seed, name), rows)
		batches := g.batches(ws[0])
		want := baseModel(seed, rows)
		batchDir := filepath.Join(dir, name, "batches")
		require.NoError(t, os.MkdirAll(batchDir, 0o755))
		for i, b := range batches {
			require.NoError(t, writeBatch(filepath.Join(batchDir, batchFileName(i+1)), b.Changes))
			applyModel(want, b.Changes)
		}
		require.Len(t, want, g.rows)
		for _, mode := range []string{"dv", "cow"} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				table := filepath.Join(dir, name, mode)
				require.NoError(t, copyTable(bases[mode == "dv"], table))
				out := filepath.Join(dir, name, mode+".json")
				require.NoError(t, applyCmd(t.Context(), []string{"-mode", mode, "-table", table, "-batches", batchDir, "-out", out}, io.Discard))
				require.Equal(t, want, readTable(t, table))

				var res runnerResult
				require.NoError(t, readJSON(out, &res))
				require.Equal(t, "cdc2delta-"+mode, res.System)
				require.Len(t, res.Batches, len(batches))
				for i, b := range res.Batches {
					require.Equal(t, i+1, b.Index)
					require.Equal(t, len(batches[i].Changes), b.Rows)
					require.Positive(t, b.Seconds)
				}
				if mode == "dv" {
					require.Positive(t, res.Extra["deletion_vectors"])
				} else if mode == "cow" {
					require.Zero(t, res.Extra["deletion_vectors"])
				}
			})
		}
	}
}

func TestApplyUsage(t *testing.T) {
	err := applyCmd(t.Context(), []string{"-mode", "mor", "-table", "x", "-batches", "y", "-out", "z"}, io.Discard)
	require.ErrorIs(t, err, errUsage)
	require.Equal(t, 2, run(t.Context(), []string{"cdc2bench", "apply", "-table", "x"}, io.Discard))
}

// TestCopyTableSharesDataFiles checks that copies leave the base intact.
func TestCopyTableSharesDataFiles(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	require.NoError(t, buildBase(t.Context(), base, 1, 300, true))
	before, err := dirBytes(base)
	require.NoError(t, err)
	cp := filepath.Join(dir, "copy")
	require.NoError(t, copyTable(base, cp))
	copied, err := dirBytes(cp)
	require.NoError(t, err)
	require.Equal(t, before, copied)

	ws, err := selectWorkloads(workloads(testPreset), "2b")
	require.NoError(t, err)
	g := newGenerator(1, 300)
	ws[0].Batch, ws[0].Batches = 100, 1
	b := g.batches(ws[0])[0]
	batchDir := filepath.Join(dir, "batches")
	require.NoError(t, os.MkdirAll(batchDir, 0o755))
	require.NoError(t, writeBatch(filepath.Join(batchDir, batchFileName(1)), b.Changes))
	require.NoError(t, applyCmd(t.Context(), []string{"-mode", "cow", "-table", cp, "-batches", batchDir, "-out", filepath.Join(dir, "r.json")}, io.Discard))

	after, err := dirBytes(base)
	require.NoError(t, err)
	require.Equal(t, before, after, "applying to the copy changed the base")
	require.Equal(t, baseModel(1, 300), readTable(t, base))
	grown, err := dirBytes(cp)
	require.NoError(t, err)
	require.Greater(t, grown, copied)
}
