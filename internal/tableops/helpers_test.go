package tableops_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// fixture is a table on a memstore, behind a faultstore for tests of failures, whose
// writes, commits and snapshots all read one clock, so that tests move time instead of
// ageing files.
type fixture struct {
	store *faultstore.Store
	table *deltalog.Table
	now   time.Time
}

// start is the fixture clock's first reading.
var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func (f *fixture) clock() time.Time { return f.now }

func (f *fixture) advance(d time.Duration) { f.now = f.now.Add(d) }

func row(id int64, region string, cents int64) []any {
	return []any{id, region, decimal128.FromInt64(cents)}
}

// newFixture builds a table partitioned by region:
//
//	v0: create; file A (eu: ids 3, 1, 2); txn app-0 = 10
//	v1: files B (eu: ids 5, 4) and C (us: id 6); txn app-0 = 20, app-1 = 5
//	v2: a deletion vector on A deleting id 2; txn app-0 = 30
func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := t.Context()
	f := &fixture{now: start}
	f.store = faultstore.Wrap(memstore.New(memstore.Options{Now: f.clock}))
	tbl, err := deltalog.Open(ctx, f.store, deltalog.WithClock(f.clock), deltalog.DisableCheckpoints())
	require.NoError(t, err)
	f.table = tbl
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong},
		{Name: "region", Type: deltalog.TypeString, Nullable: true},
		{Name: "amount", Type: deltalog.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
	}}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	conf := map[string]string{deltalog.PropEnableDeletionVectors: "true"}
	proto := deltalog.MinimalProtocol(schema, conf)
	parts := []string{"region"}
	w, err := datafile.NewWriter(datafile.Options{Schema: schema, PartitionColumns: parts, Properties: conf})
	require.NoError(t, err)
	var snap *deltalog.Snapshot // nil until the table exists
	commit := func(actions []deltalog.Action, adds []deltalog.Add, op string) {
		t.Helper()
		for _, a := range adds {
			actions = append(actions, deltalog.Action{Add: &a})
		}
		_, err := tbl.Commit(ctx, snap, actions, deltalog.Operation{Name: op})
		require.NoError(t, err)
		snap, err = tbl.Snapshot(ctx)
		require.NoError(t, err)
	}

	addsA, err := w.Write(ctx, f.store, [][]any{row(3, "eu", 300), row(1, "eu", 1250), row(2, "eu", 200)})
	require.NoError(t, err)
	commit([]deltalog.Action{
		{Protocol: &proto},
		{Metadata: &deltalog.Metadata{ID: "11111111-2222-3333-4444-555555555555", Format: deltalog.Format{Provider: "parquet"},
			SchemaString: ss, PartitionColumns: parts, Configuration: conf}},
		{Txn: &deltalog.Txn{AppID: "app-0", Version: 10}},
	}, addsA, deltalog.OpCreateTable)

	addsBC, err := w.Write(ctx, f.store, [][]any{row(5, "eu", 500), row(4, "eu", 400), row(6, "us", 600)})
	require.NoError(t, err)
	require.Len(t, addsBC, 2)
	commit([]deltalog.Action{{Txn: &deltalog.Txn{AppID: "app-0", Version: 20}}, {Txn: &deltalog.Txn{AppID: "app-1", Version: 5}}},
		addsBC, deltalog.OpWrite)

	a := addsA[0]
	bm := roaring64.New()
	bm.Add(2) // row index 2 of A is id 2
	dvs, err := deltalog.WriteDeletionVectors(ctx, f.store, "", []*roaring64.Bitmap{bm})
	require.NoError(t, err)
	withDV := a
	withDV.DeletionVector = &dvs[0]
	commit([]deltalog.Action{{Remove: a.Remove(true)}, {Txn: &deltalog.Txn{AppID: "app-0", Version: 30}}},
		[]deltalog.Add{withDV}, deltalog.OpDelete)
	return f
}

// snapshot reads a version; -1 is the latest.
func (f *fixture) snapshot(t *testing.T, version int64) *deltalog.Snapshot {
	t.Helper()
	snap, err := f.table.Snapshot(t.Context())
	if version >= 0 {
		snap, err = f.table.SnapshotAt(t.Context(), version)
	}
	require.NoError(t, err)
	return snap
}

// rows reads the live rows of a version (-1: latest), file by file in path order.
func (f *fixture) rows(t *testing.T, version int64) [][]any {
	t.Helper()
	snap := f.snapshot(t, version)
	meta := snap.Metadata()
	var rows [][]any
	for _, a := range snap.Files() {
		r, err := datafile.Read(t.Context(), f.store, &a, snap.Schema(), datafile.ReadOptions{
			Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns,
		})
		require.NoError(t, err)
		rows = append(rows, r...)
	}
	return rows
}

// ids is the sorted id column of a version's rows.
func (f *fixture) ids(t *testing.T, version int64) []int64 {
	t.Helper()
	var out []int64
	for _, r := range f.rows(t, version) {
		out = append(out, r[0].(int64))
	}
	slices.Sort(out)
	return out
}

// commit returns the actions of one commit file.
func (f *fixture) commit(t *testing.T, version int64) []deltalog.Action {
	t.Helper()
	rc, err := f.store.Get(t.Context(), fmt.Sprintf("_delta_log/%020d.json", version))
	require.NoError(t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	var out []deltalog.Action
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		a, ok, err := deltalog.ParseLogLine(sc.Bytes())
		require.NoError(t, err)
		if ok {
			out = append(out, a)
		}
	}
	return out
}

// commitInfo returns the commitInfo of one commit.
func (f *fixture) commitInfo(t *testing.T, version int64) *deltalog.CommitInfo {
	t.Helper()
	for _, a := range f.commit(t, version) {
		if a.CommitInfo != nil {
			return a.CommitInfo
		}
	}
	t.Fatalf("version %d has no commitInfo", version)
	return nil
}

// files returns the live files of the latest version by partition value of region.
func (f *fixture) files(t *testing.T) map[string][]deltalog.Add {
	t.Helper()
	out := map[string][]deltalog.Add{}
	for _, a := range f.snapshot(t, -1).Files() {
		r := *a.PartitionValues["region"]
		out[r] = append(out[r], a)
	}
	return out
}
