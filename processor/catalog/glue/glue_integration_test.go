//go:build integration

package glue

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// StartGlue starts a private moto server (moto serves Glue on the same
// endpoint as S3) and returns a catalog on it with database db created.
func startGlue(t *testing.T, db string) (*Catalog, *fulltier.Moto) {
	t.Helper()
	m := fulltier.StartMoto(t)
	c, err := New(t.Context(), Options{Endpoint: m.Endpoint, Region: "us-east-1", AccessKeyID: "test", SecretAccessKey: "test"})
	require.NoError(t, err)
	_, err = c.client.CreateDatabase(t.Context(), &glue.CreateDatabaseInput{DatabaseInput: &types.DatabaseInput{Name: aws.String(db)}})
	require.NoError(t, err)
	return c, m
}

func ordersSchema(extra ...deltalog.StructField) *deltalog.StructType {
	s := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong, Metadata: map[string]any{"comment": "order id"}},
		{Name: "Unit Price", Type: deltalog.DecimalType{Precision: 19, Scale: 4}, Nullable: true},
		{Name: "placed", Type: deltalog.TypeTimestampNTZ, Nullable: true},
		{Name: "tags", Type: &deltalog.ArrayType{ElementType: deltalog.TypeString}, Nullable: true},
	}}
	s.Fields = append(s.Fields, extra...)
	return s
}

func TestGlueRoundTripReadByBoto3(t *testing.T) {
	c, m := startGlue(t, "analytics")
	ctx := t.Context()
	n := catalog.Name{Schema: "analytics", Table: "orders"}
	_, err := c.Lookup(ctx, n)
	require.ErrorIs(t, err, catalog.ErrNotFound)

	e := catalog.Entry{Name: n, Location: "s3://lake/sales/dbo/orders", Schema: ordersSchema(), Description: "orders of the shop",
		Properties: map[string]string{"cdc2delta.role": "table"}}
	require.NoError(t, c.Create(ctx, e))
	require.ErrorIs(t, c.Create(ctx, e), catalog.ErrExists)

	got, err := c.Lookup(ctx, n)
	require.NoError(t, err)
	require.Equal(t, catalog.FormatDelta, got.Format)
	require.Equal(t, e.Location, got.Location)
	require.Empty(t, catalog.Differences(e, got), "a looked-up entry equals what was created")

	// What Athena and Spark on Glue read, through boto3.
	out := fulltier.PythonCode(t, `
import boto3, json, sys
g = boto3.client("glue", endpoint_url=sys.argv[1], region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
t = g.get_table(DatabaseName="analytics", Name="orders")["Table"]
print(json.dumps({"type": t["TableType"], "params": t["Parameters"], "loc": t["StorageDescriptor"]["Location"],
  "serde": t["StorageDescriptor"]["SerdeInfo"]["Parameters"], "desc": t.get("Description", ""),
  "cols": [[c["Name"], c["Type"], c.get("Comment", "")] for c in t["StorageDescriptor"]["Columns"]]}))
`, m.Endpoint)
	var b struct {
		Type, Loc, Desc string
		Params, Serde   map[string]string
		Cols            [][]string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &b), out)
	require.Equal(t, "EXTERNAL_TABLE", b.Type)
	require.Equal(t, "DELTA", b.Params["table_type"])
	require.Equal(t, "delta", b.Params["spark.sql.sources.provider"])
	require.Equal(t, "s3://lake/sales/dbo/orders", b.Loc)
	require.Equal(t, "s3://lake/sales/dbo/orders", b.Serde["path"])
	require.Equal(t, "orders of the shop", b.Desc)
	require.Equal(t, [][]string{{"id", "bigint", "order id"}, {"Unit Price", "decimal(19,4)", ""},
		{"placed", "timestamp", ""}, {"tags", "array<string>", ""}}, b.Cols)

	// An update adds a column, and Glue keeps one more version.
	e.Schema = ordersSchema(deltalog.StructField{Name: "note", Type: deltalog.TypeString, Nullable: true})
	require.NoError(t, c.Update(ctx, e))
	got, err = c.Lookup(ctx, n)
	require.NoError(t, err)
	require.Empty(t, catalog.Differences(e, got))
	vs, err := c.client.GetTableVersions(ctx, &glue.GetTableVersionsInput{DatabaseName: aws.String("analytics"), TableName: aws.String("orders")})
	require.NoError(t, err)
	require.Len(t, vs.TableVersions, 2)

	// A missing database is ErrNotFound.
	e.Name = catalog.Name{Schema: "nodb", Table: "orders"}
	require.ErrorIs(t, c.Create(ctx, e), catalog.ErrNotFound)
}

func TestGlueHungIsUnavailable(t *testing.T) {
	c, m := startGlue(t, "analytics")
	m.Freeze()
	defer m.Thaw()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, err := c.Lookup(ctx, catalog.Name{Schema: "analytics", Table: "orders"})
	require.ErrorIs(t, err, catalog.ErrUnavailable)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
}
