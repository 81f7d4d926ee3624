package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/sqlexpr"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// listFlag collects a repeated flag's values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, "; ") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

func updateCommand() command {
	return command{
		name:    "update",
		args:    "TABLE",
		summary: "set columns of the rows that match a predicate (Spark's UPDATE ... SET ... WHERE)",
		example: "cdc2delta update ./tables/f1/results --set 'points = 11 - position' --where 'position <= 10'\n" +
			"cdc2delta update ./tables/sales/dbo/orders --set '`Unit Price` = `Unit Price` * 1.1' --where \"status = 'open'\" --dry-run",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var set listFlag
			fs.Var(&set, "set", "an assignment `col = expr` in Spark SQL (repeat the flag, or separate with commas);\n"+
				"every expression reads the row as it was before the update")
			return dmlFlags(fs, e, deltalog.OpUpdate, &set)
		},
	}
}

func deleteCommand() command {
	return command{
		name:    "delete",
		args:    "TABLE",
		summary: "delete the rows that match a predicate (Spark's DELETE FROM ... WHERE)",
		example: "cdc2delta delete ./tables/f1/results --where 'position > 10'\n" +
			"cdc2delta delete s3://lake/sales/dbo/customers --where 'customer_id = 42' --dry-run",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			return dmlFlags(fs, e, deltalog.OpDelete, nil)
		},
	}
}

// dmlFlags declares the flags UPDATE and DELETE share and returns the command.
func dmlFlags(fs *flag.FlagSet, e *env, op string, set *listFlag) func(context.Context, []string) error {
	sf := addStoreFlags(fs, e)
	where := fs.String("where", "", "the predicate in Spark SQL; NULL never matches (position > 10 skips NULL positions). Required:\n"+
		"--where true changes every row")
	dryRun := fs.Bool("dry-run", false, "print how many rows and files match, and a few of the rows; commit nothing")
	sample := fs.Int("sample", 5, "with --dry-run, how many matching rows to print")
	return func(ctx context.Context, args []string) error {
		loc, err := oneTable(args)
		if err != nil {
			return err
		}
		if strings.TrimSpace(*where) == "" {
			return usagef("give --where PREDICATE (--where true for every row)")
		}
		if set != nil && len(*set) == 0 {
			return usagef("give at least one --set 'column = expression'")
		}
		if *sample < 0 {
			return usagef("--sample must not be negative")
		}
		t, snap, err := sf.openLatest(ctx, loc)
		if err != nil {
			return err
		}
		opts := tableops.DMLOptions{DryRun: *dryRun}
		if *dryRun {
			opts.SampleRows = *sample
		}
		cdc := false
		switch rules, err := cdctable.ManualEditsFor(snap.Metadata(), t.Store(), nil); {
		case err == nil:
			cdc = true
			opts.Protected, opts.OnDelete = rules.Protected(), rules.RecordDeletes
		case errors.Is(err, cdctable.ErrHistoryTable):
			return historyRefusal(loc, op+" edits")
		case !errors.Is(err, cdctable.ErrNotCDCTable):
			return fmt.Errorf("reading %s: %w", loc, err)
		}
		var m tableops.DMLMetrics
		if set != nil {
			m, err = tableops.Update(ctx, t, snap, *set, *where, opts)
		} else {
			m, err = tableops.Delete(ctx, t, snap, *where, opts)
		}
		if err != nil {
			return dmlError(err, *where, op, loc)
		}
		return printDML(e.stdout, op, loc, m, *dryRun, cdc)
	}
}

// dmlError makes an expression that does not bind a usage error naming its flag.
func dmlError(err error, where, op, loc string) error {
	var e *sqlexpr.Error
	if errors.As(err, &e) && !errors.Is(err, sqlexpr.ErrEval) {
		flagName := "--set"
		if e.Expr == where || e.Expr == "" {
			flagName = "--where"
		}
		return usagef("%s: %v", flagName, err)
	}
	return fmt.Errorf("%s on %s: %w", op, loc, err)
}

func printDML(w io.Writer, op, loc string, m tableops.DMLMetrics, dryRun, cdc bool) error {
	rows, verb := m.NumDeletedRows, "deleted"
	if op == deltalog.OpUpdate {
		rows, verb = m.NumUpdatedRows, "updated"
	}
	scanned := fmt.Sprintf("%s read, %s skipped by partition values and statistics",
		plural(m.FilesScanned, "file"), plural(m.FilesPruned, "file"))
	if dryRun {
		fmt.Fprintf(w, "dry run: %s in %s match (%s); nothing committed\n",
			plural(int(rows), "row"), plural(m.MatchedFiles, "file"), scanned)
		if len(m.Sample) > 0 {
			fmt.Fprintf(w, "\nmatching rows, as they are now (first %d):\n", len(m.Sample))
			names := make([]string, len(m.Schema.Fields))
			for i, f := range m.Schema.Fields {
				names[i] = f.Name
			}
			rw := newRowWriter("table", names, w)
			for _, r := range m.Sample {
				vals := make([]any, len(r))
				for i, v := range r {
					vals[i] = displayValue(m.Schema.Fields[i].Type, v)
				}
				if err := rw.row(vals); err != nil {
					return err
				}
			}
			return rw.end(len(m.Sample))
		}
		return nil
	}
	if m.Version < 0 {
		fmt.Fprintf(w, "no row matches (%s); nothing committed\n", scanned)
		return nil
	}
	fmt.Fprintf(w, "%s %s in %s of %s as version %d (%s)\n", verb, plural(int(rows), "row"), plural(m.MatchedFiles, "file"), loc, m.Version, scanned)
	fmt.Fprintf(w, "files: %d removed, %d added; deletion vectors: %d added, %d updated; %s copied; %s",
		m.NumRemovedFiles, m.NumAddedFiles, m.NumDeletionVectorsAdded, m.NumDeletionVectorsUpdated, plural(int(m.NumCopiedRows), "row"), plural(int(m.NumAddedChangeFiles), "change data file"))
	if m.Retries > 0 {
		fmt.Fprintf(w, "; planned again %s after losing commit races", plural(m.Retries, "time"))
	}
	fmt.Fprintln(w)
	if cdc {
		if op == deltalog.OpUpdate {
			fmt.Fprintln(w, "cdc2delta maintains this table: the rows keep their _cdc_position, so the next newer source change of a key overwrites them")
		} else {
			fmt.Fprintln(w, "cdc2delta maintains this table: the deleted keys are remembered at their positions (tombstones), so older re-delivered events cannot bring them back; newer source changes still do")
		}
	}
	return nil
}
