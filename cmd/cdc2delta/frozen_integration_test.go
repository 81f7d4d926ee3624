//go:build integration

package main

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
