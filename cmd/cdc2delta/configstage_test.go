package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestValidateRefusesWhatRunRefuses: every configuration `run` refuses before
// it connects anywhere, `validate` refuses too, with the same message: the
// checks of what run builds from the file (table path templates, TLS files,
// store URLs, client limits) are part of the one validation both use.
func TestValidateRefusesWhatRunRefuses(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	require.NoError(t, os.WriteFile(garbage, []byte("not a certificate\n"), 0o600))
	tests := []struct {
		name, section, fields string // fields the case adds to section
		want                  string // in the message
	}{
		{"stray brace in tables.path", "tables", `path: "./t/{topic}}"`,
			`tables.path: "./t/{topic}}" has a { or } that is not part of a placeholder`},
		{"unclosed placeholder in tables.path", "tables", `path: "./t/{table}/{topic"`,
			`tables.path: "./t/{table}/{topic" has a { or } that is not part of a placeholder`},
		{"kafka CA file without a certificate", "kafka", fmt.Sprintf(`tls: {ca_file: %q}`, garbage),
			fmt.Sprintf(`kafka.tls.ca_file: %q holds no PEM certificate`, garbage)},
		{"kafka client certificate that does not load", "kafka", fmt.Sprintf(`tls: {cert_file: %q, key_file: %q}`, garbage, garbage),
			fmt.Sprintf(`kafka.tls.cert_file: %q and key_file %q are not a certificate and its key:`, garbage, garbage)},
		{"kafka CA file that is a directory", "kafka", fmt.Sprintf(`tls: {ca_file: %q}`, dir),
			fmt.Sprintf(`kafka.tls.ca_file: cannot read %q:`, dir)},
		{"registry CA file without a certificate", "schema_registry", fmt.Sprintf(`tls: {ca_file: %q}`, garbage),
			fmt.Sprintf(`schema_registry.tls.ca_file: %q holds no PEM certificate`, garbage)},
		{"kafka client id too long", "kafka", "client_id: " + strings.Repeat("c", 300),
			"kafka.client_id: is 300 bytes long; Kafka clients allow at most 256"},
		{"control table on S3 without a bucket", "control", `path: "s3:///control"`,
			`control.path: s3store: "s3:///control": no bucket`},
		{"control table URL with a query", "control", `path: "s3://b/control?versionId=1"`,
			`control.path: s3store: "s3://b/control?versionId=1": unexpected query or fragment`},
		{"tables on an unknown scheme", "tables", `path: "hdfs://b/{table}"`,
			`tables.path: "hdfs://b/{table}", as the URL of table topic.database.schema.table: s3store: "hdfs://b/table": scheme must be s3 or s3a`},
		{"tables on GCS with a bad bucket", "tables", `path: "gs://b/{table}"`,
			`tables.path: "gs://b/{table}", as the URL of table topic.database.schema.table: gcsstore: table URL "gs://b/table": bucket: "b" must have 3 to 222 characters`},
		{"tables on ADLS without a container", "tables", `path: "abfss://acct1.dfs.core.windows.net/{table}"`,
			`tables.path: "abfss://acct1.dfs.core.windows.net/{table}", as the URL of table topic.database.schema.table: azstore: "abfss://acct1.dfs.core.windows.net/table": container: missing`},
		{"control table on Azure with a SAS token", "control", `path: "https://acct1.blob.core.windows.net/lake/control?sv=1&sig=s3cr3t"`,
			`control.path: azstore: "https://acct1.blob.core.windows.net/lake/control": query: a table URL has no query or fragment (a SAS token goes in storage.azure.sas_token)`},
		{"tables URL with a query", "tables", `path: "s3://b/{table}?x=1"`,
			`tables.path: "s3://b/{table}?x=1", as the URL of table topic.database.schema.table: s3store: "s3://b/table?x=1": unexpected query or fragment`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "c.yaml")
			require.NoError(t, os.WriteFile(cfg, configStageFile(t, tc.section, tc.fields), 0o600))
			validate := cliWithin(t, 5*time.Second, "validate", "--config", cfg)
			run := cliWithin(t, 5*time.Second, "run", "--config", cfg)
			require.Equal(t, exitUsage, validate.code, "validate: %s%s", validate.stdout, validate.stderr)
			require.Contains(t, validate.stderr, cfg+": "+tc.want)
			require.Equal(t, exitUsage, run.code, "run: %s", run.stderr)
			require.Equal(t, strings.TrimPrefix(validate.stderr, "cdc2delta validate: "),
				strings.TrimPrefix(run.stderr, "cdc2delta run: "), "the same refusal")
		})
	}
}

// configStageFile is a valid file with fields added to one section (a
// tables section replaces the base's).
func configStageFile(t *testing.T, section, fields string) []byte {
	sections := [][2]string{
		{"kafka", fmt.Sprintf("brokers: [%q], group_id: g, topics: [shop.sales.dbo.orders]", closedPort(t))},
		{"schema_registry", `url: "http://127.0.0.1:1"`},
		{"tables", fmt.Sprintf("path: %q", filepath.Join(t.TempDir(), "{table}"))},
		{"metrics", `listen: ""`},
		{"control", ""},
	}
	var b strings.Builder
	for _, s := range sections {
		switch {
		case s[0] == section && (section == "tables" || s[1] == ""):
			s[1] = fields
		case s[0] == section:
			s[1] += ", " + fields
		}
		if s[1] != "" {
			fmt.Fprintf(&b, "%s: {%s}\n", s[0], s[1])
		}
	}
	return []byte(b.String())
}

// cliWithin runs a command in process, cancelled after d.
func cliWithin(t *testing.T, d time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	var out, errb bytes.Buffer
	code := runEnv(ctx, append([]string{"cdc2delta"}, args...),
		&env{stdout: &out, stderr: &errb, lookup: func(string) (string, bool) { return "", false }, self: "cdc2delta"})
	return result{code, out.String(), errb.String()}
}
