//go:build integration

package main

import (
	"context"
	encbin "encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/internal/registry"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// sourceRun is a `cdc2delta run` over a real connector's topics, with its
// tables under root.
type sourceRun struct {
	brokers []string
	group   string
	topics  []string
	root    string
	// registry is the schema registry's URL for records the Avro converter
	// wrote; empty for the JsonConverter's (no registry is used).
	registry string
	// maxRecords bounds a batch (50 when zero).
	maxRecords int
	// extra is more YAML appended to the config (a control: section).
	extra string
}

// writeRunConfig writes c's config to root/cdc2delta.yaml and returns its
// path.
func writeRunConfig(t *testing.T, c sourceRun) string {
	t.Helper()
	quoted := make([]string, len(c.topics))
	for i, topic := range c.topics {
		quoted[i] = fmt.Sprintf("%q", topic)
	}
	registry, converter := c.registry, "avro"
	if registry == "" {
		// Never dialled: the JSON converter's records carry their schemas.
		registry, converter = "http://127.0.0.1:1", "json"
	}
	if c.maxRecords == 0 {
		c.maxRecords = 50
	}
	path := filepath.Join(c.root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, `
kafka: {brokers: [%q], group_id: %q, topics: [%s]}
schema_registry: {url: %q}
decoding: {converter: %s}
tables: {path: "%s/{table}"}
batch: {max_records: %d, max_age: 50ms, min_records: 1}
metrics: {listen: ""}
log: {level: warn}
%s`, c.brokers[0], c.group, strings.Join(quoted, ", "), registry, converter, filepath.ToSlash(c.root), c.maxRecords, c.extra), 0o600))
	return path
}

// newPostgresDB creates a database of its own on pg, named prefix and a
// timestamp, and returns its name, which also names the connectors'
// replication slots (the name, or the name and a suffix). When the test
// ends it drops those slots: a connector's deletion (its cleanup ran first)
// leaves its slot, which keeps WAL.
func newPostgresDB(t *testing.T, pg fulltier.Postgres, prefix string) string {
	t.Helper()
	id := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano())
	pg.Exec("postgres", "CREATE DATABASE "+id)
	t.Cleanup(func() {
		pg.Exec("postgres", fmt.Sprintf("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE '%s%%' AND NOT active", id))
	})
	return id
}

// newMariaDBSource creates a database of its own on my, named prefix and a
// timestamp, with options (e.g. "CHARACTER SET utf8mb4"), and returns its
// name and the configuration of a MariaDB connector reading it into topics
// prefixed with the name (a server id and schema history file of its own).
func newMariaDBSource(t *testing.T, my fulltier.MariaDB, prefix, options string) (string, map[string]string) {
	t.Helper()
	id := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano())
	my.Exec("", strings.TrimSpace("CREATE DATABASE "+id+" "+options))
	return id, mariaDBConnector(t, my, id, id)
}

// mariaDBConnector returns the configuration of a MariaDB connector reading
// database db into topics prefixed with prefix, with a server id and schema
// history file of its own.
func mariaDBConnector(t *testing.T, my fulltier.MariaDB, db, prefix string) map[string]string {
	now := time.Now().UnixNano()
	return fulltier.MariaDBConnector(my, db, prefix, filepath.Join(t.TempDir(), "history.dat"), int(1000+now%100000))
}

// startRegistry starts an in-process Confluent-compatible schema registry on
// loopback for the test and returns it and its URL.
func startRegistry(t *testing.T) (*registry.Registry, string) {
	t.Helper()
	reg, err := registry.New()
	require.NoError(t, err)
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(srv.Close)
	return reg, srv.URL
}

// requireConfluentWire requires the first record of topic (partition 0) to
// be in the Confluent wire format, key and value: magic byte 0 and the id
// the registry gave the schema registered under "<topic>-key" and
// "<topic>-value".
func requireConfluentWire(t *testing.T, brokers []string, reg *registry.Registry, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var rec *kgo.Record
	for rec == nil {
		fetches := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "reading %s", topic)
		fetches.EachRecord(func(r *kgo.Record) {
			if rec == nil {
				rec = r
			}
		})
	}
	for side, b := range map[string][]byte{"key": rec.Key, "value": rec.Value} {
		versions, err := reg.Versions(topic + "-" + side)
		require.NoError(t, err, "subject %s-%s", topic, side)
		// The first record has the subject's first schema (columns are
		// added and dropped later).
		first, err := reg.Version(topic+"-"+side, versions[0])
		require.NoError(t, err)
		require.Greater(t, len(b), 5, "%s of %s", side, topic)
		require.Equal(t, byte(0), b[0], "magic byte of the %s", side)
		require.Equal(t, uint32(first.ID), encbin.BigEndian.Uint32(b[1:5]), "schema id of the %s", side)
	}
}

// sameTables requires the Delta tables a and b (delta-rs reads of every
// column), applied from two connectors' topics over the same changes, to be
// the same table: the same schema with the same column comments and
// properties in the log, and the same rows in every column but the two that
// name where the connector stood (each connector snapshots from its own
// replication slot or binlog position, so the snapshot rows' positions and
// times differ).
func sameTables(t *testing.T, a, b fulltier.Table) {
	t.Helper()
	schemaOf := func(dir string) (*deltalog.StructType, map[string]string) {
		st, err := localstore.New(localstore.Options{Dir: dir})
		require.NoError(t, err)
		tbl, err := deltalog.Open(t.Context(), st)
		require.NoError(t, err)
		snap, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		return snap.Schema(), snap.Metadata().Configuration
	}
	sa, ca := schemaOf(a.Path)
	sb, cb := schemaOf(b.Path)
	require.Equal(t, sa, sb, "schemas of %s and %s", a.Path, b.Path)
	require.Equal(t, ca, cb, "table properties of %s and %s", a.Path, b.Path)
	rows := func(tb fulltier.Table) []string {
		out := make([]string, 0, len(tb.Rows))
		for _, r := range tb.Rows {
			r = maps.Clone(r)
			delete(r, cdctable.ColPosition)
			delete(r, cdctable.ColCommitTime)
			line, err := json.Marshal(r)
			require.NoError(t, err)
			out = append(out, string(line))
		}
		slices.Sort(out)
		return out
	}
	ra, rb := rows(a), rows(b)
	require.NotEmpty(t, ra)
	require.Equal(t, ra, rb, "rows of %s and %s", a.Path, b.Path)
	t.Logf("%d rows, %d columns, identical from both converters", len(ra), len(sa.Fields))
}
