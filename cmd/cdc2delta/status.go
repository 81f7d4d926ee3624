package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/readers"
	"github.com/cdc2delta/cdc2delta/processor/control"
)

func statusCommand() command {
	return command{
		name:    "status",
		summary: "show the control table: how far each table is complete, each group's finalized_until, and the versions to read for a consistent cut",
		example: "cdc2delta status --config cdc2delta.yaml\ncdc2delta status --config cdc2delta.yaml --group sales",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			cf := addConfigFlags(fs)
			group := fs.String("group", "", "also print, for this group's finalized cut, the version of each table to read")
			return func(ctx context.Context, args []string) error {
				c, err := cf.load(args, e.lookup)
				if err != nil {
					return err
				}
				if c.Control.Path == "" {
					return usagef("control.path is not set: the control table is kept only when it is (see CONFIG.md, control)")
				}
				store, err := storeOpener(c.Storage)(ctx, c.Control.Path)
				if err != nil {
					return fmt.Errorf("control.path: %w", err)
				}
				ctl, err := control.OpenExisting(ctx, store)
				if errors.Is(err, control.ErrNoTable) {
					return fmt.Errorf("control.path: no control table at %s (no _delta_log there): check control.path; "+
						"`cdc2delta run` creates the table there, status only reads it", c.Control.Path)
				}
				if err != nil {
					return fmt.Errorf("control.path %s: %w", c.Control.Path, err)
				}
				st, err := ctl.Read(ctx)
				if err != nil {
					return err
				}
				if err := printStatus(e.stdout, st); err != nil {
					return err
				}
				if *group == "" {
					return nil
				}
				return printCut(ctx, e.stdout, c, st, *group)
			}
		},
	}
}

func tsText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}

func lsnText(p codecs.Position) string {
	if p == (codecs.Position{}) {
		return "-"
	}
	return p.CommitText()
}

func printStatus(w io.Writer, st *control.State) error {
	fmt.Fprintf(w, "control table version %d\n\n", st.Version)
	tt := newTextTable("TABLE", "DELTA_VERSION", "COMPLETE_THROUGH_LSN", "COMPLETE_THROUGH_COMMIT", "LAST_APPLIED_COMMIT", "BEHIND")
	newest := control.NewestApplied(slices.Collect(maps.Values(st.Tables)))
	for _, name := range slices.Sorted(maps.Keys(st.Tables)) {
		r := st.Tables[name]
		behind := "-"
		if d, ok := control.Behind(newest, r.CompleteThroughCommit); ok {
			behind = d.Round(time.Millisecond).String()
		}
		tt.add(name, strconv.FormatInt(r.DeltaVersion, 10), lsnText(r.CompleteThrough), tsText(r.CompleteThroughCommit), tsText(r.LastAppliedCommit), behind)
	}
	if err := tt.write(w); err != nil {
		return err
	}
	if len(st.Tables) > 0 {
		fmt.Fprintf(w, "\nBEHIND: how far COMPLETE_THROUGH_COMMIT is behind the newest commit applied to any table (%s), as cdc2delta_table_complete_behind_seconds\n", tsText(newest))
	}
	if len(st.Groups) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	gt := newTextTable("GROUP", "FINALIZED_UNTIL", "COMPLETE_THROUGH_LSN")
	for _, name := range slices.Sorted(maps.Keys(st.Groups)) {
		g := st.Groups[name]
		gt.add(name, tsText(g.FinalizedUntil), lsnText(g.CompleteThrough))
	}
	return gt.write(w)
}

