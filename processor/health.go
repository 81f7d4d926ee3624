package processor

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// Bounds of the loop's liveness: it turns at least every maxPollWait, so a
// loop silent this long is stuck.
const (
	loopStaleReady = 30 * time.Second // /readyz fails
	loopStaleAlive = 2 * time.Minute  // /healthz fails
)

// TableStatus is one table's health.
type TableStatus struct {
	Table string
	State TableState
	// Partitions is the number of its partitions assigned here.
	Partitions int
	// Err is why it stopped (State TableStopped).
	Err *TableError
	// Retrying, FailingFor and LastErr describe the current run of
	// transient failures (States TableRetrying and TableStalled).
	Retrying   string
	FailingFor time.Duration
	LastErr    error
	// Registry is set when decoding waits for the schema registry.
	Registry bool
}

// Status is a snapshot of the processor's health.
type Status struct {
	// Running is true while Run's loop is alive.
	Running bool
	// LastLoop is when the loop last returned from a poll.
	LastLoop time.Time
	// Err is why Run ended, if it failed.
	Err error
	// KafkaDown is set while no broker answers, or the brokers refuse
	// access (KafkaErr tells which), since KafkaDownSince.
	KafkaDown      bool
	KafkaDownSince time.Time
	KafkaErr       error
	// Tables are the open tables, sorted by path.
	Tables []TableStatus
	// Failed are the stopped tables' errors, sorted by table path.
	Failed []*TableError
	// Unroutable are partitions whose topic has no table.
	Unroutable []cdctable.TopicPartition
	// Partitions is the number of partitions assigned.
	Partitions int
	// Catalog are the catalogs' problems (conflicts, refused credentials,
	// failures beyond the retry budget) and CatalogNotes its registrations
	// retrying within budget (ADR 0047). They never stop data.
	Catalog, CatalogNotes []string
	// Others are the problems of Options.Problems.
	Others []string
	now    time.Time
}

// Ready reports whether the processor is consuming every partition it owns:
// running with a live loop, Kafka reachable, and every table running (or
// retrying within its budget, unless it waits for the registry).
func (s Status) Ready() bool { return len(s.problems()) == 0 }

// Alive reports whether the process can still make progress: Run has not
// failed and its loop is not stuck.
func (s Status) Alive() bool {
	return s.Err == nil && !(s.Running && s.now.Sub(s.LastLoop) > loopStaleAlive)
}

// problems lists, one line each, why the processor is not ready.
func (s Status) problems() []string {
	var out []string
	switch {
	case s.Err != nil:
		out = append(out, "run failed: "+s.Err.Error())
	case !s.Running:
		out = append(out, "not running")
	case s.now.Sub(s.LastLoop) > loopStaleReady:
		out = append(out, fmt.Sprintf("poll loop stuck for %s", s.now.Sub(s.LastLoop).Round(time.Second)))
	}
	switch {
	case s.KafkaDown && accessError(s.KafkaErr):
		out = append(out, fmt.Sprintf("kafka refused access for %s (authentication or authorization): %s: %v",
			s.now.Sub(s.KafkaDownSince).Round(time.Second), kafkaAccessHint, s.KafkaErr))
	case s.KafkaDown:
		out = append(out, fmt.Sprintf("kafka unreachable for %s: no broker in kafka.brokers answers: %v",
			s.now.Sub(s.KafkaDownSince).Round(time.Second), s.KafkaErr))
	}
	for _, t := range s.Tables {
		switch {
		case t.State == TableStopped:
			out = append(out, t.Err.Error())
		case t.State == TableStalled && t.Registry:
			// Say what it waits for: "decoding has failed" hid the registry.
			out = append(out, fmt.Sprintf("table %s stalled: waits for the schema registry (%s): %v", t.Table, t.FailingFor.Round(time.Second), t.LastErr))
		case t.State == TableStalled:
			out = append(out, fmt.Sprintf("table %s stalled: %s has failed for %s: %v", t.Table, t.Retrying, t.FailingFor.Round(time.Second), t.LastErr))
		case t.Registry:
			out = append(out, fmt.Sprintf("table %s waits for the schema registry (%s): %v", t.Table, t.FailingFor.Round(time.Second), t.LastErr))
		case t.State == TableOpening:
			out = append(out, fmt.Sprintf("table %s opening", t.Table))
		}
	}
	for _, tp := range s.Unroutable {
		out = append(out, fmt.Sprintf("unroutable: %s/%d", tp.Topic, tp.Partition))
	}
	return append(append(out, s.Catalog...), s.Others...)
}

// Status returns the current health.
func (p *Processor) Status() Status {
	s := Status{Running: p.running.Load(), now: p.now()}
	if n := p.lastLoop.Load(); n > 0 {
		s.LastLoop = time.Unix(0, n)
	}
	if e := p.runErr.Load(); e != nil {
		s.Err = *e
	}
	s.KafkaDown, s.KafkaDownSince, s.KafkaErr = p.kafka.status()
	for _, c := range p.opts.Catalogs {
		s.Catalog, s.CatalogNotes = append(s.Catalog, c.Problems()...), append(s.CatalogNotes, c.Notes()...)
	}
	if p.opts.Problems != nil {
		s.Others = p.opts.Problems()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.mu.tables {
		ts := TableStatus{Table: t.path, State: t.state(p.retry.budget, s.now), Partitions: len(t.parts), Err: t.failed}
		r := t.retry
		if t.registry.failing() && (!r.failing() || t.registry.since.Before(r.since)) {
			r, ts.Registry = t.registry, true
		}
		if r.failing() {
			ts.Retrying, ts.FailingFor, ts.LastErr = r.what, s.now.Sub(r.since), r.last
		}
		s.Tables = append(s.Tables, ts)
		if t.failed != nil {
			s.Failed = append(s.Failed, t.failed)
		}
	}
	slices.SortFunc(s.Tables, func(a, b TableStatus) int { return strings.Compare(a.Table, b.Table) })
	slices.SortFunc(s.Failed, func(a, b *TableError) int { return strings.Compare(a.Table, b.Table) })
	for tp := range p.mu.routeErr {
		s.Unroutable = append(s.Unroutable, tp)
	}
	s.Partitions = len(p.mu.parts)
	return s
}

// Handler serves /healthz (the process can make progress), /readyz (it is
// consuming everything it owns; the body names each cause, per table) and
// /metrics from gatherer (nil: no /metrics).
func (p *Processor) Handler(gatherer prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		s := p.Status()
		if !s.Alive() {
			http.Error(w, strings.Join(s.problems(), "\n"), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		s := p.Status()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		problems := s.problems()
		if len(problems) == 0 {
			fmt.Fprintln(w, readySummary(s.Partitions, len(s.Tables)))
			for _, t := range s.Tables {
				if t.State == TableRetrying {
					fmt.Fprintf(w, "table %s retrying %s for %s: %v\n", t.Table, t.Retrying, t.FailingFor.Round(time.Second), t.LastErr)
				}
			}
			for _, line := range s.CatalogNotes {
				fmt.Fprintln(w, line)
			}
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		for _, line := range problems {
			fmt.Fprintln(w, line)
		}
	})
	if gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	}
	return mux
}

// readySummary is /readyz's first line when ready.
func readySummary(partitions, tables int) string {
	count := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	return "ready: " + count(partitions, "partition") + ", " + count(tables, "table")
}
