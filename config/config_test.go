package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/config"
)

func noEnv(string) (string, bool) { return "", false }

func TestExampleValidates(t *testing.T) {
	data, err := os.ReadFile("example.yaml")
	require.NoError(t, err)
	c, err := config.Parse(data, noEnv)
	require.NoError(t, err)
	require.NoError(t, c.Validate())

	// Defaults documented in the file equal Default().
	d := config.Default()
	require.Equal(t, d.Batch, c.Batch)
	require.Equal(t, d.Memory, c.Memory)
	require.Empty(t, c.Tables.Defaults.KeyColumns)
	require.Empty(t, c.Tables.Defaults.PartitionBy)
	require.Empty(t, c.Tables.Defaults.TrackHistory)
	require.Empty(t, c.Tables.Defaults.TrackHistoryExcept)
	c.Tables.Defaults.KeyColumns, c.Tables.Defaults.PartitionBy = nil, nil
	c.Tables.Defaults.TrackHistory, c.Tables.Defaults.TrackHistoryExcept = nil, nil
	require.Equal(t, d.Tables.Defaults, c.Tables.Defaults)
	require.Equal(t, d.Decoding, c.Decoding)
	require.Equal(t, d.Log, c.Log)
	require.Equal(t, d.Metrics, c.Metrics)
	require.Equal(t, d.Kafka.Reset, c.Kafka.Reset)
	require.Equal(t, []string{"localhost:9092"}, c.Kafka.Brokers)
	require.Equal(t, "http://localhost:8081", c.SchemaRegistry.URL)

	lines := c.Tables.Settings(config.Source{Topic: "sqlserver.sales.dbo.order_lines", Database: "sales", Schema: "DBO", Table: "Order_Lines"})
	require.Equal(t, []string{"order_id", "line_no"}, lines.KeyColumns)
	require.Equal(t, config.BadInputFail, lines.BadInput)
	customers := c.Tables.Settings(config.Source{Topic: "sqlserver.sales.dbo.customers", Database: "sales", Schema: "dbo", Table: "customers"})
	require.Equal(t, config.BadInputDLQ, customers.BadInput)
	require.Empty(t, customers.KeyColumns)
	require.Equal(t, config.DeleteHard, customers.DeleteMode)
}

func TestOverridesApplyInOrder(t *testing.T) {
	c, err := config.Parse([]byte(`
tables:
  defaults: {delete_mode: soft}
  overrides:
    - {name: sales.dbo.orders, merge_mode: cow, delete_mode: hard}
    - {topic: t.sales.dbo.orders, merge_mode: dv}
`), noEnv)
	require.NoError(t, err)
	s := c.Tables.Settings(config.Source{Topic: "t.sales.dbo.orders", Database: "sales", Schema: "dbo", Table: "orders"})
	require.Equal(t, config.MergeDV, s.MergeMode, "the later override wins")
	require.Equal(t, config.DeleteHard, s.DeleteMode)
	other := c.Tables.Settings(config.Source{Topic: "t.sales.dbo.x", Database: "sales", Schema: "dbo", Table: "x"})
	require.Equal(t, config.DeleteSoft, other.DeleteMode)
	require.Equal(t, config.MergeAuto, other.MergeMode)
}

// TestHistoryOverride: history is one line; an override's track_history
// replaces the defaults' track_history_except (the two are one choice).
func TestHistoryOverride(t *testing.T) {
	c, err := config.Parse([]byte(`
tables:
  defaults: {history: true, track_history_except: [last_login]}
  overrides:
    - {name: dbo.prices, track_history: [price]}
    - {name: dbo.audit, history: false}
`), noEnv)
	require.NoError(t, err)
	prices := c.Tables.Settings(config.Source{Database: "sales", Schema: "dbo", Table: "prices"})
	require.Equal(t, config.HistoryBeside, prices.History)
	require.Equal(t, "{path}_history", prices.HistoryPath)
	require.Equal(t, []string{"price"}, prices.TrackHistory)
	require.Empty(t, prices.TrackHistoryExcept)
	orders := c.Tables.Settings(config.Source{Database: "sales", Schema: "dbo", Table: "orders"})
	require.Equal(t, []string{"last_login"}, orders.TrackHistoryExcept)
	require.Equal(t, config.HistoryOff, c.Tables.Settings(config.Source{Database: "sales", Schema: "dbo", Table: "audit"}).History)
}

func TestDefaults(t *testing.T) {
	d := config.Default()
	require.Equal(t, 10_000, d.Batch.MaxRecords)
	require.Equal(t, config.ByteSize(16<<20), d.Batch.MaxBytes)
	require.Equal(t, config.Duration(time.Second), d.Batch.MaxAge)
	require.Equal(t, 100, d.Batch.MinRecords)
	require.Equal(t, config.Duration(10*time.Second), d.Batch.MaxDelay)
	require.Equal(t, 50, d.Batch.MaxCommitsPerSecond)
	require.Equal(t, config.ByteSize(256<<20), d.Memory.MaxBufferedBytes)
	require.Equal(t, "earliest", d.Kafka.Reset)
	require.Equal(t, "fail", d.Tables.Defaults.BadInput)
	require.Equal(t, "hard", d.Tables.Defaults.DeleteMode)
	require.Equal(t, config.Duration(168*time.Hour), d.Tables.Defaults.TombstoneRetention)
	require.Equal(t, "auto", d.Tables.Defaults.MergeMode)
}

