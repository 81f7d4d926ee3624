//go:build integration

package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// frozenRun is the binary applying src to tables, for a test that freezes (SIGSTOP)
// one of the servers it depends on: the run before the freeze and the checks after
// the thaw are the same whichever server froze.
type frozenRun struct {
	t       *testing.T
	src     *crashSource
	tables  []crashTable
	metrics string // the run's metrics listener, serving /readyz
	*binaryRun
}

// startFrozenRun produces a first load, starts the binary on cfgPath (logging into
// root) and waits until it has applied the load and is ready, so that the freeze is
// what breaks it.
func startFrozenRun(t *testing.T, src *crashSource, tables []crashTable, metrics, cfgPath, root string) *frozenRun {
	t.Helper()
	require.NoError(t, src.produce(t.Context(), 300))
	r := &frozenRun{t: t, src: src, tables: tables, metrics: metrics,
		binaryRun: startRun(t, binary, cfgPath, filepath.Join(root, "run.log"))}
	waitCaughtUp(t, tables, src.endOffsets(), r.binaryRun)
	code, body := r.readyz()
	require.Equal(t, http.StatusOK, code, body)
	return r
}

func (r *frozenRun) readyz() (int, string) { return httpGet(r.t, "http://"+r.metrics+"/readyz") }

// afterThaw waits until /readyz answers 200 again within ready, produces more,
// waits until it is applied, stops the run and checks that every record was
// applied exactly once. The test's producer is used only once the thawed server
// answers again (it pings the broker too): its connections may have broken during
// the freeze, and a produce that fails then would be the harness's fault, not the
// product's.
func (r *frozenRun) afterThaw(ready time.Duration) {
	t := r.t
	t.Helper()
	var code int
	var body string
	if !assert.Eventually(t, func() bool {
		code, body = r.readyz()
		return code == http.StatusOK && r.src.producer.Ping(t.Context()) == nil
	}, ready, 100*time.Millisecond) {
		t.Fatalf("/readyz after the thaw: %d %s", code, body)
	}
	require.NoError(t, r.src.produce(t.Context(), 100))
	ends := r.src.endOffsets()
	waitCaughtUp(t, r.tables, ends, r.binaryRun)
	require.Equal(t, exitOK, r.terminate(), "log:\n%s", r.logTail())
	requireTablesMatchSource(t, r.src, r.tables, ends)
}

// storeStall is how a frozen object store must be named while the tables stall.
type storeStall struct {
	name   string // for messages: "S3"
	at     string // the dependency as /readyz and the log name it: "S3 at " + endpoint
	ops    string // the store's operations, as a regexp alternation: "GetObject|PutObject"
	object string // where the object's path begins in the stall line: "s3://bucket/"
}

// stallsWhileFrozen freezes the store's server (SIGSTOP: it accepts connections and
// never answers) and produces more, so that every table has work. Within the retry
// budget plus one request timeout every table must be stalled in /readyz (503), and
// /readyz and the log's stall line must name the store, the endpoint, the operation
// that hung and the object. After the thaw, everything must be applied exactly once.
func (r *frozenRun) stallsWhileFrozen(server interface {
	Freeze()
	Thaw()
}, budget, requestTimeout time.Duration, want storeStall) {
	t := r.t
	t.Helper()
	const slack = 3 * time.Second // backoff, batch age, polling
	server.Freeze()
	frozen := time.Now()
	require.NoError(t, r.src.produce(t.Context(), 300)) // Kafka still answers: every table has work
	var (
		stalledAfter time.Duration
		code         int
		body         string
	)
	if !assert.Eventually(t, func() bool {
		code, body = r.readyz()
		for _, tb := range r.tables {
			if !strings.Contains(body, "table "+tb.dir+" stalled") {
				return false
			}
		}
		stalledAfter = time.Since(frozen)
		return code == http.StatusServiceUnavailable
	}, budget+requestTimeout+slack, 100*time.Millisecond) {
		t.Fatalf("/readyz %d %s after the freeze:\n%s\nlog:\n%s", code, time.Since(frozen).Round(time.Second), body, r.logTail())
	}
	require.Contains(t, body, want.at, "/readyz names the dependency")
	// The log says the same, on the line that reports the stall.
	stallLine := regexp.MustCompile(`msg="table stalled[^\n]*` + regexp.QuoteMeta(want.at) +
		`: (` + want.ops + `) ` + regexp.QuoteMeta(want.object))
	var line []byte
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(r.logPath)
		require.NoError(t, err)
		line = stallLine.Find(data)
		return line != nil
	}, budget+requestTimeout+slack-time.Since(frozen), 100*time.Millisecond, "no stall line naming %s; log:\n%s", want.name, r.logTail())
	t.Logf("all %d tables stalled in /readyz %s after the freeze (budget %s, request timeout %s); log: %s",
		len(r.tables), stalledAfter.Round(100*time.Millisecond), budget, requestTimeout, line)

	server.Thaw()
	r.afterThaw(60 * time.Second) // the stalled tables retry, then commit
}

// storeTables is where a frozen-store test keeps its tables.
type storeTables struct {
	scheme, bucket string                                      // the tables are at scheme://bucket/tables/{database}/{schema}/{table}
	storage        string                                      // the config's storage section
	open           func(prefix string) (deltalog.Store, error) // a table's store, prefix below the bucket
}

// startStoreRun writes the config of a run applying src (its Kafka group and topics
// named by prefix) to store's tables with the retry budget, opens the tables, and
// starts the run as startFrozenRun does.
func startStoreRun(t *testing.T, src *crashSource, broker, prefix string, store storeTables, budget time.Duration) *frozenRun {
	t.Helper()
	root := t.TempDir()
	metrics := closedPort(t)
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  topic_regex: '^%s\..*'
schema_registry: {url: %q}
tables: {path: %q}
storage: %s
batch: {max_records: 200, max_age: 100ms, min_records: 1}
retry: {budget: %s}
metrics: {listen: %q}
`, broker, prefix+"-group", regexp.QuoteMeta(prefix), src.regURL, store.scheme+"://"+store.bucket+"/tables/{database}/{schema}/{table}",
		store.storage, budget, metrics), 0o600))
	tables := make([]crashTable, len(src.tables))
	for i, tb := range src.tables {
		d := tb.Def()
		prefix := fmt.Sprintf("tables/%s/%s/%s", d.Database, d.Schema, d.Name)
		st, err := store.open(prefix)
		require.NoError(t, err)
		tables[i] = crashTable{t: t, dir: store.scheme + "://" + store.bucket + "/" + prefix, st: st}
	}
	// The pipeline works against this store: the freeze is what breaks it.
	return startFrozenRun(t, src, tables, metrics, cfgPath, root)
}
