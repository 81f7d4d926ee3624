package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/backoff"
)

// DefaultRequestTimeout bounds each call to a catalog when no timeout is set.
const DefaultRequestTimeout = 30 * time.Second

// RegistrarOptions configure a Registrar.
type RegistrarOptions struct {
	// Name is the catalog's name in the configuration ("default" for the
	// catalog: block, a key of catalogs:); /readyz lines and the metrics'
	// catalog label carry it. Empty: "default", and /readyz lines say
	// just "catalog:".
	Name string
	// Dependency names the catalog in errors ("Glue at http://…").
	Dependency string
	// RequestTimeout bounds each call to the catalog (default 30s).
	RequestTimeout time.Duration
	// RetryBudget is how long a table's registration may fail before it
	// shows on /readyz as a problem (default 2m); it keeps retrying.
	RetryBudget time.Duration
	// Backoff spaces the retries (default 1s to 1m).
	Backoff backoff.Policy
	// Logger (default: discard) and Registerer (default: none).
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Now is the clock that failure durations are reported on (tests).
	Now func() time.Time
}

// Registrar keeps the catalog entries of the tables a process writes in
// step with their logs, beside the data path (ADR 0047): Committed hands it
// a table's latest snapshot and returns at once; Run registers in the
// background, retrying with backoff, and never blocks a commit.
type Registrar struct {
	cat  Catalog
	o    RegistrarOptions
	log  *slog.Logger
	m    *registrarMetrics
	kick chan struct{}

	mu     sync.Mutex
	tables map[string]*regState // by Source.Name.String()
}

// regState is one table's registration. Guarded by Registrar.mu.
type regState struct {
	src     Source
	want    Entry  // what the log says now
	done    *Entry // what was last registered (nil: not yet, this process)
	pending bool   // want not registered yet
	nextAt  time.Time
	tries   int
	since   time.Time // first failure of the current run (zero: none)
	lastErr error
	// conflict stops the table's registration until its entry changes or
	// an operator runs catalog sync.
	conflict *ConflictError
}