func TestEnvExpansionPerValue(t *testing.T) {
	env := map[string]string{"BROKERS": "b1:9092", "PW": `p: "x" # not a comment`}
	c, err := config.Parse([]byte(`
kafka:
  brokers: ["${BROKERS}"]
  group_id: ${GROUP:-grp}
  sasl: {mechanism: PLAIN, username: u, password: "${PW}"}
`), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	require.NoError(t, err)
	require.Equal(t, []string{"b1:9092"}, c.Kafka.Brokers)
	require.Equal(t, "grp", c.Kafka.GroupID)
	require.Equal(t, env["PW"], c.Kafka.SASL.Password.Reveal())
}

// TestEnvExpansionTyped: a ${VAR} that expands to a number, a bool or a duration is
// read as one, quoted or not.
func TestEnvExpansionTyped(t *testing.T) {
	env := map[string]string{"MAX": "500", "CREATE": "true"}
	c, err := config.Parse([]byte(`
kafka:
  dlq_create: ${CREATE}
  group_id: ${GROUP:-007}
batch:
  max_records: "${MAX}"
  max_age: ${AGE:-250ms}
  max_bytes: ${BYTES:-1MiB}
`), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	require.NoError(t, err)
	require.True(t, c.Kafka.DLQCreate)
	require.Equal(t, "007", c.Kafka.GroupID, "a string stays a string")
	require.Equal(t, 500, c.Batch.MaxRecords)
	require.Equal(t, config.Duration(250*time.Millisecond), c.Batch.MaxAge)
	require.Equal(t, config.ByteSize(1<<20), c.Batch.MaxBytes)
}

// TestMergeKeysAndAnchors: YAML anchors, aliases and merge keys work, the mapping's own
// keys winning over merged ones.
func TestMergeKeysAndAnchors(t *testing.T) {
	c, err := config.Parse([]byte(`
tables:
  defaults: &base {delete_mode: soft, merge_mode: cow}
  overrides:
    - {<<: *base, name: dbo.orders, merge_mode: dv}
kafka:
  brokers: &b [k1:9092]
  topics: *b
`), noEnv)
	require.NoError(t, err)
	require.Equal(t, config.DeleteSoft, c.Tables.Defaults.DeleteMode)
	o := c.Tables.Overrides[0]
	require.Equal(t, "dbo.orders", o.Name)
	require.Equal(t, config.DeleteSoft, *o.DeleteMode)
	require.Equal(t, config.MergeDV, *o.MergeMode)
	require.Equal(t, []string{"k1:9092"}, c.Kafka.Topics)
}

// TestCheckOverride: the override applies before validation, so a flag can fix what the
// file lacks, and a field the file could not read is not reported twice.
func TestCheckOverride(t *testing.T) {
	data := []byte("kafka: {brokers: 5, topics: [t]}\nschema_registry: {url: 'http://sr'}\n")
	_, err := config.Check(data, noEnv, func(c *config.Config) { c.Kafka.GroupID = "from-flag" })
	require.ErrorIs(t, err, config.ErrSyntax)
	require.NotErrorIs(t, err, config.ErrInvalid, "kafka.brokers is reported once, as unreadable")
	require.Equal(t, `kafka.brokers: line 1: must be a list such as [a, b], got "5"`, err.Error())

	c, err := config.Check([]byte("kafka: {brokers: ['k:1'], topics: [t]}\nschema_registry: {url: 'http://sr'}\n"), noEnv,
		func(c *config.Config) { c.Kafka.GroupID = "from-flag" })
	require.NoError(t, err)
	require.Equal(t, "from-flag", c.Kafka.GroupID)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("kafka: {brokers: ['k:1'], group_id: g, topics: [t]}\nschema_registry: {url: 'http://sr'}\n"), 0o600))
	c, err := config.Load(good)
	require.NoError(t, err)
	require.Equal(t, "g", c.Kafka.GroupID)

	_, err = config.Load(filepath.Join(dir, "missing.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("kafka: {group_id: g}\n"), 0o600))
	_, err = config.Load(bad)
	require.ErrorIs(t, err, config.ErrInvalid)
	require.ErrorContains(t, err, "bad.yaml")
	require.ErrorContains(t, err, "kafka.brokers: must list at least one host:port")
}

// TestInvalidConfigs checks that each broken file in testdata/invalid produces exactly
// the messages its "# want:" lines list, in any order, from one Check: problems of
// reading the file (syntax_* files have some) and of its values together.
func TestInvalidConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			var want []string
			for line := range strings.SplitSeq(string(data), "\n") {
				if m, ok := strings.CutPrefix(line, "# want: "); ok {
					want = append(want, m)
				}
			}
			require.NotEmpty(t, want)
			_, err = config.Check(data, noEnv, nil)
			require.Error(t, err)
			if strings.HasPrefix(filepath.Base(f), "syntax") {
				require.ErrorIs(t, err, config.ErrSyntax)
			} else {
				require.NotErrorIs(t, err, config.ErrSyntax)
			}
			msg := err.Error()
			require.ElementsMatch(t, want, strings.Split(msg, "\n"))
			require.NotContains(t, msg, "hunter2")
			require.NotContains(t, msg, "sr-secret")
		})
	}
}

func TestJSONConverterNeedsNoRegistry(t *testing.T) {
	base := "kafka: {brokers: [k1:9092], group_id: g, topics: [t]}\ntables: {path: \"/tmp/{table}\"}\n"
	c, err := config.Check([]byte(base+"decoding: {converter: json}\n"), noEnv, nil)
	require.NoError(t, err)
	require.Equal(t, config.ConverterJSON, c.Decoding.Converter)
	_, err = config.Check([]byte(base), noEnv, nil)
	require.ErrorContains(t, err, "schema_registry.url: must be set")
}
