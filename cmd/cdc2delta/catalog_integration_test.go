//go:build integration

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestCatalogSyncGlue: catalog sync registers every existing table, says
// what it did, changes nothing the second time, and exits 1 on a name held
// by another location, which it leaves alone.
func TestCatalogSyncGlue(t *testing.T) {
	ctx := t.Context()
	moto := fulltier.StartMotoGlue(t, "analytics")
	gc := moto.Glue()

	dir := t.TempDir()
	testTable(t, filepath.Join(dir, "tables", "sales", "dbo", "orders"))
	testTable(t, filepath.Join(dir, "tables", "sales", "dbo", "customers"))
	testTable(t, filepath.Join(dir, "control"))
	cfg := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `
kafka: {brokers: ["127.0.0.1:1"], group_id: g, topics: [shop.sales.dbo.orders, shop.sales.dbo.customers, shop.sales.dbo.items]}
schema_registry: {url: "http://127.0.0.1:1"}
tables: {path: "%s/tables/{database}/{schema}/{table}"}
control: {path: "%s/control"}
catalog:
  type: glue
  endpoint: %s
  region: us-east-1
  access_key_id: t
  secret_access_key: t
  name: "analytics.{table}"
  control_name: analytics.cdc2delta_control
`, dir, dir, moto.Endpoint), 0o600))

	r := cli(t, "catalog", "sync", "--config", cfg)
	require.Equal(t, 0, r.code, r.stderr+r.stdout)
	loc := "file://" + filepath.Join(dir, "tables", "sales", "dbo")
	require.Contains(t, r.stdout, "created    analytics.customers  "+loc+"/customers\n")
	require.Contains(t, r.stdout, "created    analytics.orders  "+loc+"/orders\n")
	require.Contains(t, r.stdout, "absent     analytics.items")
	require.Contains(t, r.stdout, "created    analytics.cdc2delta_control  file://"+filepath.Join(dir, "control")+"\n")
	require.Contains(t, r.stdout, "3 created, 0 updated, 0 unchanged, 0 conflicts, 0 errors")

	r = cli(t, "catalog", "sync", "--config", cfg)
	require.Equal(t, 0, r.code, r.stderr+r.stdout)
	require.Contains(t, r.stdout, "0 created, 0 updated, 3 unchanged, 0 conflicts, 0 errors")

	// Someone repoints customers elsewhere: sync refuses to take it back.
	_, err := gc.UpdateTable(ctx, &glue.UpdateTableInput{DatabaseName: aws.String("analytics"), TableInput: &types.TableInput{
		Name: aws.String("customers"), TableType: aws.String("EXTERNAL_TABLE"), Parameters: map[string]string{"table_type": "DELTA"},
		StorageDescriptor: &types.StorageDescriptor{Location: aws.String("s3://other/customers")}}})
	require.NoError(t, err)
	r = cli(t, "catalog", "sync", "--config", cfg)
	require.Equal(t, 1, r.code, r.stderr+r.stdout)
	require.Contains(t, r.stdout, "conflict   analytics.customers")
	require.Contains(t, r.stdout, "is registered at s3://other/customers")
	require.Contains(t, r.stderr, "1 of 4 tables not registered")
	out, err := gc.GetTable(ctx, &glue.GetTableInput{DatabaseName: aws.String("analytics"), Name: aws.String("customers")})
	require.NoError(t, err)
	require.Equal(t, "s3://other/customers", aws.ToString(out.Table.StorageDescriptor.Location))
}

// TestCatalogSyncLanes: catalog sync with two catalogs, one frozen: the
// answering catalog's tables are created, the frozen one's fail within
// their request timeout, each under a line naming its catalog, and sync
// exits 1.
func TestCatalogSyncLanes(t *testing.T) {
	up, hung := fulltier.StartMotoGlue(t, "analytics"), fulltier.StartMotoGlue(t, "analytics")
	hung.Freeze()

	dir := t.TempDir()
	testTable(t, filepath.Join(dir, "tables", "sales", "dbo", "orders"))
	testTable(t, filepath.Join(dir, "tables", "sales", "dbo", "ledger"))
	cfg := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `
kafka: {brokers: ["127.0.0.1:1"], group_id: g, topics: [shop.sales.dbo.orders, shop.sales.dbo.ledger]}
schema_registry: {url: "http://127.0.0.1:1"}
tables:
  path: "%s/tables/{database}/{schema}/{table}"
  overrides: [{name: dbo.ledger, catalog: finance}]
catalog: {type: glue, endpoint: %s, region: us-east-1, access_key_id: t, secret_access_key: t, name: "analytics.{table}"}
catalogs:
  finance: {type: glue, endpoint: %s, region: us-east-1, access_key_id: t, secret_access_key: t, name: "analytics.{table}", request_timeout: 1s}
`, dir, up.Endpoint, hung.Endpoint), 0o600))
	r := cli(t, "validate", "--config", cfg)
	require.Equal(t, 0, r.code, r.stderr)

	start := time.Now()
	r = cli(t, "catalog", "sync", "--config", cfg)
	require.Equal(t, 1, r.code, r.stderr+r.stdout)
	require.Less(t, time.Since(start), 2*time.Minute)
	loc := "file://" + filepath.Join(dir, "tables", "sales", "dbo")
	require.Contains(t, r.stdout, "catalog default (Glue at "+up.Endpoint+"):\ncreated    analytics.orders  "+loc+"/orders\n")
	require.Contains(t, r.stdout, "catalog finance (Glue at "+hung.Endpoint+"):\nerror      analytics.ledger  "+loc+"/ledger  ")
	require.Contains(t, r.stdout, "no answer from Glue at "+hung.Endpoint+" within 1s")
	require.Contains(t, r.stdout, "1 created, 0 updated, 0 unchanged, 0 conflicts, 1 errors")
	require.Contains(t, r.stderr, "1 of 2 tables not registered")

	hung.Thaw()
	r = cli(t, "catalog", "sync", "--config", cfg)
	require.Equal(t, 0, r.code, r.stderr+r.stdout)
	require.Contains(t, r.stdout, "created    analytics.ledger  "+loc+"/ledger\n")
	require.Contains(t, r.stdout, "1 created, 0 updated, 1 unchanged, 0 conflicts, 0 errors")
}
