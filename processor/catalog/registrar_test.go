package catalog

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/backoff"
)

var ordersSrc = Source{Name: Name{Schema: "analytics", Table: "orders"}, Location: "s3://lake/orders", Role: RoleTable}

func TestRegisterCreatesThenUpdatesOnlyOnChange(t *testing.T) {
	ctx := t.Context()
	f := newFake()
	tt := newTestTable(t)
	reg := func() Outcome {
		out, _, err := Register(ctx, f, EntryOf(ordersSrc, tt.snap), time.Second, "fake")
		require.NoError(t, err)
		return out
	}
	require.Equal(t, Created, reg())
	tt.commitData()
	require.Equal(t, Unchanged, reg())
	require.Zero(t, f.count("update"))
	tt.commitMeta("orders", deltalog.StructField{Name: "note", Type: deltalog.TypeString, Nullable: true})
	require.Equal(t, Updated, reg())
	require.Equal(t, Unchanged, reg())
	tt.commitMeta("the shop's orders", deltalog.StructField{Name: "note", Type: deltalog.TypeString, Nullable: true})
	require.Equal(t, Updated, reg())
	require.Equal(t, 2, f.count("update"))
	require.Equal(t, "the shop's orders", f.entries[ordersSrc.Name].Description)
	require.Equal(t, "id", f.entries[ordersSrc.Name].Properties["cdc2delta.keyColumns"])
}

func TestRegisterNeverOverwritesAnotherTable(t *testing.T) {
	ctx := t.Context()
	f := newFake()
	tt := newTestTable(t)
	f.entries[ordersSrc.Name] = Entry{Name: ordersSrc.Name, Location: "s3://other/orders", Format: FormatDelta}
	out, _, err := Register(ctx, f, EntryOf(ordersSrc, tt.snap), time.Second, "fake")
	require.Equal(t, Conflict, out)
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "s3://other/orders", ce.Location)
	require.Contains(t, err.Error(), "drop that entry or register this table under another name")

	f.entries[ordersSrc.Name] = Entry{Name: ordersSrc.Name, Location: "s3://lake/orders", Format: "iceberg"}
	out, _, err = Register(ctx, f, EntryOf(ordersSrc, tt.snap), time.Second, "fake")
	require.Equal(t, Conflict, out)
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "iceberg", ce.Format)
	require.Zero(t, f.count("update"))
	require.Zero(t, f.count("create"))

	// The same directory spelt with s3a:// and a trailing slash is no conflict.
	f.entries[ordersSrc.Name] = Entry{Name: ordersSrc.Name, Location: "s3a://lake/orders/", Format: FormatDelta}
	out, _, err = Register(ctx, f, EntryOf(ordersSrc, tt.snap), time.Second, "fake")
	require.NoError(t, err)
	require.Equal(t, Updated, out) // the schema was missing
}

func TestRegisterHungCatalogIsUnavailable(t *testing.T) {
	f := newFake()
	f.set(nil, true)
	tt := newTestTable(t)
	start := time.Now()
	out, _, err := Register(t.Context(), f, EntryOf(ordersSrc, tt.snap), 100*time.Millisecond, "Glue at http://x")
	require.Equal(t, Failed, out)
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "no answer from Glue at http://x within 100ms")
	require.Less(t, time.Since(start), 10*time.Second)
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func startRegistrar(t *testing.T, f *fake, o RegistrarOptions) *Registrar {
	o.Backoff = backoff.Policy{Min: time.Millisecond, Max: 5 * time.Millisecond}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = 200 * time.Millisecond
	}
	r, err := NewRegistrar(f, o)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func registered(r *Registrar) bool {
	s := r.Status()
	return len(s) == 1 && s[0].Registered
}

func TestRegistrarInBackground(t *testing.T) {
	f := newFake()
	clk := &clock{now: time.Unix(1000, 0)}
	r := startRegistrar(t, f, RegistrarOptions{RetryBudget: time.Minute, Now: clk.Now})
	tt := newTestTable(t)

	// Down: Committed returns at once; registration retries; within the
	// budget it is a note, beyond it a problem.
	f.set(errors.Join(ErrUnavailable, errors.New("connection refused")), false)
	r.Committed(ordersSrc, tt.snap)
	waitFor(t, "retries", func() bool { return f.count("lookup") >= 3 })
	require.Empty(t, r.Problems())
	waitFor(t, "a note", func() bool { return len(r.Notes()) == 1 })
	require.Contains(t, r.Notes()[0], "catalog: registering analytics.orders retrying")
	clk.add(2 * time.Minute)
	waitFor(t, "a problem", func() bool { return len(r.Problems()) == 1 })
	require.Contains(t, r.Problems()[0], "registering analytics.orders has failed for 2m")

	// Back: registered once.
	f.set(nil, false)
	waitFor(t, "registration", func() bool { return registered(r) })
	require.Empty(t, r.Problems())
	require.Equal(t, 1, f.count("create"))

	// Data-only commits call nothing.
	lookups := f.count("lookup")
	for range 5 {
		tt.commitData()
		r.Committed(ordersSrc, tt.snap)
	}
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, lookups, f.count("lookup"))

	// A schema change: exactly one update.
	tt.commitMeta("orders", deltalog.StructField{Name: "note", Type: deltalog.TypeString, Nullable: true})
	r.Committed(ordersSrc, tt.snap)
	waitFor(t, "the update", func() bool { return f.count("update") == 1 && registered(r) })
	tt.commitData()
	r.Committed(ordersSrc, tt.snap)
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, 1, f.count("update"))

	// 401: shows at once.
	f.set(errors.Join(ErrDenied, errors.New("401 Unauthorized")), false)
	tt.commitMeta("orders!", deltalog.StructField{Name: "note", Type: deltalog.TypeString, Nullable: true})
	r.Committed(ordersSrc, tt.snap)
	waitFor(t, "a denied problem", func() bool { return len(r.Problems()) == 1 })
	require.Contains(t, r.Problems()[0], "refused access registering analytics.orders (check catalog credentials)")
}

