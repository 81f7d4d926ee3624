package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/readers"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// readerTable is one combination of the table features cdc2delta writes, as
// the reader matrix (readers_integration_test.go, docs/readers.md) builds it.
type readerTable struct {
	name string
	// dv and portable are the deletion_vectors and column_names settings.
	dv, portable bool
	cdf          bool
	partitioned  bool
	ntz          bool // a datetime2 column: timestamp_ntz, reader feature timestampNtz
	checkpoint   bool // checkpoints at versions 2 and 4
	// legacyMapping rewrites the protocol to the legacy (2,5) cdc2delta gave
	// column-mapped tables before ADR 0027.
	legacyMapping bool
}

// readerTables are the rows of the reader matrix: deletion vectors on and off
// against column mapping on and off, then each other feature with both.
var readerTables = []readerTable{
	{name: "default (deletion vectors, column mapping)", dv: true},
	{name: "deletion vectors, portable names", dv: true, portable: true},
	{name: "column mapping", portable: false},
	{name: "column mapping, protocol 2/5 (cdc2delta before ADR 0027)", legacyMapping: true},
	{name: "legacy: no deletion vectors, portable names", portable: true},
	{name: "deletion vectors, portable names, cdf", dv: true, portable: true, cdf: true},
	{name: "portable names, cdf", portable: true, cdf: true},
	{name: "column mapping, cdf", cdf: true},
	{name: "deletion vectors, column mapping, partitioned", dv: true, partitioned: true},
	{name: "portable names, partitioned", portable: true, partitioned: true},
	{name: "portable names, timestamp_ntz", portable: true, ntz: true},
	{name: "portable names, checkpointed", portable: true, checkpoint: true},
	{name: "everything: deletion vectors, column mapping, cdf, partitioned, timestamp_ntz, checkpointed", dv: true, cdf: true, partitioned: true, ntz: true, checkpoint: true},
}

// dir is the table's directory name.
func (rt readerTable) dir() string {
	name, _, _ := strings.Cut(rt.name, ":")
	name, _, _ = strings.Cut(name, " (")
	return strings.NewReplacer(", ", "-", " ", "-", "/", "-").Replace(name)
}

// matrixRow is one source row of the matrix tables, by source column name.
type matrixRow map[string]any

// matrixVersions is the history every matrix table gets: one batch per
// version, as (op, id) pairs; values follow from the id and the version.
var matrixVersions = [][]struct {
	op codecs.Op
	id int32
}{
	{{codecs.OpCreate, 1}, {codecs.OpCreate, 2}, {codecs.OpCreate, 3}, {codecs.OpCreate, 4}, {codecs.OpCreate, 5}, {codecs.OpCreate, 6}},
	{{codecs.OpUpdate, 2}, {codecs.OpDelete, 3}, {codecs.OpCreate, 7}},
	{{codecs.OpUpdate, 1}, {codecs.OpUpdate, 7}, {codecs.OpDelete, 5}},
	{{codecs.OpCreate, 8}, {codecs.OpUpdate, 4}},
	{{codecs.OpUpdate, 8}, {codecs.OpDelete, 6}},
}

// matrixLayout is the source schema of a matrix table: the key, a name, a
// column whose name needs column mapping, the partition column and, for
// timestamp_ntz tables, a datetime2.
func (rt readerTable) layouts() (*codecs.Layout, *codecs.Layout) {
	cols := []codecs.Column{
		{Name: "id", Type: codecs.Type{Kind: codecs.KindInteger}, SourceType: "INT"},
		{Name: "name", Type: codecs.Type{Kind: codecs.KindString}, Nullable: true, SourceType: "NVARCHAR(40)"},
		{Name: "Unit Price", Type: codecs.DecimalType(10, 2), Nullable: true, SourceType: "MONEY"},
		{Name: "region", Type: codecs.Type{Kind: codecs.KindString}, Nullable: true, SourceType: "NVARCHAR(8)"},
	}
	if rt.ntz {
		cols = append(cols, codecs.Column{Name: "updated", Type: codecs.Type{Kind: codecs.KindTimestampNTZ}, Nullable: true, SourceType: "DATETIME2(6)"})
	}
	return &codecs.Layout{SchemaID: 1, Name: "shop.sales.dbo.orders.Value", Columns: cols},
		&codecs.Layout{SchemaID: 2, Name: "shop.sales.dbo.orders.Key", Columns: cols[:1]}
}

// matrixValues is the row of id as version v writes it.
func (rt readerTable) matrixValues(id int32, v int) []any {
	row := []any{id, fmt.Sprintf("name %d v%d", id, v), decimal128.FromInt64(int64(id)*1000 + int64(v)), []string{"eu", "us", "apac"}[id%3]}
	if id == 4 {
		row[1] = nil // a null
	}
	if rt.ntz {
		row = append(row, int64(1_700_000_000_000_000)+int64(id)*3_600_000_000+int64(v)*1_000_123)
	}
	return row
}

