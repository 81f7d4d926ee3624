//go:build integration

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/control"
)

// TestStatusGroupRecipesRead runs, as printed, the recipes `status --group` gives for
// a cut on a table with the default settings (deletion vectors, column mapping): each
// must print the rows of the cut's version, not the latest. The recipe status printed
// before, DeltaTable(path, version=N).to_pyarrow_table(), refuses such a table.
func TestStatusGroupRecipesRead(t *testing.T) {
	py := fulltier.PythonPath(t)
	root := t.TempDir()
	path := filepath.Join(root, "orders")
	def := readerTables[0]
	require.Equal(t, "default (deletion vectors, column mapping)", def.name)
	_, err := buildReaderTable(t.Context(), path, def)
	require.NoError(t, err)

	ctlDir := filepath.Join(root, "control")
	st, err := localstore.New(localstore.Options{Dir: ctlDir})
	require.NoError(t, err)
	ctl, err := control.Open(t.Context(), st, nil)
	require.NoError(t, err)
	at := func(n int) time.Time { return time.Date(2024, 3, 15, 0, 0, n, 0, time.UTC) }
	row := func(v int64, n int) control.Row {
		return control.Row{Kind: control.KindTable, Name: "sales.dbo.orders", TablePath: path, DeltaVersion: v, ScanFrom: -1,
			CompleteThrough: statusPos(n), CompleteThroughCommit: at(n), LastApplied: statusPos(n), LastAppliedCommit: at(n)}
	}
	group := control.Row{Kind: control.KindGroup, Name: "sales", DeltaVersion: -1, ScanFrom: -1,
		CompleteThrough: statusPos(5), CompleteThroughCommit: at(5), FinalizedUntil: at(5)}
	_, err = ctl.Advance(t.Context(), control.Update{Tables: []control.Row{row(1, 5)}, Groups: []control.Row{group}})
	require.NoError(t, err)
	_, err = ctl.Advance(t.Context(), control.Update{Tables: []control.Row{row(4, 9)}})
	require.NoError(t, err)
	cfg := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`kafka: {brokers: ["127.0.0.1:9"], group_id: g, topics: [t]}
schema_registry: {url: "http://127.0.0.1:9"}
control:
  path: `+ctlDir+`
  groups:
    - {name: sales, tables: [sales.dbo.orders]}
`), 0o644))

	r := cli(t, "status", "--config", cfg, "--group", "sales")
	require.Equal(t, exitOK, r.code, r.stderr)
	t.Log(r.stdout)
	require.Regexp(t, `sales\.dbo\.orders\s+1\s+yes`, r.stdout)
	require.Contains(t, r.stdout, "spark.sql(\"SELECT * FROM delta.`"+path+"` VERSION AS OF 1\")")
	var recipes []string
	for line := range strings.SplitSeq(r.stdout, "\n") {
		if cmd, ok := strings.CutPrefix(line, "  python -c "); ok {
			recipes = append(recipes, cmd)
		}
	}
	require.Len(t, recipes, 2, "delta-rs and DuckDB")
	for _, rc := range recipes {
		out, stderr, err := shell(t, py+" -c "+rc)
		require.NoError(t, err, "%s\n%s", rc, stderr)
		// Version 1: id 2 updated, id 3 deleted, id 7 created; id 8 comes at version 3.
		for _, want := range []string{"name 2 v1", "name 7 v1", "name 6 v0"} {
			require.Contains(t, out, want, "%s printed:\n%s", rc, out)
		}
		for _, not := range []string{"name 8", "name 3 v0", "name 1 v2"} {
			require.NotContains(t, out, not, "%s printed:\n%s", rc, out)
		}
	}

	_, stderr, err := shell(t, py+` -c "from deltalake import DeltaTable; print(DeltaTable('`+path+`', version=1).to_pyarrow_table())"`)
	require.Error(t, err, "the recipe status printed before reads the table")
	require.Contains(t, stderr, "but these are not yet supported by the deltalake reader")
}

// shell runs command with sh, as a user pastes it.
func shell(t *testing.T, command string) (string, string, error) {
	cmd := exec.CommandContext(t.Context(), "sh", "-c", command)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}
