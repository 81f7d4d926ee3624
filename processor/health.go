package processor

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/processor/merge"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Status is a snapshot of the processor's health.
type Status struct {
	// Running is true while Run's loop is alive.
	Running bool
	// LastLoop is when the loop last returned from a poll.
	LastLoop time.Time
	// Err is why Run ended, if it failed.
	Err error
	// Failed are the stopped tables, sorted by table path.
	Failed []*TableError
	// Unroutable are partitions whose topic has no table.
	Unroutable []merge.TopicPartition
	// Partitions is the number of partitions assigned.
	Partitions int
}

// Ready reports whether the processor is consuming every partition it owns.
func (s Status) Ready() bool {
	return s.Running && len(s.Failed) == 0 && len(s.Unroutable) == 0
}

// Status returns the current health.
func (p *Processor) Status() Status {
	s := Status{Running: p.running.Load()}
	if n := p.lastLoop.Load(); n > 0 {
		s.LastLoop = time.Unix(0, n)
	}
	if e := p.runErr.Load(); e != nil {
		s.Err = *e
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.mu.tables {
		if t.failed != nil {
			s.Failed = append(s.Failed, t.failed)
		}
	}
	slices.SortFunc(s.Failed, func(a, b *TableError) int { return strings.Compare(a.Table, b.Table) })
	for tp := range p.mu.routeErr {
		s.Unroutable = append(s.Unroutable, tp)
	}
	s.Partitions = len(p.mu.parts)
	return s
}

// Handler serves /healthz (the process is alive: Run has not failed),
// /readyz (consuming everything it owns: no stopped table) and /metrics from
// gatherer (nil: no /metrics).
func (p *Processor) Handler(gatherer prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		s := p.Status()
		if s.Err != nil {
			http.Error(w, "run failed: "+s.Err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		s := p.Status()
		if s.Ready() {
			fmt.Fprintf(w, "ready: %d partitions\n", s.Partitions)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		if !s.Running {
			fmt.Fprintln(w, "not running")
		}
		for _, f := range s.Failed {
			fmt.Fprintln(w, f.Error())
		}
		for _, tp := range s.Unroutable {
			fmt.Fprintf(w, "unroutable: %s/%d\n", tp.Topic, tp.Partition)
		}
	})
	if gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	}
	return mux
}