func TestRegistrarConflictStopsOnlyThatTable(t *testing.T) {
	f := newFake()
	r := startRegistrar(t, f, RegistrarOptions{})
	other := Source{Name: Name{Schema: "analytics", Table: "items"}, Location: "s3://lake/items", Role: RoleTable}
	f.entries[ordersSrc.Name] = Entry{Name: ordersSrc.Name, Location: "s3://else/orders", Format: FormatDelta}
	tt := newTestTable(t)
	r.Committed(ordersSrc, tt.snap)
	r.Committed(other, tt.snap)
	waitFor(t, "a conflict", func() bool { return len(r.Problems()) == 1 })
	require.Contains(t, r.Problems()[0], "catalog: table analytics.orders not registered: catalog: analytics.orders is registered at s3://else/orders")
	waitFor(t, "the other table", func() bool {
		_, err := f.Lookup(t.Context(), other.Name)
		return err == nil && r.Status()[0].Registered
	})
	lookups := f.count("lookup")
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, lookups+0, f.count("lookup"), "a conflict is not retried in a loop")
	require.Equal(t, "s3://else/orders", f.entries[ordersSrc.Name].Location)
}

// Run returns when its context ends, even with a table due and the
// catalog hanging.
func TestRegistrarStopsWithItsContext(t *testing.T) {
	f := newFake()
	f.set(nil, true)
	r, err := NewRegistrar(f, RegistrarOptions{RequestTimeout: time.Minute, Backoff: backoff.Policy{Min: time.Millisecond, Max: time.Millisecond}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	r.Committed(ordersSrc, newTestTable(t).snap)
	waitFor(t, "a call", func() bool { return f.count("lookup") == 1 })
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	require.Equal(t, 1, f.count("lookup"))
}

// TestRegistrarsOwnLanes: two catalogs, one hung: the other's tables
// register; /readyz lines name the catalog; each catalog has its own
// metric series in one registry.
func TestRegistrarsOwnLanes(t *testing.T) {
	reg := prometheus.NewRegistry()
	hung, up := newFake(), newFake()
	hung.set(nil, true)
	clk := &clock{now: time.Unix(1000, 0)}
	rh := startRegistrar(t, hung, RegistrarOptions{Name: "finance", Dependency: "Glue at http://hung", RetryBudget: time.Minute,
		RequestTimeout: 20 * time.Millisecond, Now: clk.Now, Registerer: reg})
	ru := startRegistrar(t, up, RegistrarOptions{Name: "default", Registerer: reg})
	require.Equal(t, "finance", rh.Name())
	tt := newTestTable(t)
	ledger := Source{Name: Name{Schema: "finance", Table: "ledger"}, Location: "s3://lake/ledger", Role: RoleTable}
	rh.Committed(ledger, tt.snap)
	ru.Committed(ordersSrc, tt.snap)
	waitFor(t, "the healthy catalog's table", func() bool { return registered(ru) })
	require.Equal(t, 1, up.count("create"))
	waitFor(t, "the hung catalog retrying", func() bool { return hung.count("lookup") >= 2 && len(rh.Notes()) == 1 })
	require.Contains(t, rh.Notes()[0], "catalog finance: registering finance.ledger retrying")
	clk.add(2 * time.Minute)
	waitFor(t, "a problem", func() bool { return len(rh.Problems()) == 1 })
	require.Contains(t, rh.Problems()[0], "catalog finance: registering finance.ledger has failed for 2m")
	require.Contains(t, rh.Problems()[0], "no answer from Glue at http://hung")
	require.Empty(t, ru.Problems())
	require.Empty(t, ru.Notes())

	mfs, err := reg.Gather()
	require.NoError(t, err)
	failing := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "cdc2delta_catalog_failing_tables" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "catalog" {
					failing[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	require.Equal(t, map[string]float64{"finance": 1, "default": 0}, failing)
}
