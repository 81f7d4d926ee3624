package deltalog_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// testClock is a settable clock shared by a memstore and a Table.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock {
	return &testClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond) // strictly increasing, like real commits
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newMemTable(t testing.TB, opts ...deltalog.Option) (*deltalog.Table, *memstore.Store, *testClock) {
	t.Helper()
	clk := newTestClock()
	st := memstore.New(memstore.Options{Now: clk.Now})
	tbl, err := deltalog.Open(t.Context(), st, append([]deltalog.Option{deltalog.WithClock(clk.Now)}, opts...)...)
	require.NoError(t, err)
	return tbl, st, clk
}

func testSchema() *deltalog.StructType {
	return &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong, Nullable: false},
		{Name: "name", Type: deltalog.TypeString, Nullable: true},
		{Name: "part", Type: deltalog.TypeString, Nullable: true},
	}}
}

// createActions returns protocol + metaData for a new table.
func createActions(t testing.TB, schema *deltalog.StructType, config map[string]string, partitions ...string) []deltalog.Action {
	t.Helper()
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	if config == nil {
		config = map[string]string{}
	}
	if partitions == nil {
		partitions = []string{}
	}
	p := deltalog.MinimalProtocol(schema, config)
	return []deltalog.Action{
		{Protocol: &p},
		{Metadata: &deltalog.Metadata{
			ID:               "8f2b1f8e-3c52-4a55-9b0e-5a1e3e0c0001",
			Format:           deltalog.Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString:     ss,
			PartitionColumns: partitions,
			Configuration:    config,
		}},
	}
}

func createTable(t testing.TB, tbl *deltalog.Table, config map[string]string) *deltalog.Snapshot {
	t.Helper()
	_, err := tbl.Commit(t.Context(), nil, createActions(t, testSchema(), config), deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	return snap
}

func addFile(path string) deltalog.Action {
	return deltalog.Action{Add: &deltalog.Add{
		Path: path, PartitionValues: map[string]*string{}, Size: 100, ModificationTime: 1, DataChange: true,
		Stats: `{"numRecords":10}`,
	}}
}

func removeFile(path string) deltalog.Action {
	return deltalog.Action{Remove: &deltalog.Remove{Path: path, DataChange: true}}
}

func txnAction(app string, v int64) deltalog.Action {
	return deltalog.Action{Txn: &deltalog.Txn{AppID: app, Version: v}}
}

func paths(files []deltalog.Add) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}
