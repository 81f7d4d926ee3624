package hive

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

func testEntry() catalog.Entry {
	return catalog.Entry{
		Name:     catalog.Name{Schema: "analytics", Table: "orders"},
		Location: "s3://bucket/tables/orders",
		Schema: &deltalog.StructType{Fields: []deltalog.StructField{
			{Name: "id", Type: deltalog.TypeLong, Metadata: map[string]any{}},
			{Name: "region", Type: deltalog.TypeString, Nullable: true, Metadata: map[string]any{"comment": "sales region"}},
		}},
		PartitionColumns: []string{"region"},
		Description:      "orders from sales.dbo.orders",
		Properties:       map[string]string{"cdc2delta.role": "table"},
	}
}

// The entry survives tableOf, the Thrift binary encoding and entryOf.
func TestEntryRoundTrip(t *testing.T) {
	long := testEntry()
	for i := range 200 { // a schema over the 4000 characters of one parameter
		long.Schema.Fields = append(long.Schema.Fields, deltalog.StructField{
			Name: "column_with_a_long_name_" + strings.Repeat("x", 10) + string(rune('a'+i%26)) + string(rune('a'+i/26)),
			Type: deltalog.TypeString, Nullable: true, Metadata: map[string]any{},
		})
	}
	for _, tc := range []struct {
		name  string
		entry catalog.Entry
		parts bool
	}{
		{"one schema parameter", testEntry(), false},
		{"schema in parts", long, true},
		{"no schema, no partitions", catalog.Entry{Name: catalog.Name{Schema: "d", Table: "t"}, Location: "file:///t"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := tableOf(tc.entry, "cdc2delta", time.Unix(1_700_000_000, 0))
			require.NoError(t, err)
			require.Equal(t, "EXTERNAL_TABLE", tb.TableType)
			require.Equal(t, "delta", tb.Parameters["spark.sql.sources.provider"])
			require.Equal(t, "TRUE", tb.Parameters["EXTERNAL"])
			require.Equal(t, tc.entry.Location, tb.SD.SerDe.Parameters["path"])
			require.Equal(t, tc.entry.Location, tb.SD.Location)
			require.Equal(t, []fieldSchema{placeholderCol}, tb.SD.Cols)
			require.Empty(t, tb.PartitionKeys, "Delta's partitions are not Hive partitions")
			_, one := tb.Parameters["spark.sql.sources.schema"]
			require.Equal(t, !tc.parts, one)

			buf := thrift.NewTMemoryBuffer()
			p := thrift.NewTBinaryProtocolConf(buf, &thrift.TConfiguration{})
			e := &enc{ctx: t.Context(), p: p}
			e.structBody(func() { e.table(&tb) })
			require.NoError(t, e.err)
			require.NoError(t, p.Flush(t.Context()))
			var back table
			require.NoError(t, readTable(t.Context(), p, &back))
			require.Equal(t, tb, back)

			got, err := entryOf(tc.entry.Name, &back)
			require.NoError(t, err)
			require.Equal(t, tc.entry, got)
		})
	}
}

// Lookup reports what Spark itself registered for a Delta table (an empty
// schema, a placeholder location and the real one in "path"), and keeps a
// foreign provider in Properties.
func TestEntryOfSparkTable(t *testing.T) {
	tb := table{
		SD: storageDescriptor{
			Location: "file:/warehouse/sparkdb.db/t1-__PLACEHOLDER__",
			SerDe:    serDeInfo{Parameters: map[string]string{"path": "file:/data/t1", "serialization.format": "1"}},
		},
		Parameters: map[string]string{
			"EXTERNAL": "TRUE", "spark.sql.create.version": "4.1.1", "spark.sql.partitionProvider": "catalog",
			"spark.sql.sources.provider": "delta", "spark.sql.sources.schema": `{"type":"struct","fields":[]}`,
			"transient_lastDdlTime": "1796598499",
		},
	}
	name := catalog.Name{Schema: "sparkdb", Table: "t1"}
	e, err := entryOf(name, &tb)
	require.NoError(t, err)
	require.Equal(t, catalog.Entry{Name: name, Location: "file:/data/t1"}, e)

	tb.Parameters["spark.sql.sources.provider"] = "parquet"
	e, err = entryOf(name, &tb)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"spark.sql.sources.provider": "parquet"}, e.Properties)
}

func TestTableOfRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    catalog.Entry
		want string
	}{
		{"three-part name", catalog.Entry{Name: catalog.Name{Catalog: "c", Schema: "s", Table: "t"}, Location: "x"}, "leave the catalog part empty"},
		{"no database", catalog.Entry{Name: catalog.Name{Table: "t"}, Location: "x"}, "want database.table"},
		{"no location", catalog.Entry{Name: catalog.Name{Schema: "s", Table: "t"}}, "no location"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tableOf(tc.e, "o", time.Now())
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "thrift://127.0.0.1:9083", want: "127.0.0.1:9083"},
		{in: "metastore:9083", want: "metastore:9083"},
		{in: "http://h:9083", err: `scheme "http"`},
		{in: "thrift://h", err: "want thrift://host:port"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseURI(tc.in)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
