package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TestCatalogHiveConfig: a hive catalog validates, and sync with no table
// yet asks the metastore nothing (it is not there).
func TestCatalogHiveConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`
kafka: {brokers: ["127.0.0.1:1"], group_id: g, topics: [shop.sales.dbo.orders]}
schema_registry: {url: "http://127.0.0.1:1"}
catalog: {type: hive, uris: ["thrift://127.0.0.1:1"], name: "{schema}.{table}", request_timeout: 2s}
`), 0o600))
	r := cli(t, "validate", "--config", cfg)
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, "catalog", "sync", "--config", cfg)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "absent     dbo.orders")
	r = cli(t, "catalog", "--config", cfg)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "catalog sync --config FILE")
}

func TestCatalogNames(t *testing.T) {
	k := config.Catalog{Type: config.CatalogUnity, Name: "lake.{schema}.{table}",
		Overrides: []config.CatalogOverride{{Table: "dbo.secret", Skip: true}}}
	name := catalogSource(k)
	src := route.TableSource{Topic: "shop.sales.dbo.orders", Database: "sales", Schema: "dbo", Table: "orders"}
	s, ok := name(src, "s3://lake/sales/dbo/orders/", catalog.RoleTable)
	require.True(t, ok)
	require.Equal(t, catalog.Source{Name: catalog.Name{Catalog: "lake", Schema: "dbo", Table: "orders"}, Location: "s3://lake/sales/dbo/orders", Role: "table"}, s)
	s, ok = name(src, "tables/sales/dbo/orders_changes", catalog.RoleChangeLog)
	require.True(t, ok)
	require.Equal(t, "lake.dbo.orders_changes", s.Name.String())
	abs, err := filepath.Abs("tables/sales/dbo/orders_changes")
	require.NoError(t, err)
	require.Equal(t, "file://"+abs, s.Location)
	s, ok = name(src, "s3://lake/sales/dbo/orders_history", catalog.RoleHistory)
	require.True(t, ok)
	require.Equal(t, catalog.Source{Name: catalog.Name{Catalog: "lake", Schema: "dbo", Table: "orders_history"}, Location: "s3://lake/sales/dbo/orders_history", Role: "history"}, s)
	// history: only: the history table is at the table's path, under its name.
	src.Path = "s3://lake/sales/dbo/orders"
	s, ok = name(src, src.Path, catalog.RoleHistory)
	require.True(t, ok)
	require.Equal(t, catalog.Source{Name: catalog.Name{Catalog: "lake", Schema: "dbo", Table: "orders"}, Location: "s3://lake/sales/dbo/orders", Role: "history"}, s)
	src.Table = "secret"
	_, ok = name(src, "x", catalog.RoleTable)
	require.False(t, ok)
}

// TestCatalogSyncTargetsHistoryOnly: `catalog sync` registers a history:
// only table once, under the table's name with the history role, beside
// the current-state and history tables of a table with history: true.
func TestCatalogSyncTargetsHistoryOnly(t *testing.T) {
	only, beside := config.HistoryOnly, config.HistoryBeside
	c := config.Default()
	c.Kafka.Topics = []string{"shop.sales.dbo.orders", "shop.sales.dbo.prices"}
	c.Tables.Path = "s3://lake/{database}/{schema}/{table}"
	c.Tables.Overrides = []config.TableOverride{{Name: "dbo.orders", History: &only}, {Name: "dbo.prices", History: &beside}}
	c.Catalog = config.Catalog{Type: config.CatalogUnity, Name: "lake.{schema}.{table}"}
	targets, err := syncTargets(t.Context(), c, 0)
	require.NoError(t, err)
	var got []string
	for _, tg := range targets["default"] {
		got = append(got, tg.src.Name.String()+" "+tg.path+" "+tg.src.Role)
	}
	require.Equal(t, []string{
		"lake.dbo.orders s3://lake/sales/dbo/orders history",
		"lake.dbo.prices s3://lake/sales/dbo/prices table",
		"lake.dbo.prices_history s3://lake/sales/dbo/prices_history history",
	}, got)
}

// TestCatalogRoutePerTableGroup: one registrar per catalog; each table
// goes to the registrar its settings pick, named by that catalog's
// template; a table no enabled catalog takes is not registered.
func TestCatalogRoutePerTableGroup(t *testing.T) {
	c, err := config.Parse([]byte(`
kafka: {brokers: ["127.0.0.1:1"], group_id: g, topics: [t]}
schema_registry: {url: "http://127.0.0.1:1"}
catalog: {type: hive, uris: ["thrift://127.0.0.1:1"], name: "{schema}.{table}"}
catalogs:
  finance: {type: glue, region: eu-west-1, endpoint: "http://127.0.0.1:1", access_key_id: AK, secret_access_key: SK, name: "finance.{table}"}
tables:
  overrides: [{name: dbo.ledger, catalog: finance}]
`), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.NoError(t, c.Validate())
	lanes, err := newRegistrars(t.Context(), c, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	require.NoError(t, err)
	require.Len(t, lanes, 2)
	require.Equal(t, "default", lanes[0].r.Name())
	require.Equal(t, "finance", lanes[1].r.Name())
	pick := catalogRoute(c, lanes)
	r, s := pick(route.TableSource{Database: "shop", Schema: "dbo", Table: "ledger"}, "s3://lake/ledger", catalog.RoleTable)
	require.Same(t, lanes[1].r, r)
	require.Equal(t, "finance.ledger", s.Name.String())
	r, s = pick(route.TableSource{Database: "shop", Schema: "dbo", Table: "orders"}, "s3://lake/orders", catalog.RoleChangeLog)
	require.Same(t, lanes[0].r, r)
	require.Equal(t, "dbo.orders_changes", s.Name.String())

	c.Catalog = config.Catalog{} // only finance: orders is not registered
	lanes, err = newRegistrars(t.Context(), c, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	require.NoError(t, err)
	require.Len(t, lanes, 1)
	r, _ = catalogRoute(c, lanes)(route.TableSource{Database: "shop", Schema: "dbo", Table: "orders"}, "s3://lake/orders", catalog.RoleTable)
	require.Nil(t, r)
}