// NewRegistrar builds a registrar on c.
func NewRegistrar(c Catalog, o RegistrarOptions) (*Registrar, error) {
	if c == nil {
		return nil, errors.New("catalog: NewRegistrar: nil catalog")
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.RetryBudget <= 0 {
		o.RetryBudget = 2 * time.Minute
	}
	if o.Backoff.Max <= 0 {
		o.Backoff = backoff.Policy{Min: time.Second, Max: time.Minute}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Dependency == "" {
		o.Dependency = "the catalog"
	}
	m, err := newRegistrarMetrics(o.Registerer, cmp.Or(o.Name, "default"))
	if err != nil {
		return nil, err
	}
	return &Registrar{cat: c, o: o, log: o.Logger.With("component", "catalog"), m: m,
		kick: make(chan struct{}, 1), tables: map[string]*regState{}}, nil
}

// Committed records that the table src now has snapshot snap (after a
// commit, or when it was opened). It never blocks on the catalog: when the
// entry the log gives differs from what was registered, the table is queued
// for Run. A table without a commit yet (nil snapshot, version < 0) waits.
func (r *Registrar) Committed(src Source, snap *deltalog.Snapshot) {
	if snap == nil || snap.Version() < 0 {
		return
	}
	want := EntryOf(src, snap)
	key := src.Name.String()
	r.mu.Lock()
	st := r.tables[key]
	if st == nil {
		st = &regState{src: src}
		r.tables[key] = st
	}
	if st.done != nil && SameLocation(st.done.Location, want.Location) && len(Differences(want, *st.done)) == 0 {
		r.mu.Unlock()
		return // a data-only commit: nothing to tell the catalog
	}
	if st.pending && st.src == src && len(Differences(want, st.want)) == 0 {
		r.mu.Unlock()
		return // already queued with this entry
	}
	st.src, st.want, st.pending, st.conflict = src, want, true, nil
	if st.since.IsZero() {
		st.nextAt = time.Time{}
	}
	r.mu.Unlock()
	r.m.setConflicts(r.counts())
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run registers queued tables until ctx ends.
func (r *Registrar) Run(ctx context.Context) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for ctx.Err() == nil {
		st, wait := r.next()
		if st != nil {
			r.attempt(ctx, st)
			continue
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		case <-t.C:
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
	}
}

// next returns a table due now, or how long until one is.
func (r *Registrar) next() (*regState, time.Duration) {
	now := time.Now() // backoff runs on the real clock; Now only reports
	wait := time.Hour
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.tables {
		if !st.pending || st.conflict != nil {
			continue
		}
		if !st.nextAt.After(now) {
			return st, 0
		}
		wait = min(wait, st.nextAt.Sub(now))
	}
	return nil, wait
}

func (r *Registrar) attempt(ctx context.Context, st *regState) {
	r.mu.Lock()
	src, want := st.src, st.want
	r.mu.Unlock()
	out, diff, err := Register(ctx, r.cat, want, r.o.RequestTimeout, r.o.Dependency)
	if ctx.Err() != nil {
		return
	}
	r.m.registrations.WithLabelValues(string(out)).Inc()
	now := r.o.Now()
	var conflict *ConflictError
	r.mu.Lock()
	changed := st.src != src || len(Differences(st.want, want)) > 0 // a commit came in meanwhile
	switch {
	case err == nil:
		w := want
		st.done, st.since, st.tries, st.lastErr = &w, time.Time{}, 0, nil
		st.pending = changed
	case errors.As(err, &conflict):
		st.conflict, st.lastErr = conflict, err
		if changed {
			st.conflict = nil
		}
	default:
		if st.since.IsZero() {
			st.since = now
		}
		st.lastErr = err
		st.nextAt = time.Now().Add(r.o.Backoff.Delay(st.tries))
		st.tries++
	}
	r.mu.Unlock()
	r.m.setConflicts(r.counts())
	switch {
	case err == nil && out != Unchanged:
		r.log.Info("table registered", "table", want.Name.String(), "location", want.Location, "outcome", string(out), "changed", strings.Join(diff, ","))
	case err == nil:
		r.log.Debug("table registration up to date", "table", want.Name.String())
	case conflict != nil:
		r.log.Error("table not registered: the name is taken", "table", want.Name.String(), "err", err)
	default:
		r.log.Warn("table registration failed; retrying", "table", want.Name.String(), "attempt", st.tries, "err", err)
	}
}

// counts are the tables in conflict and those failing.
func (r *Registrar) counts() (conflicts, failing int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.tables {
		if st.conflict != nil {
			conflicts++
		} else if !st.since.IsZero() {
			failing++
		}
	}
	return conflicts, failing
}

// TableStatus is one table's registration.
type TableStatus struct {
	Name     Name
	Location string
	// Registered: the entry records the table's latest metadata.
	Registered bool
	// Conflict stops the registration (the name is another table's).
	Conflict *ConflictError
	// FailingFor and Err: registration has been failing this long.
	FailingFor time.Duration
	Err        error
}

// Status lists the tables' registrations, sorted by name.
func (r *Registrar) Status() []TableStatus {
	now := r.o.Now()
	r.mu.Lock()
	var out []TableStatus
	for _, st := range r.tables {
		ts := TableStatus{Name: st.src.Name, Location: st.src.Location, Registered: !st.pending && st.done != nil, Conflict: st.conflict}
		if !st.since.IsZero() {
			ts.FailingFor, ts.Err = now.Sub(st.since), st.lastErr
		}
		out = append(out, ts)
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b TableStatus) int { return strings.Compare(a.Name.String(), b.Name.String()) })
	return out
}

// Name is the catalog's name in the configuration (RegistrarOptions.Name).
func (r *Registrar) Name() string { return cmp.Or(r.o.Name, "default") }

// prefix starts the registrar's /readyz lines: "catalog NAME:" names the
// catalog when the configuration has several.
func (r *Registrar) prefix() string {
	if r.o.Name == "" {
		return "catalog:"
	}
	return "catalog " + r.o.Name + ":"
}

// Problems are /readyz's lines about the catalog: conflicts, refused
// credentials, and failures that outlasted the retry budget.
func (r *Registrar) Problems() []string {
	var out []string
	p := r.prefix()
	for _, ts := range r.Status() {
		switch {
		case ts.Conflict != nil:
			out = append(out, fmt.Sprintf("%s table %s not registered: %v", p, ts.Name, ts.Conflict))
		case ts.Err != nil && errors.Is(ts.Err, ErrDenied):
			out = append(out, fmt.Sprintf("%s %s refused access registering %s (check catalog credentials) for %s: %v",
				p, r.o.Dependency, ts.Name, ts.FailingFor.Round(time.Second), ts.Err))
		case ts.Err != nil && ts.FailingFor >= r.o.RetryBudget:
			out = append(out, fmt.Sprintf("%s registering %s has failed for %s: %v", p, ts.Name, ts.FailingFor.Round(time.Second), ts.Err))
		}
	}
	return out
}

// Notes are /readyz's lines about registrations retrying within budget.
func (r *Registrar) Notes() []string {
	var out []string
	p := r.prefix()
	for _, ts := range r.Status() {
		if ts.Conflict == nil && ts.Err != nil && ts.FailingFor < r.o.RetryBudget && !errors.Is(ts.Err, ErrDenied) {
			out = append(out, fmt.Sprintf("%s registering %s retrying for %s: %v", p, ts.Name, ts.FailingFor.Round(time.Second), ts.Err))
		}
	}
	return out
}
