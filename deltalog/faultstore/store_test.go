package faultstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
)

// inners are the stores the wrapper is tested over: the faults must behave the same on each.
var inners = []struct {
	name string
	open func(t *testing.T) deltalog.Store
}{
	{"mem", func(t *testing.T) deltalog.Store { return memstore.New(memstore.Options{}) }},
	{"local", func(t *testing.T) deltalog.Store {
		s, err := localstore.New(localstore.Options{Dir: t.TempDir(), NoSync: true})
		require.NoError(t, err)
		return s
	}},
}

// TestConformance shows that a wrapper without faults is a faithful store.
func TestConformance(t *testing.T) {
	for _, in := range inners {
		t.Run(in.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) deltalog.Store { return faultstore.Wrap(in.open(t)) })
		})
	}
}

func TestFaults(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name  string
		fault faultstore.Fault
		// run makes calls against the wrapper and checks them against the wrapped store.
		run func(t *testing.T, s *faultstore.Store, inner deltalog.Store)
		// fired is how many times the fault must have fired.
		fired int
		// thens is how many times Then must have run, when not fired.
		thens *int
	}{
		{
			name:  "zero fault fails every call before the store",
			fault: faultstore.Fault{},
			run: func(t *testing.T, s *faultstore.Store, inner deltalog.Store) {
				ctx := t.Context()
				require.ErrorIs(t, s.Put(ctx, "a", []byte("x")), faultstore.ErrInjected)
				_, err := s.Get(ctx, "a")
				require.ErrorIs(t, err, faultstore.ErrInjected)
				require.ErrorIs(t, s.Delete(ctx, "a"), faultstore.ErrInjected)
				_, err = storetest.Paths(ctx, s, "", "")
				require.ErrorIs(t, err, faultstore.ErrInjected)
				_, err = storetest.Read(ctx, inner, "a")
				require.ErrorIs(t, err, deltalog.ErrNotExist, "a failed put must not reach the store")
			},
			fired: 4,
		},
		{
			name:  "Err, Ops and Pattern aim the fault",
			fault: faultstore.Fault{Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/*.json", Err: errBoom},
			run: func(t *testing.T, s *faultstore.Store, inner deltalog.Store) {
				ctx := t.Context()
				require.NoError(t, s.Put(ctx, "_delta_log/1.json", []byte("put")), "other op")
				require.NoError(t, s.PutIfAbsent(ctx, "_delta_log/1.checkpoint.parquet", []byte("cp")), "other path")
				require.ErrorIs(t, s.PutIfAbsent(ctx, "_delta_log/2.json", []byte("x")), errBoom)
				got, err := storetest.Read(ctx, inner, "_delta_log/1.json")
				require.NoError(t, err)
				require.Equal(t, "put", string(got))
			},
			fired: 1,
		},
		{
			name:  "Nth fires once",
			fault: faultstore.Fault{Ops: faultstore.OpPut, Nth: 2},
			run: func(t *testing.T, s *faultstore.Store, inner deltalog.Store) {
				ctx := t.Context()
				require.NoError(t, s.Put(ctx, "a", nil))
				require.ErrorIs(t, s.Put(ctx, "b", nil), faultstore.ErrInjected)
				require.NoError(t, s.Put(ctx, "c", nil))
			},
			fired: 1,
		},
		{
			name:  "AfterWrite lands the object and reports failure",
			fault: faultstore.Fault{Ops: faultstore.OpWrite, AfterWrite: true, Nth: 1},
			run: func(t *testing.T, s *faultstore.Store, inner deltalog.Store) {
				ctx := t.Context()
				require.ErrorIs(t, s.PutIfAbsent(ctx, "a", []byte("x")), faultstore.ErrInjected)
				got, err := storetest.Read(ctx, inner, "a")
				require.NoError(t, err)
				require.Equal(t, "x", string(got))
			},
			fired: 1,
		},
		{
			name:  "AfterWrite on an existing object reports the store's ErrExist",
			fault: faultstore.Fault{Ops: faultstore.OpPutIfAbsent, AfterWrite: true, Nth: 2},
			run: func(t *testing.T, s *faultstore.Store, inner deltalog.Store) {
				ctx := t.Context()
				require.NoError(t, s.PutIfAbsent(ctx, "a", []byte("first")))
				err := s.PutIfAbsent(ctx, "a", []byte("second"))
				require.ErrorIs(t, err, deltalog.ErrExist)
				require.NotErrorIs(t, err, faultstore.ErrInjected)
			},
			fired: 1,
			thens: new(0), // the write did not land, so there is no "after" to act on
		},
		{
			name:  "DelayOnly delays the call, lets it through and runs Then",
			fault: faultstore.Fault{Ops: faultstore.OpGet, DelayOnly: true, Delay: 30 * time.Millisecond},
			run: func(t *testing.T, s *faultstore.Store, inner deltalog.Store) {
				ctx := t.Context()
				require.NoError(t, inner.Put(ctx, "a", []byte("x")))
				start := time.Now()
				got, err := storetest.Read(ctx, s, "a")
				require.NoError(t, err)
				require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
				require.Equal(t, "x", string(got))
			},
			fired: 1,
		},
	}
	for _, in := range inners {
		for _, tc := range tests {
			t.Run(in.name+"/"+tc.name, func(t *testing.T) {
				inner := in.open(t)
				s := faultstore.Wrap(inner)
				f := tc.fault
				thens := 0
				f.Then = func() { thens++ }
				inj := s.Inject(f)
				tc.run(t, s, inner)
				require.Equal(t, tc.fired, inj.Fired())
				wantThens := tc.fired
				if tc.thens != nil {
					wantThens = *tc.thens
				}
				require.Equal(t, wantThens, thens, "Then runs each time the fault takes effect")
			})
		}
	}
}

// TestDelayEndsWithContext shows that a delay is cut short by the caller's context, so a
// stalled store never outlives the test that stalls it.
func TestDelayEndsWithContext(t *testing.T) {
	s := faultstore.Wrap(memstore.New(memstore.Options{}))
	s.Inject(faultstore.Fault{Delay: time.Hour, DelayOnly: true})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Put(ctx, "a", nil) }()
	require.Eventually(t, func() bool { return s.Calls(faultstore.OpPut) == 1 }, time.Minute, time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(time.Minute):
		t.Fatal("a delayed put did not end when its context was canceled")
	}
	_, err := storetest.Read(t.Context(), s.Unwrap(), "a")
	require.ErrorIs(t, err, deltalog.ErrNotExist)
}

// TestAfterWriteThenSeesTheWrite shows that Then runs once the object is durable, so a
// test can capture there the state a writer that crashed after its write leaves behind.
func TestAfterWriteThenSeesTheWrite(t *testing.T) {
	ctx := t.Context()
	mem := memstore.New(memstore.Options{})
	s := faultstore.Wrap(mem)
	var crashed *memstore.Store
	s.Inject(faultstore.Fault{Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/*", AfterWrite: true,
		Then: func() { crashed = mem.Clone() }})
	err := s.PutIfAbsent(ctx, "_delta_log/00000000000000000003.json", []byte("commit"))
	require.ErrorIs(t, err, faultstore.ErrInjected, "the writer is told it failed")
	require.NotNil(t, crashed)
	got, err := storetest.Read(ctx, crashed, "_delta_log/00000000000000000003.json")
	require.NoError(t, err, "but the object is durable")
	require.Equal(t, "commit", string(got))
}

func TestRemoveAndCalls(t *testing.T) {
	ctx := t.Context()
	s := faultstore.Wrap(memstore.New(memstore.Options{}))
	inj := s.Inject(faultstore.Fault{Ops: faultstore.OpDelete})
	require.ErrorIs(t, s.Delete(ctx, "a"), faultstore.ErrInjected)
	inj.Remove()
	require.NoError(t, s.Delete(ctx, "a"))
	require.NoError(t, s.Put(ctx, "a", nil))
	require.Equal(t, 1, inj.Fired())
	require.Equal(t, 2, s.Calls(faultstore.OpDelete))
	require.Equal(t, 3, s.Calls(faultstore.OpDelete|faultstore.OpPut))
	require.Equal(t, "put|delete", (faultstore.OpDelete | faultstore.OpPut).String())
}
