package tableops_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// The fixture's live rows are ids 1 (12.50), 3, 4, 5 (eu) and 6 (us); id 2
// is deleted by a deletion vector.
const reconcileCSV = `id,region,amount
1,eu,12.5
2,eu,2.00
3,eu,3.00
4,eu,4.01
6,us,6
7,eu,1.00
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// writeParquet writes rows of the fixture's schema as a Parquet file.
func writeParquet(t *testing.T, rows [][]any) string {
	t.Helper()
	dir := t.TempDir()
	store, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong},
		{Name: "region", Type: deltalog.TypeString, Nullable: true},
		{Name: "amount", Type: deltalog.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
	}}
	w, err := datafile.NewWriter(datafile.Options{Schema: schema})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), store, rows)
	require.NoError(t, err)
	require.Len(t, adds, 1)
	return filepath.Join(dir, adds[0].Path)
}

func TestReconcile(t *testing.T) {
	f := newFixture(t)
	snap := f.snapshot(t, -1)
	parquetFile := writeParquet(t, [][]any{row(1, "eu", 1250), row(2, "eu", 200), row(3, "eu", 300), row(4, "eu", 401), row(6, "us", 600), row(7, "eu", 100)})
	for _, against := range []string{writeFile(t, "expected.csv", reconcileCSV), parquetFile} {
		t.Run(filepath.Ext(against), func(t *testing.T) {
			res, err := tableops.Reconcile(t.Context(), f.store, snap, tableops.ReconcileOptions{Against: against, Key: []string{"id"}})
			require.NoError(t, err)
			require.False(t, res.Equal())
			require.Equal(t, int64(5), res.TableRows)
			require.Equal(t, int64(6), res.FileRows)
			require.Equal(t, []int64{2, 1, 1}, []int64{res.Missing, res.Extra, res.Different})
			require.ElementsMatch(t, []string{"id=2", "id=7"}, res.MissingSamples)
			require.Equal(t, []string{"id=5"}, res.ExtraSamples)
			require.Equal(t, []string{"id=4: amount table=4.00 file=4.01"}, res.DifferentSamples)
			require.Equal(t, []string{"region", "amount"}, res.Compared)
		})
	}
	equal := writeFile(t, "equal.csv", "amount,id,region\n12.50,1,eu\n3,3,eu\n4,4,eu\n5.0,5,eu\n6.000,6,us\n")
	res, err := tableops.Reconcile(t.Context(), f.store, snap, tableops.ReconcileOptions{Against: equal, Key: []string{"id"}})
	require.NoError(t, err)
	require.True(t, res.Equal(), "%+v", res)
}

func TestReconcileRefuses(t *testing.T) {
	f := newFixture(t)
	snap := f.snapshot(t, -1)
	tests := []struct {
		name, file, content string
		key                 []string
		want                error
		msg                 string
	}{
		{"a decimal that is not", "e.csv", "id,amount\n1,12.50\n2,abc\n", []string{"id"}, tableops.ErrFileType,
			`line 3 column amount: "abc" is not a decimal(10,2)`},
		{"a column the table lacks", "e.csv", "id,colour\n1,red\n", []string{"id"}, tableops.ErrFileColumns,
			`column "colour" of`},
		{"a key the file lacks", "e.csv", "region\neu\n", []string{"id"}, tableops.ErrFileColumns,
			`key column "id" is not in`},
		{"not csv or parquet", "e.json", "{}", []string{"id"}, tableops.ErrFileFormat, `want a .csv or .parquet file`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tableops.Reconcile(t.Context(), f.store, snap, tableops.ReconcileOptions{Against: writeFile(t, tc.file, tc.content), Key: tc.key})
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.msg)
		})
	}
	// A Parquet column of another type.
	p := writeParquetStrings(t)
	_, err := tableops.Reconcile(t.Context(), f.store, snap, tableops.ReconcileOptions{Against: p, Key: []string{"id"}})
	require.ErrorIs(t, err, tableops.ErrFileType)
}

func writeParquetStrings(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	store, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong}, {Name: "amount", Type: deltalog.TypeString},
	}}
	w, err := datafile.NewWriter(datafile.Options{Schema: schema})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), store, [][]any{{int64(1), "12.50"}})
	require.NoError(t, err)
	return filepath.Join(dir, adds[0].Path)
}

// TestReconcileBoundedMemory reconciles a table far larger than the
// memory budget: the rows go through many hash partitions, and no more
// than a partition's are held at once.
func TestReconcileBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	store, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong}, {Name: "name", Type: deltalog.TypeString, Nullable: true},
		{Name: "amount", Type: deltalog.DecimalType{Precision: 12, Scale: 2}, Nullable: true},
	}}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	w, err := datafile.NewWriter(datafile.Options{Schema: schema, TargetFileSize: 256 << 10})
	require.NoError(t, err)
	const n = 20000
	rows := make([][]any, n)
	var csv strings.Builder
	csv.WriteString("id,name,amount\n")
	for i := range n {
		rows[i] = []any{int64(i), fmt.Sprintf("name-%06d", i), decimal128.FromInt64(int64(i) * 7)}
		switch {
		case i%1000 == 1: // missing from the file: extra
		case i%1000 == 2:
			fmt.Fprintf(&csv, "%d,other,%d.%02d\n", i, i*7/100, i*7%100)
		default:
			fmt.Fprintf(&csv, "%d,name-%06d,%d.%02d\n", i, i, i*7/100, i*7%100)
		}
	}
	for i := n; i < n+5; i++ {
		fmt.Fprintf(&csv, "%d,x,1\n", i)
	}
	adds, err := w.Write(t.Context(), store, rows)
	require.NoError(t, err)
	actions := []deltalog.Action{{Protocol: &deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &deltalog.Metadata{ID: "x", Format: deltalog.Format{Provider: "parquet"}, SchemaString: ss, Configuration: map[string]string{}}}}
	for i := range adds {
		actions = append(actions, deltalog.Action{Add: &adds[i]})
	}
	_, err = tbl.Commit(t.Context(), nil, actions, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)

	res, err := tableops.Reconcile(t.Context(), store, snap, tableops.ReconcileOptions{
		Against: writeFile(t, "expected.csv", csv.String()), Key: []string{"id"}, MemoryBytes: 64 << 10, TempDir: t.TempDir()})
	require.NoError(t, err)
	require.Equal(t, []int64{5, 20, 20}, []int64{res.Missing, res.Extra, res.Different})
	require.Greater(t, res.Partitions, 8)
	require.Less(t, res.HeldRows, int64(n/4), "rows held at once")
	require.Len(t, res.DifferentSamples, 10)
	t.Logf("%d partitions, at most %d of %d table rows held", res.Partitions, res.HeldRows, res.TableRows)
}
