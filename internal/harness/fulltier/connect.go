package fulltier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// Connect is the full tier's Kafka Connect worker (standalone, JSON
// converters by default), driven through its REST API.
type Connect struct {
	t   testing.TB
	URL string
}

// ConnectWorker returns the full tier's Kafka Connect worker.
func ConnectWorker(t testing.TB) Connect {
	t.Helper()
	return Connect{t: t, URL: env(t, EnvConnectURL)}
}

// connectWait bounds how long a connector may take to reach RUNNING.
const connectWait = 90 * time.Second

// Register creates (or reconfigures) connector name with cfg, waits until
// the connector and its task run, and deletes it when the test ends.
func (c Connect) Register(name string, cfg map[string]string) {
	c.t.Helper()
	body, err := json.Marshal(cfg)
	if err != nil {
		c.t.Fatalf("fulltier: encoding connector %s: %v", name, err)
	}
	c.do(http.MethodPut, "/connectors/"+url.PathEscape(name)+"/config", body)
	c.t.Cleanup(func() {
		// The test's context is done by now; a fresh deadline bounds this.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, c.URL+"/connectors/"+url.PathEscape(name), nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	c.WaitRunning(name)
}

// Restart restarts connector name and its task (offsets are kept, so the
// task resumes from its last committed offset) and waits until it runs.
func (c Connect) Restart(name string) {
	c.t.Helper()
	c.do(http.MethodPost, "/connectors/"+url.PathEscape(name)+"/restart?includeTasks=true", nil)
	c.WaitRunning(name)
}

// WaitRunning waits until connector name and all its tasks are RUNNING,
// failing the test with the worker's last status (and a task's trace) after
// connectWait or when a task failed.
func (c Connect) WaitRunning(name string) {
	c.t.Helper()
	deadline := time.Now().Add(connectWait)
	var last string
	for time.Now().Before(deadline) {
		var st struct {
			Connector struct{ State string } `json:"connector"`
			Tasks     []struct {
				State string `json:"state"`
				Trace string `json:"trace"`
			} `json:"tasks"`
		}
		raw, code := c.request(http.MethodGet, "/connectors/"+url.PathEscape(name)+"/status", nil)
		last = string(raw)
		if code == http.StatusOK && json.Unmarshal(raw, &st) == nil && st.Connector.State == "RUNNING" && len(st.Tasks) > 0 {
			running := true
			for _, task := range st.Tasks {
				if task.State == "FAILED" {
					c.t.Fatalf("fulltier: connector %s: task failed:\n%s", name, task.Trace)
				}
				running = running && task.State == "RUNNING"
			}
			if running {
				return
			}
		}
		select {
		case <-c.t.Context().Done():
			c.t.Fatalf("fulltier: waiting for connector %s: %v", name, c.t.Context().Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	c.t.Fatalf("fulltier: connector %s not RUNNING after %s; last status: %s", name, connectWait, last)
}

func (c Connect) do(method, path string, body []byte) {
	c.t.Helper()
	raw, code := c.request(method, path, body)
	if code >= 300 {
		c.t.Fatalf("fulltier: %s %s: HTTP %d: %s", method, path, code, raw)
	}
}

func (c Connect) request(method, path string, body []byte) ([]byte, int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatalf("fulltier: %s %s: %v", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("fulltier: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("fulltier: %s %s: reading the answer: %v", method, path, err)
	}
	return raw, resp.StatusCode
}

// PostgresConnector returns the configuration of Debezium's PostgreSQL
// connector for database db of pg, writing topics "<prefix>.<schema>.<table>"
// through a replication slot and publication of its own (named after
// prefix, so tests sharing the server do not share them).
func PostgresConnector(pg Postgres, db, prefix, tables string) map[string]string {
	return map[string]string{
		"connector.class":             "io.debezium.connector.postgresql.PostgresConnector",
		"tasks.max":                   "1",
		"database.hostname":           pg.Host,
		"database.port":               pg.Port,
		"database.user":               "postgres",
		"database.password":           "unused",
		"database.dbname":             db,
		"topic.prefix":                prefix,
		"plugin.name":                 "pgoutput",
		"slot.name":                   prefix,
		"publication.name":            prefix,
		"publication.autocreate.mode": "filtered",
		"table.include.list":          tables,
		"slot.drop.on.stop":           "false",
		"snapshot.mode":               "initial",
	}
}

// MariaDBConnector returns the configuration of Debezium's MariaDB connector
// for database db of m, with its schema history in file historyFile.
func MariaDBConnector(m MariaDB, db, prefix, historyFile string, serverID int) map[string]string {
	return map[string]string{
		"connector.class":                       "io.debezium.connector.mariadb.MariaDbConnector",
		"tasks.max":                             "1",
		"database.hostname":                     m.Host,
		"database.port":                         m.Port,
		"database.user":                         MariaDBUser,
		"database.password":                     MariaDBPassword,
		"database.server.id":                    fmt.Sprint(serverID),
		"topic.prefix":                          prefix,
		"database.include.list":                 db,
		"schema.history.internal":               "io.debezium.storage.file.history.FileSchemaHistory",
		"schema.history.internal.file.filename": historyFile,
		"include.schema.changes":                "false",
	}
}

// AvroConverterClass is the full tier's Avro converter plugin
// (internal/harness/connectavro, installed by scripts/setup/connect.sh):
// AvroData's Connect->Avro mapping, the Confluent wire format and schemas
// registered under "<topic>-key"/"<topic>-value" through the Confluent REST
// API. It stands in for Confluent's AvroConverter, which is not on Maven
// Central.
const AvroConverterClass = "io.github.cdc2delta.connectavro.ConfluentWireAvroConverter"

// WithAvroConverter sets cfg's key and value converters (a connector's
// override of the worker's JsonConverter) to AvroConverterClass,
// registering schemas at registryURL, and returns cfg.
func WithAvroConverter(cfg map[string]string, registryURL string) map[string]string {
	for _, side := range []string{"key", "value"} {
		cfg[side+".converter"] = AvroConverterClass
		cfg[side+".converter.schema.registry.url"] = registryURL
	}
	return cfg
}