// buildReaderTable writes rt under dir with cdc2delta's MERGE engine, one
// commit per entry of matrixVersions, and returns the source rows of every
// version.
func buildReaderTable(ctx context.Context, dir string, rt readerTable) ([]map[int32]matrixRow, error) {
	store, err := localstore.New(localstore.Options{Dir: dir})
	if err != nil {
		return nil, err
	}
	names := merge.ColumnNamesMapped
	if rt.portable {
		names = merge.ColumnNamesPortable
	}
	tableOpts := []deltalog.Option{deltalog.DisableCheckpoints()}
	if rt.checkpoint {
		tableOpts = []deltalog.Option{deltalog.CheckpointInterval(2)}
	}
	opts := merge.Options{Store: store, TableName: "orders", DeletionVectors: new(rt.dv), ColumnNames: names,
		EnableChangeDataFeed: rt.cdf, TableOptions: tableOpts}
	if rt.partitioned {
		opts.PartitionBy = []string{"region"}
	}
	sink, err := merge.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	layout, key := rt.layouts()
	cur := map[int32]matrixRow{}
	var versions []map[int32]matrixRow
	pos := 0
	for v, batch := range matrixVersions {
		b := merge.Batch{}
		for _, c := range batch {
			pos++
			var lsn codecs.LSN
			lsn[8], lsn[9] = byte(pos>>8), byte(pos)
			values := rt.matrixValues(c.id, v)
			ch := codecs.Change{Op: c.op, Table: codecs.TableID{Database: "sales", Schema: "dbo", Table: "orders"},
				Pos: codecs.Position{Commit: lsn, Change: lsn, Serial: 1}, CommitMillis: 1_700_000_000_000 + int64(pos),
				Layout: layout, KeyLayout: key, KeyIndex: []int{0}, Key: []any{c.id}, Row: values}
			b.Records = append(b.Records, merge.Record{TopicPartition: cdctable.TopicPartition{Topic: "shop.sales.dbo.orders"}, Offset: int64(pos), Change: ch})
			if c.op == codecs.OpDelete {
				delete(cur, c.id)
				continue
			}
			r := matrixRow{}
			for i, col := range layout.Columns {
				r[col.Name] = values[i]
			}
			cur[c.id] = r
		}
		res, err := sink.Apply(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("table %s version %d: %w", rt.name, v, err)
		}
		if res.Version != int64(v) {
			return nil, fmt.Errorf("table %s: batch %d committed version %d", rt.name, v, res.Version)
		}
		versions = append(versions, maps.Clone(cur))
	}
	if rt.legacyMapping {
		if err := legacyColumnMappingProtocol(dir); err != nil {
			return nil, err
		}
	}
	return versions, nil
}

// legacyColumnMappingProtocol rewrites the protocol of version 0 (the only one, the
// table has no checkpoint) to the legacy (2,5), which says the same for this table.
func legacyColumnMappingProtocol(dir string) error {
	p := filepath.Join(dir, "_delta_log", "00000000000000000000.json")
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	re := regexp.MustCompile(`(?m)^\{"protocol":.*\}$`)
	if len(re.FindAll(data, -1)) != 1 {
		return fmt.Errorf("%s: want one protocol action", p)
	}
	data = re.ReplaceAll(data, []byte(`{"protocol":{"minReaderVersion":2,"minWriterVersion":5}}`))
	return os.WriteFile(p, data, 0o644)
}

// TestReaderTables builds every table of the reader matrix (without readers, which
// the full tier's TestReaderMatrix adds) and checks what describe says of it: the
// protocol the settings give, and for the default table that to_pandas refuses it
// and which settings make it read.
func TestReaderTables(t *testing.T) {
	want := map[string]string{
		"default (deletion vectors, column mapping)":               "3/7 [columnMapping deletionVectors]",
		"deletion vectors, portable names":                         "3/7 [deletionVectors]",
		"column mapping":                                           "3/7 [columnMapping]",
		"column mapping, protocol 2/5 (cdc2delta before ADR 0027)": "2/5 []",
		"legacy: no deletion vectors, portable names":              "1/2 []",
		"portable names, cdf":                                      "1/4 []",
		"portable names, timestamp_ntz":                            "3/7 [timestampNtz]",
	}
	for _, rt := range readerTables {
		dir := filepath.Join(t.TempDir(), rt.dir())
		versions, err := buildReaderTable(t.Context(), dir, rt)
		require.NoError(t, err, rt.name)
		require.Len(t, versions, len(matrixVersions))
		r := cli(t, "describe", "--json", dir)
		require.Equal(t, exitOK, r.code, r.stderr)
		var d tableDescription
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
		got := fmt.Sprintf("%d/%d %v", d.Protocol.MinReaderVersion, d.Protocol.MinWriterVersion, d.Protocol.ReaderFeatures)
		if w, ok := want[rt.name]; ok {
			require.Equal(t, w, got, rt.name)
		}
		require.Len(t, d.Readers, len(readers.APIs))
		if rt.name == readerTables[0].name {
			require.Equal(t, readerInfo{Reader: "delta-rs", API: "DeltaTable(path).to_pandas()", Outcome: "refuses",
				Why: "refuses the reader features columnMapping, deletionVectors (its pyarrow reader has neither)",
				Fix: "column_names: portable and deletion_vectors: false"}, d.Readers[0])
			text := cli(t, "describe", dir)
			require.Contains(t, text.stdout, "\nReaders (deltalake 1.6.6, polars 2.1.0, ")
			require.Contains(t, text.stdout, "it reads tables created with column_names: portable and deletion_vectors: false")
		}
		if !rt.dv && rt.portable && !rt.ntz {
			require.Equal(t, "reads", d.Readers[0].Outcome, "%s: to_pandas reads a table without deletion vectors and column mapping", rt.name)
		}
	}
}
