package config_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/config"
)

// TestAzureStorage: an abfss:// path's container@account is a location, not
// credentials; storage.azure settings are checked, and secrets never print.
func TestAzureStorage(t *testing.T) {
	base := "kafka: {brokers: [k:9092], group_id: g, topics: [t]}\nschema_registry: {url: \"http://r:8081\"}\n"
	tests := []struct {
		name, yaml string
		problem    string // "" when valid
	}{
		{"abfss tables", `tables: {path: "abfss://lake@acct1.dfs.core.windows.net/db/{table}"}`, ""},
		{"onelake tables", `tables: {path: "abfss://ws@onelake.dfs.fabric.microsoft.com/l.Lakehouse/Tables/{table}"}`, ""},
		{"az tables with settings", `tables: {path: "az://lake/{table}"}
storage: {azure: {account: acct1, account_key: s3cr3t, endpoint: "http://127.0.0.1:10000/devstoreaccount1", request_timeout: 5s}}`, ""},
		{"service principal", `tables: {path: "az://lake/{table}"}
storage: {azure: {tenant_id: t, client_id: c, client_secret: s3cr3t}}`, ""},
		{"https with a password", `tables: {path: "https://u:s3cr3t@acct1.blob.core.windows.net/lake/{table}"}`, "tables.path"},
		{"endpoint not a URL", `tables: {path: "az://lake/{table}"}
storage: {azure: {endpoint: "127.0.0.1:10000"}}`, "storage.azure.endpoint"},
		{"endpoint with a SAS", `tables: {path: "az://lake/{table}"}
storage: {azure: {endpoint: "https://acct1.blob.core.windows.net?sig=s3cr3t"}}`, "storage.azure.endpoint"},
		{"secret without ids", `tables: {path: "az://lake/{table}"}
storage: {azure: {client_secret: s3cr3t}}`, "storage.azure.client_secret: needs storage.azure.tenant_id"},
		{"negative timeout", `tables: {path: "az://lake/{table}"}
storage: {azure: {request_timeout: -1s}}`, "storage.azure.request_timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Parse([]byte(base+tc.yaml), noEnv)
			require.NoError(t, err)
			err = c.Validate()
			if tc.problem == "" {
				require.NoError(t, err)
				require.NotContains(t, fmt.Sprintf("%v %+v", c.Storage.Azure, c), "s3cr3t")
				return
			}
			require.ErrorContains(t, err, tc.problem)
			require.NotContains(t, err.Error(), "s3cr3t")
		})
	}
}
