package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/processor/control"
)

func statusPos(n int) codecs.Position {
	var l codecs.LSN
	l[8], l[9] = byte(n>>8), byte(n)
	return codecs.Position{Commit: l, Change: l, Serial: 1}
}

// statusAt is the commit time of transaction n.
func statusAt(n int) time.Time { return time.Date(2024, 3, 15, 0, 0, n, 0, time.UTC) }

// statusTable is the control row of a table at version v, complete through
// transaction complete and last changed by transaction last.
func statusTable(name string, v int64, complete, last int) control.Row {
	return control.Row{Kind: control.KindTable, Name: name, TablePath: "tables/" + name, DeltaVersion: v, ScanFrom: -1,
		CompleteThrough: statusPos(complete), CompleteThroughCommit: statusAt(complete), LastApplied: statusPos(last), LastAppliedCommit: statusAt(last)}
}

// openStatusControl creates a control table in dir/control.
func openStatusControl(t *testing.T, dir string) (*control.Table, string) {
	t.Helper()
	ctlDir := filepath.Join(dir, "control")
	st, err := localstore.New(localstore.Options{Dir: ctlDir})
	require.NoError(t, err)
	ctl, err := control.Open(t.Context(), st, nil)
	require.NoError(t, err)
	return ctl, ctlDir
}

// writeStatusConfig writes dir/cdc2delta.yaml with the given control section.
func writeStatusConfig(t *testing.T, dir, controlYAML string) string {
	t.Helper()
	cfg := filepath.Join(dir, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`kafka: {brokers: ["127.0.0.1:9"], group_id: g, topics: [t]}
schema_registry: {url: "http://127.0.0.1:9"}
`+controlYAML), 0o644))
	return cfg
}

// TestStatus prints the control table and a group's cut: the first version of each
// table complete through it, and whether it sits exactly on it.
func TestStatus(t *testing.T) {
	dir := t.TempDir()
	ctl, ctlDir := openStatusControl(t, dir)
	group := func(n int) control.Row {
		return control.Row{Kind: control.KindGroup, Name: "sales", DeltaVersion: -1, ScanFrom: -1,
			CompleteThrough: statusPos(n), CompleteThroughCommit: statusAt(n), FinalizedUntil: statusAt(n)}
	}
	_, err := ctl.Advance(t.Context(), control.Update{Tables: []control.Row{statusTable("sales.dbo.orders", 4, 5, 5), statusTable("sales.dbo.order_lines", 7, 5, 9)}, Groups: []control.Row{group(5)}})
	require.NoError(t, err)
	_, err = ctl.Advance(t.Context(), control.Update{Tables: []control.Row{statusTable("sales.dbo.orders", 6, 8, 8)}})
	require.NoError(t, err)

	cfg := writeStatusConfig(t, dir, `control:
  path: `+ctlDir+`
  groups:
    - {name: sales, tables: [sales.dbo.orders, sales.dbo.order_lines]}
`)
	r := cli(t, "status", "--config", cfg, "--group", "sales")
	require.Equal(t, exitOK, r.code, r.stderr)
	t.Log(r.stdout)
	require.Contains(t, r.stdout, "sales.dbo.orders")
	require.Contains(t, r.stdout, "2024-03-15 00:00:08.000")
	require.Contains(t, r.stdout, "cut of group sales: every transaction through commit LSN "+statusPos(5).Commit.String())
	require.Regexp(t, `sales\.dbo\.orders\s+4\s+yes`, r.stdout, "the first version complete through the cut, holding nothing after it")
	require.Regexp(t, `sales\.dbo\.order_lines\s+7\s+no`, r.stdout)
	require.Contains(t, r.stdout, "no version of this current-state table sits exactly on it")
	require.Contains(t, r.stdout, "  # sales.dbo.orders version 4\n  # cannot open it to choose a reader (", "the table is not there: no recipe is guessed")
	require.NotContains(t, r.stdout, "to_pyarrow_table")

	r = cli(t, "status", "--config", cfg, "--group", "nope")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "not in control.groups")
}

// TestStatusBehindIsNeverNegative: a table complete through a transaction later than
// its own last change (later transactions did not touch it) is not behind by a
// negative time. BEHIND is how far its complete_through commit is behind the newest
// commit applied to any table, as cdc2delta_table_complete_behind_seconds.
func TestStatusBehindIsNeverNegative(t *testing.T) {
	dir := t.TempDir()
	ctl, ctlDir := openStatusControl(t, dir)
	_, err := ctl.Advance(t.Context(), control.Update{Tables: []control.Row{
		statusTable("sales.dbo.customers", 1, 8, 2), // complete through 8, last changed at 2
		statusTable("sales.dbo.orders", 1, 5, 9),
	}})
	require.NoError(t, err)
	cfg := writeStatusConfig(t, dir, "control: {path: "+ctlDir+"}\n")
	r := cli(t, "status", "--config", cfg)
	require.Equal(t, exitOK, r.code, r.stderr)
	t.Log(r.stdout)
	require.NotRegexp(t, `\s-\d`, r.stdout, "no negative duration")
	require.Regexp(t, `sales\.dbo\.customers .* 1s\n`, r.stdout, "9s, the newest applied commit, less 8s")
	require.Regexp(t, `sales\.dbo\.orders .* 4s\n`, r.stdout)
	require.Contains(t, r.stdout, "BEHIND: how far COMPLETE_THROUGH_COMMIT is behind the newest commit applied to any table")
}

// TestStatusDoesNotCreateTheControlTable: a mistyped control.path is named, status
// exits non-zero and writes nothing, whether the path does not exist or is a
// directory without a table.
func TestStatusDoesNotCreateTheControlTable(t *testing.T) {
	for _, exists := range []bool{false, true} {
		t.Run(fmt.Sprintf("dir exists %v", exists), func(t *testing.T) {
			dir := t.TempDir()
			ctlDir := filepath.Join(dir, "contrl")
			if exists {
				require.NoError(t, os.Mkdir(ctlDir, 0o755))
			}
			cfg := writeStatusConfig(t, dir, "control: {path: "+ctlDir+"}\n")
			r := cli(t, "status", "--config", cfg)
			require.NotEqual(t, exitOK, r.code, r.stdout)
			require.Contains(t, r.stderr, "control.path")
			require.Contains(t, r.stderr, "no control table at "+ctlDir)
			require.NotContains(t, r.stdout, "version 0")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			want := []string{"cdc2delta.yaml"}
			if exists {
				want = append(want, "contrl")
				inside, err := os.ReadDir(ctlDir)
				require.NoError(t, err)
				require.Empty(t, inside, "status wrote into %s", ctlDir)
			}
			require.ElementsMatch(t, want, names, "status created files")
		})
	}
}
