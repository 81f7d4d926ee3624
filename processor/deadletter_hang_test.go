package processor

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDeadLetterBrokerHangs: the broker takes the dead-letter produce
// requests and never answers them. Each attempt ends after
// DeadLetterTimeout as a transient error naming the dead-letter topic and
// kafka.brokers; past the budget the table is stalled in /readyz; once the
// broker answers again the table catches up, every bad record
// dead-lettered and every good one applied once.
func TestDeadLetterBrokerHangs(t *testing.T) {
	const (
		budget  = time.Second
		timeout = 300 * time.Millisecond
	)
	e := newIsoEnv(t, false, 1)
	pl := e.pl
	pl.produce(200)
	bad := pl.badRecords(t)
	pl.produce(100)

	var hang atomic.Bool
	hang.Store(true)
	release := make(chan struct{})
	var releaseOnce atomic.Bool
	thaw := func() {
		hang.Store(false)
		if releaseOnce.CompareAndSwap(false, true) {
			close(release)
		}
	}
	// Once the source is produced, the only producer is the dead-letter one.
	e.cluster.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		e.cluster.KeepControl()
		if hang.Load() {
			e.cluster.SleepControl(func() { <-release })
		}
		return nil, nil, false // then answered as usual
	})

	opts := e.options()
	opts.BadInput = PolicyDeadLetter
	opts.UnknownSchemaRetries = 1
	opts.RetryBudget = budget
	opts.DeadLetterTimeout = timeout
	start := time.Now()
	r := pl.start(opts)
	t.Cleanup(thaw) // before the processor's close, which waits for the producer
	srv := httptest.NewServer(r.p.Handler(r.reg))
	defer srv.Close()

	var h health
	stalled := func() bool {
		h = e.look(t, r, srv.URL)
		return h.code == http.StatusServiceUnavailable && h.faulted == TableStalled && hasTableMetrics(h.metrics, e.fpath, TableStalled)
	}
	if !assert.Eventually(t, stalled, budget+timeout+2*time.Second, 10*time.Millisecond) {
		t.Fatalf("the table is not stalled %s after the start: %+v\n%s", time.Since(start).Round(time.Millisecond), h.st.Tables, h.ready)
	}
	line := ""
	for l := range strings.Lines(h.ready) {
		if strings.HasPrefix(l, "table "+e.fpath+" stalled") {
			line = l
		}
	}
	require.Contains(t, line, "producing to dead-letter topic "+pl.dlq, h.ready)
	require.Contains(t, line, "(no answer from kafka.brokers ["+pl.brokers[0]+"] within "+timeout.String()+")", h.ready)
	require.True(t, hasTableMetrics(h.metrics, e.hpath, TableRunning), "the other table goes on: %s", grepLines(h.metrics, e.hpath))

	thaw()
	pl.waitCaughtUp()
	pl.requireModel()
	require.Eventually(t, func() bool { return r.p.Status().Ready() }, 10*time.Second, 10*time.Millisecond)

	// Every bad record is in the dead-letter topic; one whose produce
	// timed out may be there twice (at least once).
	cl, err := kgo.NewClient(kgo.SeedBrokers(pl.brokers...), kgo.ConsumeTopics(pl.dlq),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	seen := map[int64]int{}
	for len(seen) < len(bad) {
		fs := cl.PollFetches(t.Context())
		require.NoError(t, fs.Err())
		for _, rec := range fs.Records() {
			off, err := strconv.ParseInt(headerOf(rec, HeaderOffset), 10, 64)
			require.NoError(t, err)
			seen[off]++
		}
	}
	for _, off := range bad {
		require.Positive(t, seen[off], "offset %d dead-lettered", off)
	}
}