// printCut prints, for each table of the group, the first version complete through
// the group's cut, whether it sits exactly on it, and how to read it.
func printCut(ctx context.Context, w io.Writer, c config.Config, st *control.State, name string) error {
	var members []string
	for _, g := range c.Control.Groups {
		if g.Name == name {
			members = g.Tables
		}
	}
	if members == nil {
		return usagef("--group %q is not in control.groups", name)
	}
	g, ok := st.Groups[name]
	if !ok || g.CompleteThrough == (codecs.Position{}) {
		return errors.New("the group has no finalized cut yet: every table of it must have been complete through some transaction (see `cdc2delta status`)")
	}
	fmt.Fprintf(w, "\ncut of group %s: every transaction through commit LSN %s (committed %s UTC)\n\n", name, g.CompleteThrough.Commit, tsText(g.CompleteThroughCommit))
	tt := newTextTable("TABLE", "VERSION", "EXACT")
	open := storeOpener(c.Storage)
	var notes, snippets []string
	for _, m := range members {
		v, exact, ok := st.CutVersion(m, g.CompleteThrough)
		if !ok {
			tt.add(m, "-", "-")
			notes = append(notes, fmt.Sprintf("%s: no version recorded complete through the cut yet", m))
			continue
		}
		switch exact {
		case control.ExactUnknown:
			notes = append(notes, fmt.Sprintf("%s: version %d was recorded after a restart; whether it holds changes after the cut is not known", m, v.DeltaVersion))
		case control.NotExact:
			notes = append(notes, fmt.Sprintf("%s: version %d also holds changes up to commit LSN %s, after the cut; no version of this current-state table sits exactly on it",
				m, v.DeltaVersion, v.LastApplied.Commit))
		}
		tt.add(m, strconv.FormatInt(v.DeltaVersion, 10), string(exact))
		snippets = append(snippets, readVersion(ctx, open, m, v.TablePath, v.DeltaVersion)...)
	}
	if err := tt.write(w); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
		fmt.Fprintf(w, "the exact cut of every table is in its change log (tables.defaults.change_log): the rows of <table path>_changes with _cdc_position <= '%s'\n", g.CompleteThrough.Hex())
	}
	if len(snippets) > 0 {
		fmt.Fprintf(w, "\nto read them (the tested recipes of the readers that open each table, docs/readers.md):\n%s\n", strings.Join(snippets, "\n"))
	}
	return nil
}

// cutReaders are the recipes status prints, as the quickstart does: delta-rs's
// QueryBuilder and DuckDB, which read deletion vectors and column mapping (the
// defaults), where DeltaTable(path).to_pyarrow_table() does not.
var cutReaders = []string{"delta-rs", "DuckDB"}

// readVersion says how to read version v of table name at path: each recipe of
// cutReaders whose reader opens the table (by its protocol and metadata at v, as
// describe says), why not for one that does not, and Spark SQL.
func readVersion(ctx context.Context, open func(context.Context, string) (deltalog.Store, error), name, path string, v int64) []string {
	out := []string{fmt.Sprintf("  # %s version %d", name, v)}
	verdicts, err := versionVerdicts(ctx, open, path, v)
	if err != nil {
		return append(out, fmt.Sprintf("  # cannot open it to choose a reader (%v); docs/readers.md says which reader opens which table", err))
	}
	for _, r := range readers.Recipes {
		if !slices.Contains(cutReaders, r.Reader) {
			continue
		}
		if vd := verdicts[r.API]; vd.Outcome != readers.Reads {
			out = append(out, fmt.Sprintf("  # %s does not read this table: %s", r.Reader, vd.Why))
			continue
		}
		out = append(out, fmt.Sprintf("  # %s: %s", r.Reader, r.Install), "  "+r.CommandAt(path, v))
	}
	if vd := verdicts["spark.version_as_of"]; vd.Outcome == readers.Reads {
		out = append(out, fmt.Sprintf("  # Spark\n  spark.sql(\"SELECT * FROM delta.`%s` VERSION AS OF %d\")", path, v))
	}
	return out
}

// versionVerdicts are the reader verdicts on version v of the table at path, by API ID.
func versionVerdicts(ctx context.Context, open func(context.Context, string) (deltalog.Store, error), path string, v int64) (map[string]readers.Verdict, error) {
	store, err := open(ctx, path)
	if err != nil {
		return nil, err
	}
	t, err := deltalog.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	snap, err := t.SnapshotAt(ctx, v)
	if err != nil {
		return nil, err
	}
	out := map[string]readers.Verdict{}
	for _, vd := range readers.Verdicts(readers.TableOf(snap.Protocol(), snap.Metadata())) {
		out[vd.API.ID()] = vd
	}
	return out, nil
}
