package catalog

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// fake is an in-memory catalog that counts calls and fails on demand.
type fake struct {
	mu      sync.Mutex
	entries map[Name]Entry
	calls   map[string]int
	err     error // returned by every call while set
	hang    bool  // every call waits for its context
}

func newFake() *fake { return &fake{entries: map[Name]Entry{}, calls: map[string]int{}} }

func (f *fake) enter(ctx context.Context, op string) error {
	f.mu.Lock()
	f.calls[op]++
	err, hang := f.err, f.hang
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return fmt.Errorf("fake %s: %w", op, ctx.Err())
	}
	return err
}

func (f *fake) Lookup(ctx context.Context, n Name) (Entry, error) {
	if err := f.enter(ctx, "lookup"); err != nil {
		return Entry{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.entries[n]
	if !ok {
		return Entry{}, fmt.Errorf("fake: %s: %w", n, ErrNotFound)
	}
	return e, nil
}

func (f *fake) Create(ctx context.Context, e Entry) error {
	if err := f.enter(ctx, "create"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.entries[e.Name]; ok {
		return fmt.Errorf("fake: %s: %w", e.Name, ErrExists)
	}
	e.Format = FormatDelta
	f.entries[e.Name] = e
	return nil
}

func (f *fake) Update(ctx context.Context, e Entry) error {
	if err := f.enter(ctx, "update"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e.Format = FormatDelta
	f.entries[e.Name] = e
	return nil
}

func (f *fake) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *fake) set(err error, hang bool) {
	f.mu.Lock()
	f.err, f.hang = err, hang
	f.mu.Unlock()
}

// testTable is a Delta table in memory whose metadata the tests change.
type testTable struct {
	t    *testing.T
	tbl  *deltalog.Table
	snap *deltalog.Snapshot
}

func newTestTable(t *testing.T, fields ...deltalog.StructField) *testTable {
	tbl, err := deltalog.Open(t.Context(), memstore.New(memstore.Options{}), deltalog.DisableCheckpoints())
	require.NoError(t, err)
	tt := &testTable{t: t, tbl: tbl}
	tt.commitMeta("orders", fields...)
	return tt
}

func (tt *testTable) commitMeta(description string, fields ...deltalog.StructField) {
	schema := &deltalog.StructType{Fields: append([]deltalog.StructField{{Name: "id", Type: deltalog.TypeLong}}, fields...)}
	ss, err := schema.SchemaString()
	require.NoError(tt.t, err)
	proto := deltalog.MinimalProtocol(schema, nil)
	actions := []deltalog.Action{{Metadata: &deltalog.Metadata{ID: "t", Format: deltalog.Format{Provider: "parquet"}, SchemaString: ss,
		Description: description, Configuration: map[string]string{"cdc2delta.keyColumns": "id"}, PartitionColumns: []string{}}}}
	op := deltalog.Operation{Name: deltalog.OpSetTblProps}
	if tt.snap == nil {
		actions = append([]deltalog.Action{{Protocol: &proto}}, actions...)
		op.Name = deltalog.OpCreateTable
	}
	res, err := tt.tbl.Commit(tt.t.Context(), tt.snap, actions, op)
	require.NoError(tt.t, err)
	tt.snap = res.Snapshot
}

func (tt *testTable) commitData() {
	res, err := tt.tbl.Commit(tt.t.Context(), tt.snap, []deltalog.Action{{Add: &deltalog.Add{Path: fmt.Sprintf("f%d.parquet", tt.snap.Version()),
		PartitionValues: map[string]*string{}, Size: 1, DataChange: true}}}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(tt.t, err)
	tt.snap = res.Snapshot
}
