//go:build integration

package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

func ptr(v int64) *int64 { return &v }

// TestMaintenanceReadByDeltaRS checks that tables changed by optimize, restore and
// vacuum read in delta-rs exactly as before: optimize keeps the rows, restore gives the
// target version's rows and txns, vacuum keeps every retained version readable.
func TestMaintenanceReadByDeltaRS(t *testing.T) {
	dir := t.TempDir()
	testTable(t, dir)
	apps := []string{"orders-0", "orders-1"}
	read := func(v *int64) fulltier.Table {
		// The filter sends delta-rs through its DataFusion reader, which applies deletion
		// vectors; to_pyarrow_table refuses them.
		return fulltier.ReadTable(t, fulltier.DeltaRS, dir, fulltier.ReadOptions{Version: v, AppIDs: apps, Filter: "true"})
	}
	v0, v2 := read(ptr(0)), read(ptr(2))
	require.Len(t, v0.Rows, 3)
	require.Len(t, v2.Rows, 4, "delta-rs applies the deletion vector")

	r := exe(t, "optimize", "--order-by-key", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	optimized := read(nil)
	require.Equal(t, int64(3), *optimized.Version)
	require.Equal(t, v2.Rows, optimized.Rows)
	require.Equal(t, v2.Schema, optimized.Schema)
	require.Equal(t, map[string]*int64{"orders-0": ptr(30), "orders-1": ptr(5)}, optimized.Txn)

	r = exe(t, "restore", "--version", "0", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	restored := read(nil)
	require.Equal(t, int64(4), *restored.Version)
	require.Equal(t, v0.Rows, restored.Rows)
	require.Equal(t, map[string]*int64{"orders-0": ptr(10), "orders-1": ptr(-1)}, restored.Txn)

	r = exe(t, "vacuum", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	for v := int64(0); v <= 6; v++ {
		got := read(&v)
		require.NotEmpty(t, got.Rows, "version %d after vacuum", v)
	}
}
