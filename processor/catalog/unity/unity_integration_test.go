//go:build integration

package unity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// EnvUnityURL holds the URL of the OSS Unity Catalog server that
// scripts/setup/unitycatalog.sh starts ("http://127.0.0.1:PORT", no
// authorization, catalog "unity").
const EnvUnityURL = "CDC2DELTA_UNITY_URL"

func server(t *testing.T) (*Catalog, string) {
	t.Helper()
	u := os.Getenv(EnvUnityURL)
	if u == "" {
		t.Fatalf("%s is not set: run scripts/test.sh --full, or scripts/setup/unitycatalog.sh start DIR", EnvUnityURL)
	}
	c, err := New(Options{Endpoint: u})
	require.NoError(t, err)
	// A schema of the test's own.
	schema := fmt.Sprintf("s%d", time.Now().UnixNano())
	require.NoError(t, c.do(t.Context(), http.MethodPost, "/schemas", map[string]string{"name": schema, "catalog_name": "unity"}, nil))
	return c, schema
}

func TestUnityRoundTrip(t *testing.T) {
	c, schema := server(t)
	ctx := t.Context()
	n := catalog.Name{Catalog: "unity", Schema: schema, Table: "orders"}
	_, err := c.Lookup(ctx, n)
	require.ErrorIs(t, err, catalog.ErrNotFound)

	dir := t.TempDir()
	s := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong, Metadata: map[string]any{"comment": "order id"}},
		{Name: "Unit Price", Type: deltalog.DecimalType{Precision: 19, Scale: 4}, Nullable: true},
		{Name: "placed", Type: deltalog.TypeTimestampNTZ, Nullable: true},
		{Name: "region", Type: deltalog.TypeString, Nullable: true},
	}}
	e := catalog.Entry{Name: n, Location: "file://" + dir, Schema: s, PartitionColumns: []string{"region"},
		Description: "orders", Properties: map[string]string{"cdc2delta.role": "table"}}
	require.NoError(t, c.Create(ctx, e))
	require.ErrorIs(t, c.Create(ctx, e), catalog.ErrExists)
	got, err := c.Lookup(ctx, n)
	require.NoError(t, err)
	require.Equal(t, catalog.FormatDelta, got.Format)
	require.True(t, catalog.SameLocation(e.Location, got.Location), "%s vs %s", e.Location, got.Location)
	require.Empty(t, catalog.Differences(e, got))
	require.Equal(t, deltalog.TypeTimestampNTZ, got.Schema.Fields[2].Type)
	require.Equal(t, []string{"region"}, got.PartitionColumns)

	// The columns as the server stores them.
	var ti tableInfo
	require.NoError(t, c.do(ctx, http.MethodGet, "/tables/"+n.String(), nil, &ti))
	require.Equal(t, "EXTERNAL", ti.TableType)
	require.Equal(t, "DELTA", ti.DataSourceFormat)
	require.Equal(t, "decimal(19,4)", ti.Columns[1].TypeText)
	require.Equal(t, "DECIMAL", ti.Columns[1].TypeName)
	require.Equal(t, "TIMESTAMP_NTZ", ti.Columns[2].TypeName)

	e.Schema = &deltalog.StructType{Fields: append(s.Fields, deltalog.StructField{Name: "note", Type: deltalog.TypeString, Nullable: true})}
	require.NoError(t, c.Update(ctx, e))
	got, err = c.Lookup(ctx, n)
	require.NoError(t, err)
	require.Empty(t, catalog.Differences(e, got))
	require.Len(t, got.Schema.Fields, 5)

	// Missing schema: ErrNotFound.
	e.Name = catalog.Name{Catalog: "unity", Schema: schema + "_none", Table: "orders"}
	require.ErrorIs(t, c.Create(ctx, e), catalog.ErrNotFound)

	// Registering the same name for another directory is a conflict.
	out, _, err := catalog.Register(ctx, c, catalog.Entry{Name: n, Location: "file:///elsewhere", Schema: s}, 5*time.Second, c.Name())
	require.Equal(t, catalog.Conflict, out)
	var ce *catalog.ConflictError
	require.ErrorAs(t, err, &ce)
}

func TestUnityDownIsUnavailable(t *testing.T) {
	c, err := New(Options{Endpoint: "http://127.0.0.1:1"})
	require.NoError(t, err)
	_, err = c.Lookup(t.Context(), catalog.Name{Catalog: "unity", Schema: "s", Table: "t"})
	require.ErrorIs(t, err, catalog.ErrUnavailable)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = c.Lookup(ctx, catalog.Name{Catalog: "unity", Schema: "s", Table: "t"})
	require.True(t, errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "canceled"), "%v", err)
}
