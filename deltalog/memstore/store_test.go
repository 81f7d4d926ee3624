package memstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) deltalog.Store { return memstore.New(memstore.Options{}) })
}

func TestFaultNth(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	in := s.Inject(memstore.Fault{Ops: memstore.OpPutIfAbsent, Pattern: "_delta_log/*.json", Nth: 2})

	require.NoError(t, s.PutIfAbsent(ctx, "_delta_log/0.json", nil))
	require.NoError(t, s.PutIfAbsent(ctx, "data/0.parquet", nil), "pattern does not match")
	require.NoError(t, s.Put(ctx, "_delta_log/x.json", nil), "op does not match")
	err := s.PutIfAbsent(ctx, "_delta_log/1.json", nil)
	require.ErrorIs(t, err, memstore.ErrInjected)
	_, err = s.Get(ctx, "_delta_log/1.json")
	require.ErrorIs(t, err, deltalog.ErrNotExist, "a failed write writes nothing")
	require.NoError(t, s.PutIfAbsent(ctx, "_delta_log/2.json", nil), "only the 2nd call fails")
	require.Equal(t, 1, in.Fired())
	require.Equal(t, 4, s.Calls(memstore.OpPutIfAbsent))
	require.Equal(t, 5, s.Calls(memstore.OpWrite))
}

func TestFaultEveryCallAndRemove(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	require.NoError(t, s.Put(ctx, "a", []byte("x")))
	boom := errors.New("disk on fire")
	in := s.Inject(memstore.Fault{Ops: memstore.OpGet | memstore.OpList, Err: boom})
	for range 3 {
		_, err := s.Get(ctx, "a")
		require.ErrorIs(t, err, boom)
	}
	_, err := storetest.Paths(ctx, s, "", "")
	require.ErrorIs(t, err, boom)
	in.Remove()
	got, err := storetest.Read(ctx, s, "a")
	require.NoError(t, err)
	require.Equal(t, "x", string(got))
	require.Equal(t, 4, in.Fired())
}

func TestFaultAfterWrite(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	var crashed *memstore.Store
	s.Inject(memstore.Fault{
		Ops: memstore.OpPutIfAbsent, Pattern: "_delta_log/*", AfterWrite: true,
		Then: func() { crashed = s.Clone() },
	})
	err := s.PutIfAbsent(ctx, "_delta_log/00000000000000000003.json", []byte("commit"))
	require.ErrorIs(t, err, memstore.ErrInjected, "the writer is told it failed")
	require.NotNil(t, crashed)
	got, err := storetest.Read(ctx, crashed, "_delta_log/00000000000000000003.json")
	require.NoError(t, err, "but the object is durable")
	require.Equal(t, "commit", string(got))
	require.ErrorIs(t, crashed.PutIfAbsent(ctx, "_delta_log/00000000000000000003.json", nil), deltalog.ErrExist)
	require.Equal(t, 2, crashed.Calls(memstore.OpAll), "a clone starts with fresh counters and no faults")
}

func TestFaultDelay(t *testing.T) {
	s := memstore.New(memstore.Options{})
	s.Inject(memstore.Fault{Ops: memstore.OpPut, Delay: 30 * time.Millisecond, DelayOnly: true})
	start := time.Now()
	require.NoError(t, s.Put(t.Context(), "a", nil))
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	s.Inject(memstore.Fault{Ops: memstore.OpGet, Delay: time.Hour, DelayOnly: true})
	_, err := s.Get(ctx, "a")
	require.ErrorIs(t, err, context.DeadlineExceeded, "a delay ends with its context")
}

func TestSetModTimeAndNow(t *testing.T) {
	ctx := t.Context()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := memstore.New(memstore.Options{Now: func() time.Time { return t0 }})
	require.NoError(t, s.Put(ctx, "a", nil))
	require.ErrorIs(t, s.SetModTime("b", t0), deltalog.ErrNotExist)
	require.NoError(t, s.SetModTime("a", t0.Add(-time.Hour)))
	for info, err := range s.List(ctx, "", "") {
		require.NoError(t, err)
		require.Equal(t, t0.Add(-time.Hour), info.ModTime)
	}
}
