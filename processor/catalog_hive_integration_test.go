//go:build integration

package processor

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/backoff"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
	"github.com/cdc2delta/cdc2delta/processor/catalog/hive"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TestCatalogHiveReadByName: a table and its history table, created by the
// pipeline, are registered in the Hive Metastore with no manual step, and
// Spark SQL with that metastore reads both by name: the table's rows, and as
// many open versions in the history as the table has rows.
func TestCatalogHiveReadByName(t *testing.T) {
	uri := fulltier.HiveMetastore(t)
	ctx := t.Context()
	cat, err := hive.New(hive.Options{URIs: []string{uri}})
	require.NoError(t, err)
	db := fmt.Sprintf("pipeline%d", time.Now().UnixNano())
	require.NoError(t, cat.CreateDatabase(ctx, db, "file://"+t.TempDir()))
	reg, err := catalog.NewRegistrar(cat, catalog.RegistrarOptions{Dependency: "Hive Metastore", RequestTimeout: 10 * time.Second,
		Backoff: backoff.Policy{Min: 50 * time.Millisecond, Max: 200 * time.Millisecond}})
	require.NoError(t, err)
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); reg.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })

	pl := newPipelineOf(t, dbzgen.WorkloadOptions{Seed: 11, Keys: 40, DeleteRatio: 0.1}, nil, "hms", dbzgen.Orders())
	opts := pl.options("catalog-hive")
	sinkOpts := opts.Sink
	opts.PerTable = func(src route.TableSource) TableSettings {
		return TableSettings{Sink: sinkOpts, History: src.Path + "_history"}
	}
	opts.Catalogs = []*catalog.Registrar{reg}
	opts.CatalogSource = func(src route.TableSource, path, role string) (*catalog.Registrar, catalog.Source) {
		name := src.Table
		if role == catalog.RoleHistory {
			name += "_history"
		}
		return reg, catalog.Source{Name: catalog.Name{Schema: db, Table: name},
			Location: "file://" + filepath.Join(pl.root, path), Role: role}
	}
	pl.start(opts)
	pl.produce(300)
	pl.waitCaughtUp()
	require.Eventually(t, func() bool {
		s := reg.Status()
		return len(s) == 2 && s[0].Registered && s[1].Registered
	}, 30*time.Second, 50*time.Millisecond, "the table and its history registered")

	table := db + "." + pl.tables[0].Def().Name
	res := fulltier.ReadHive(t, uri,
		fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: pl.root, Statements: []string{"SELECT count(*) AS n FROM " + table}},
		fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: pl.root, Statements: []string{
			"SELECT count(*) AS n FROM " + table + "_history WHERE __END_AT IS NULL"}},
	)
	want := len(pl.tableRows(pl.tables[0]))
	require.Positive(t, want)
	for _, r := range res {
		require.Empty(t, r.Err)
		require.Len(t, r.Rows, 1)
		require.Equal(t, fmt.Sprint(want), fmt.Sprint(r.Rows[0]["n"]), "%s", r.Engine)
	}
}
