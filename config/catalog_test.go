package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const catalogBase = `
kafka: {brokers: ["127.0.0.1:9092"], group_id: g, topics: [t]}
schema_registry: {url: "http://127.0.0.1:8081"}
`

func parseCatalog(t *testing.T, yml string, env map[string]string) (Config, error) {
	t.Helper()
	c, err := Parse([]byte(catalogBase+yml), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	require.NoError(t, err)
	return c, c.Validate()
}

func TestCatalogConfig(t *testing.T) {
	c, err := parseCatalog(t, `
catalog:
  type: unity
  endpoint: https://uc.example.com
  token: ${UC_TOKEN}
  name: "lake.{schema}.{table}"
  overrides:
    - {table: dbo.orders, name: lake.sales.orders}
    - {topic: noisy, skip: true}
`, map[string]string{"UC_TOKEN": "s3cr3t"})
	require.NoError(t, err)
	require.Equal(t, "s3cr3t", c.Catalog.Token.Reveal())
	require.Equal(t, "***", c.Catalog.Token.String())
	n, ok := c.Catalog.TableName(Source{Topic: "x", Database: "shop", Schema: "dbo", Table: "items"})
	require.True(t, ok)
	require.Equal(t, []string{"lake", "dbo", "items"}, n)
	n, ok = c.Catalog.TableName(Source{Topic: "x", Database: "shop", Schema: "DBO", Table: "Orders"})
	require.True(t, ok)
	require.Equal(t, []string{"lake", "sales", "orders"}, n)
	_, ok = c.Catalog.TableName(Source{Topic: "noisy"})
	require.False(t, ok)
}

func TestCatalogConfigProblems(t *testing.T) {
	for _, tc := range []struct{ yml, want string }{
		{`catalog: {type: nessie}`, "catalog.type"},
		{`catalog: {type: unity, endpoint: "uc:8080"}`, "catalog.endpoint: must be the Unity Catalog server's http(s)://host[:port]"},
		{`catalog: {type: glue}`, "catalog.name: must be set for a glue catalog"},
		{`catalog: {type: glue, name: "a.b.{table}"}`, `catalog.name: "a.b.{table}" has 3 parts; a glue catalog names tables with 2 (database.table)`},
		{`catalog: {type: glue, name: "{schema}.{tabel}"}`, "unknown placeholder {tabel}"},
		{`catalog: {type: glue, name: "{schema}.{table}", access_key_id: AK}`, "catalog.secret_access_key: must be set with access_key_id"},
		{`catalog: {type: hive, name: "{schema}.{table}", uris: ["http://hms:9083"]}`, `catalog.uris[0]: must be thrift://host:port`},
		{`catalog: {type: hive, name: "{schema}.{table}"}`, "catalog.uris: must list"},
		{`catalog: {type: glue, name: "{schema}.{table}", overrides: [{table: dbo.t}]}`, "catalog.overrides[0].name: must be set"},
		{`catalog: {type: unity, endpoint: "http://uc", token: a, token_file: /f}`, "catalog.token_file: set token or token_file, not both"},
	} {
		_, err := parseCatalog(t, tc.yml, nil)
		require.ErrorContains(t, err, tc.want, tc.yml)
	}
	_, err := parseCatalog(t, `catalog: {type: hive, name: "{schema}.{table}", uris: ["thrift://127.0.0.1:9083"]}`, nil)
	require.NoError(t, err)
}

// TestCatalogsPerTableGroup: named catalogs beside the catalog: block; a
// table group picks one with tables.defaults.catalog or an override, the
// rest stay in the default.
func TestCatalogsPerTableGroup(t *testing.T) {
	c, err := parseCatalog(t, `
catalog: {type: hive, uris: ["thrift://127.0.0.1:9083"], name: "{schema}.{table}"}
catalogs:
  finance: {type: glue, region: eu-west-1, name: "finance.{table}"}
  lake: {type: unity, endpoint: "https://uc.example.com", name: "lake.{schema}.{table}"}
tables:
  overrides:
    - {name: dbo.ledger, catalog: finance}
    - {name: dbo.orders, catalog: lake}
    - {name: dbo.items, catalog: default}
`, nil)
	require.NoError(t, err)
	var names []string
	for _, k := range c.EnabledCatalogs() {
		names = append(names, k.Name+"="+k.Type)
	}
	require.Equal(t, []string{"default=hive", "finance=glue", "lake=unity"}, names)
	for table, want := range map[string]string{"ledger": "finance", "orders": "lake", "items": "default", "other": "default"} {
		got, ok := c.CatalogOf(Source{Topic: "t", Database: "shop", Schema: "dbo", Table: table})
		require.True(t, ok, table)
		require.Equal(t, want, got, table)
	}

	// Only named catalogs: tables that pick none are not registered.
	c, err = parseCatalog(t, `
catalogs: {finance: {type: glue, name: "finance.{table}"}}
tables: {overrides: [{name: dbo.ledger, catalog: finance}]}
`, nil)
	require.NoError(t, err)
	_, ok := c.CatalogOf(Source{Schema: "dbo", Table: "orders"})
	require.False(t, ok)
	got, ok := c.CatalogOf(Source{Schema: "dbo", Table: "ledger"})
	require.True(t, ok)
	require.Equal(t, "finance", got)

	// "default" names the catalog: block even when it has no type: those
	// tables are not registered.
	c, err = parseCatalog(t, `tables: {defaults: {catalog: default}}`, nil)
	require.NoError(t, err)
	got, ok = c.CatalogOf(Source{Schema: "dbo", Table: "orders"})
	require.False(t, ok)
	require.Equal(t, "default", got)
}

func TestCatalogsProblems(t *testing.T) {
	for _, tc := range []struct{ yml, want string }{
		{`
catalogs: {finance: {type: glue, name: "f.{table}"}}
tables: {overrides: [{name: dbo.ledger, catalog: fiannce}]}`, `tables.overrides[0].catalog: unknown catalog "fiannce": the catalogs are default, finance`},
		{`
catalog: {type: glue, name: "f.{table}"}
tables: {defaults: {catalog: lake}}`, `tables.defaults.catalog: unknown catalog "lake": the catalogs are default`},
		{`catalogs: {default: {type: glue, name: "f.{table}"}}`, `catalogs.default: "default" is the catalog: block's name`},
		{`catalogs: {Fin: {type: glue, name: "f.{table}"}}`, `catalogs.Fin: "Fin": a catalog's name is lower-case`},
		{`catalogs: {fin: {name: "f.{table}"}}`, `catalogs.fin.type: must be unity, glue or hive`},
		{`catalogs: {fin: {type: glue}}`, `catalogs.fin.name: must be set for a glue catalog`},
		{`catalogs: {fin: {type: hive, name: "{schema}.{table}", uris: ["http://h:1"]}}`, `catalogs.fin.uris[0]: must be thrift://host:port`},
		{`catalogs: {fin: {type: glue, name: "f.{table}", overrides: [{table: dbo.t, name: "a.{table}"}]}}`,
			`catalogs.fin.overrides[0].name: "a.{table}": placeholders are for catalogs.fin.name`},
	} {
		_, err := parseCatalog(t, tc.yml, nil)
		require.ErrorContains(t, err, tc.want, tc.yml)
	}
}
