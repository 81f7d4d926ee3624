package main

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// helperEnv makes the test binary act as a helper process: "main" runs
// cdc2bench (so the orchestrator can re-execute itself as `apply`), "alloc"
// holds 64 MiB for a while, "tree" starts an "alloc" child and holds 32 MiB.
const helperEnv = "CDC2BENCH_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "main":
		os.Exit(run(context.Background(), os.Args, os.Stderr))
	case "alloc":
		hold(64 << 20)
		os.Exit(0)
	case "tree":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), helperEnv+"=alloc")
		if err := child.Start(); err != nil {
			os.Exit(3)
		}
		hold(32 << 20)
		if child.Wait() != nil {
			os.Exit(4)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hold touches n bytes and keeps them resident for a second.
func hold(n int) {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	// Kept: the sampler outside (every 50ms) must see the bytes resident; it gives
	// the helper no signal to wait for.
	time.Sleep(time.Second)
	if b[n-1] == 42 { // keep b alive
		os.Exit(5)
	}
}

// helper returns a command running the test binary as helper kind.
func helper(kind string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+kind)
	return cmd
}

// modelRow is a live row as the contract's semantics leave it.
type modelRow struct {
	seq int64
	op  byte
	row row
}

// applyModel applies events to a key → row map the way every system must:
// the newest event per key wins if it is newer than the stored row.
func applyModel(m map[int64]modelRow, cs []change) {
	last := map[int64]change{}
	for _, c := range cs {
		if p, ok := last[c.ID]; !ok || c.Seq > p.Seq {
			last[c.ID] = c
		}
	}
	for id, c := range last {
		cur, exists := m[id]
		switch {
		case exists && c.Seq <= cur.seq:
		case c.Op == 'd':
			delete(m, id)
		default:
			m[id] = modelRow{seq: c.Seq, op: c.Op, row: c.Row}
		}
	}
}

// baseModel is the starting table of n rows.
func baseModel(seed uint64, n int) map[int64]modelRow {
	m := make(map[int64]modelRow, n)
	for id := int64(1); id <= int64(n); id++ {
		c := baseChange(seed, id)
		m[id] = modelRow{seq: c.Seq, op: c.Op, row: c.Row}
	}
	return m
}

// readTable reads a local table's live rows with deltalog and datafile,
// independently of the Sink.
func readTable(t *testing.T, dir string) map[int64]modelRow {
	t.Helper()
	store, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	idx := map[string]int{}
	for i, f := range snap.Schema().Fields {
		idx[f.Name] = i
	}
	out := map[int64]modelRow{}
	for _, add := range snap.Files() {
		rows, err := datafile.Read(t.Context(), store, &add, snap.Schema(), datafile.ReadOptions{Properties: snap.Metadata().Configuration})
		require.NoError(t, err)
		for _, r := range rows {
			id := r[idx["id"]].(int64)
			_, dup := out[id]
			require.False(t, dup, "key %d stored twice", id)
			seq, err := seqOf(r[idx["_cdc_position"]].(string))
			require.NoError(t, err)
			require.Equal(t, commitMillis(seq)*1000, r[idx["_cdc_commit_time"]], "commit time of key %d", id)
			out[id] = modelRow{seq: seq, op: r[idx["_cdc_op"]].(string)[0], row: row{
				CustomerID: r[idx["customer_id"]].(int64),
				Status:     r[idx["status"]].(string),
				Amount:     r[idx["amount"]].(float64),
				Quantity:   r[idx["quantity"]].(int32),
				Note:       r[idx["note"]].(string),
				UpdatedAt:  r[idx["updated_at"]].(int64),
			}}
		}
	}
	return out
}
