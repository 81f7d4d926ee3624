package memstore_test

import (
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

// TestClone shows that a clone holds the objects at the instant of the call and then
// goes its own way, as the durable state a crashed process leaves behind.
func TestClone(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	require.NoError(t, s.Put(ctx, "_delta_log/00000000000000000000.json", []byte("commit")))
	c := s.Clone()
	require.NoError(t, s.Put(ctx, "after", nil))
	require.ErrorIs(t, c.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", nil), deltalog.ErrExist)
	require.NoError(t, c.Put(ctx, "clone-only", nil))

	got, err := storetest.Paths(ctx, c, "", "")
	require.NoError(t, err)
	require.Equal(t, []string{"_delta_log/00000000000000000000.json", "clone-only"}, got)
	got, err = storetest.Paths(ctx, s, "", "")
	require.NoError(t, err)
	require.Equal(t, []string{"_delta_log/00000000000000000000.json", "after"}, got)
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
