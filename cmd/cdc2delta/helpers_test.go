package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// binary is the cdc2delta executable built by TestMain, for exit-code tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cdc2delta-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "cdc2delta")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		panic("building cdc2delta: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one command's outcome.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs a command in process, with no environment.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := runEnv(t.Context(), append([]string{"cdc2delta"}, args...),
		&env{stdout: &out, stderr: &errb, lookup: func(string) (string, bool) { return "", false }, self: "cdc2delta"})
	return result{code, out.String(), errb.String()}
}

// exe runs the built binary.
func exe(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{code, out.String(), errb.String()}
}

func testSchema() *deltalog.StructType {
	return &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong, Nullable: false, Metadata: map[string]any{"comment": "order id"}},
		{Name: "name", Type: deltalog.TypeString, Nullable: true},
		{Name: "amount", Type: deltalog.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "ts", Type: deltalog.TypeTimestamp, Nullable: true},
	}}
}

func row(id int64, name string, cents int64) []any {
	return []any{id, name, decimal128.FromInt64(cents), int64(1_700_000_000_000_000) + id}
}

// testTable builds a table in dir:
//
//	v0: create; file A with ids 1,2,3; txn orders-0 = 10
//	v1: file B with ids 4,5; txn orders-0 = 20, orders-1 = 5
//	v2: a deletion vector on A deleting id 2; txn orders-0 = 30
func testTable(t *testing.T, dir string) *deltalog.Table {
	t.Helper()
	ctx := t.Context()
	st, err := localstore.New(localstore.Options{Dir: dir, NoSync: true})
	require.NoError(t, err)
	tbl, err := deltalog.Open(ctx, st, deltalog.DisableCheckpoints())
	require.NoError(t, err)
	schema := testSchema()
	conf := map[string]string{deltalog.PropEnableDeletionVectors: "true", cdctable.PropKeyColumns: `["id"]`}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	proto := deltalog.MinimalProtocol(schema, conf)
	w, err := datafile.NewWriter(datafile.Options{Schema: schema, Properties: conf})
	require.NoError(t, err)

	addsA, err := w.Write(ctx, st, [][]any{row(3, "c", 300), row(1, "a", 1250), row(2, "b", 200)})
	require.NoError(t, err)
	created := time.Now().UnixMilli()
	v0 := []deltalog.Action{
		{Protocol: &proto},
		{Metadata: &deltalog.Metadata{ID: "11111111-2222-3333-4444-555555555555", Description: "orders table",
			Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}}, SchemaString: ss,
			PartitionColumns: []string{}, CreatedTime: &created, Configuration: conf}},
		{Txn: &deltalog.Txn{AppID: "orders-0", Version: 10}},
	}
	for _, a := range addsA {
		v0 = append(v0, deltalog.Action{Add: &a})
	}
	_, err = tbl.Commit(ctx, nil, v0, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)

	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	addsB, err := w.Write(ctx, st, [][]any{row(4, "d", 400), row(5, "e", 500)})
	require.NoError(t, err)
	v1 := []deltalog.Action{{Txn: &deltalog.Txn{AppID: "orders-0", Version: 20}}, {Txn: &deltalog.Txn{AppID: "orders-1", Version: 5}}}
	for _, a := range addsB {
		v1 = append(v1, deltalog.Action{Add: &a})
	}
	_, err = tbl.Commit(ctx, snap, v1, deltalog.Operation{Name: deltalog.OpWrite, Parameters: map[string]string{"mode": `"Append"`}})
	require.NoError(t, err)

	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	a := addsA[0]
	bm := roaring64.New()
	bm.Add(2) // row index 2 of A is id 2
	dvs, err := deltalog.WriteDeletionVectors(ctx, st, "", []*roaring64.Bitmap{bm})
	require.NoError(t, err)
	withDV := a
	withDV.DeletionVector = &dvs[0]
	withDV.DataChange = true
	v2 := []deltalog.Action{
		{Remove: a.Remove(true)},
		{Add: &withDV},
		{Txn: &deltalog.Txn{AppID: "orders-0", Version: 30}},
	}
	_, err = tbl.Commit(ctx, snap, v2, deltalog.Operation{Name: deltalog.OpDelete, Parameters: map[string]string{"predicate": `["id = 2"]`},
		Metrics: map[string]string{"numDeletedRows": "1"}})
	require.NoError(t, err)
	return tbl
}

// ids reads the id column of every live row at a version (-1: latest), sorted.
func ids(t *testing.T, tbl *deltalog.Table, version int64) []int64 {
	t.Helper()
	rows := readRows(t, tbl, version)
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r[0].(int64)
	}
	slices.Sort(out)
	return out
}

func readRows(t *testing.T, tbl *deltalog.Table, version int64) [][]any {
	t.Helper()
	ctx := t.Context()
	snap, err := tbl.Snapshot(ctx)
	if version >= 0 {
		snap, err = tbl.SnapshotAt(ctx, version)
	}
	require.NoError(t, err)
	var rows [][]any
	for _, f := range snap.Files() {
		r, err := datafile.Read(ctx, tbl.Store(), &f, snap.Schema(), datafile.ReadOptions{Properties: snap.Metadata().Configuration})
		require.NoError(t, err)
		rows = append(rows, r...)
	}
	return rows
}

func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}
