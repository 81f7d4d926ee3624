//go:build integration

package hive_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
	"github.com/cdc2delta/cdc2delta/processor/catalog/hive"
)

func newCatalog(t *testing.T, uri string) *hive.Catalog {
	t.Helper()
	c, err := hive.New(hive.Options{URIs: []string{uri}})
	require.NoError(t, err)
	return c
}

// newDatabase creates a database with a unique name on the metastore.
func newDatabase(t *testing.T, c *hive.Catalog) string {
	t.Helper()
	db := "t_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	require.NoError(t, c.CreateDatabase(ctx, db, ""))
	return db
}

func schema(fields ...string) *deltalog.StructType {
	st := &deltalog.StructType{}
	for _, f := range fields {
		st.Fields = append(st.Fields, deltalog.StructField{Name: f, Type: deltalog.TypeString, Nullable: true, Metadata: map[string]any{}})
	}
	return st
}

// Create, Lookup and Update on a real metastore, and the errors callers
// branch on: a missing table or database, a taken name.
func TestHiveRoundTrip(t *testing.T) {
	c := newCatalog(t, fulltier.HiveMetastore(t))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	db := newDatabase(t, c)

	ok, err := c.DatabaseExists(ctx, db)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = c.DatabaseExists(ctx, db+"_missing")
	require.NoError(t, err)
	require.False(t, ok)
	require.ErrorIs(t, c.CreateDatabase(ctx, db, ""), catalog.ErrExists)

	name := catalog.Name{Schema: db, Table: "orders"}
	_, err = c.Lookup(ctx, name)
	require.ErrorIs(t, err, catalog.ErrNotFound)

	e := catalog.Entry{
		Name:             name,
		Location:         "file://" + t.TempDir(),
		Schema:           schema("id", "region"),
		PartitionColumns: []string{"region"},
		Description:      "orders from sales.dbo.orders",
		Properties:       map[string]string{"cdc2delta.role": "table"},
	}
	require.NoError(t, c.Create(ctx, e))
	got, err := c.Lookup(ctx, name)
	require.NoError(t, err)
	require.Equal(t, e, got)

	// The name is taken, whatever the location.
	other := e
	other.Location = "file://" + t.TempDir()
	require.ErrorIs(t, c.Create(ctx, other), catalog.ErrExists)

	// Schema evolution and a new comment replace the entry.
	e.Schema = schema("id", "region", "note")
	e.Description = "orders, with notes"
	require.NoError(t, c.Update(ctx, e))
	got, err = c.Lookup(ctx, name)
	require.NoError(t, err)
	require.Equal(t, e, got)

	missing := e
	missing.Name.Table = "nothing_here"
	require.ErrorIs(t, c.Update(ctx, missing), catalog.ErrNotFound)
	inMissingDB := e
	inMissingDB.Name.Schema = db + "_missing"
	require.ErrorIs(t, c.Create(ctx, inMissingDB), catalog.ErrNotFound)
}

// A metastore that does not answer (frozen), is cancelled on, or is down
// fails the call with catalog.ErrUnavailable by the caller's deadline.
func TestHiveFaults(t *testing.T) {
	h := fulltier.StartHive(t)
	c := newCatalog(t, h.URI)
	name := catalog.Name{Schema: "default", Table: "t"}
	e := catalog.Entry{Name: name, Location: "file://" + t.TempDir()}
	// The metastore reads a stalled Create once it is thawed, so the hung
	// Create uses another name.
	hungCreate := catalog.Entry{Name: catalog.Name{Schema: "default", Table: "hung"}, Location: e.Location}

	// within runs f and fails the test if it does not return within limit:
	// a generous bound that only a call ignoring its deadline would miss.
	within := func(limit time.Duration, f func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			return err
		case <-time.After(limit):
			t.Fatalf("the call did not return within %s", limit)
			return nil
		}
	}

	t.Run("hung", func(t *testing.T) {
		h.Freeze()
		defer h.Thaw()
		for _, call := range []func(context.Context) error{
			func(ctx context.Context) error { _, err := c.Lookup(ctx, name); return err },
			func(ctx context.Context) error { return c.Create(ctx, hungCreate) },
		} {
			err := within(time.Minute, func() error {
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
				defer cancel()
				return call(ctx)
			})
			require.ErrorIs(t, err, catalog.ErrUnavailable)
			require.ErrorIs(t, err, context.DeadlineExceeded)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		h.Freeze()
		defer h.Thaw()
		err := within(time.Minute, func() error {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			time.AfterFunc(500*time.Millisecond, cancel)
			_, err := c.Lookup(ctx, name)
			return err
		})
		require.ErrorIs(t, err, catalog.ErrUnavailable)
		require.ErrorIs(t, err, context.Canceled)
	})

	t.Run("answers again after a thaw", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		_, err := c.Lookup(ctx, name)
		require.ErrorIs(t, err, catalog.ErrNotFound)
		require.NoError(t, c.Create(ctx, e))
		got, err := c.Lookup(ctx, name)
		require.NoError(t, err)
		require.Equal(t, e.Location, got.Location)
	})

	t.Run("down", func(t *testing.T) {
		h.Stop()
		err := within(time.Minute, func() error {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			_, err := c.Lookup(ctx, name)
			return err
		})
		require.ErrorIs(t, err, catalog.ErrUnavailable)
		require.False(t, errors.Is(err, context.DeadlineExceeded), "a refused connection fails at once: %v", err)
		require.NotErrorIs(t, err, catalog.ErrNotFound)
	})
}
