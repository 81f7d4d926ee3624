package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

func vacuumCommand() command {
	return command{
		name:    "vacuum",
		args:    "TABLE",
		summary: "delete files no live version references and older than the retention (VACUUM)",
		example: "cdc2delta vacuum --dry-run ./tables/sales/dbo/orders\ncdc2delta vacuum --retain 336h s3://lake/sales/dbo/orders",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			var retain durationFlag
			fs.Var(&retain, "retain", "keep files removed or written within this `duration`, e.g. 336h (default: the table's\n"+
				"delta.deletedFileRetentionDuration, 7 days (168h) when the table does not set it)")
			dryRun := fs.Bool("dry-run", false, "list the files that would be deleted, delete nothing")
			force := fs.Bool("force", false, "allow a retention shorter than the table's (breaks time travel and concurrent readers)")
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				t, snap, err := sf.openLatest(ctx, loc)
				if err != nil {
					return err
				}
				keep, err := shallowCloneFiles(ctx, sf, e, t)
				if err != nil {
					return fmt.Errorf("vacuuming %s: %w", loc, err)
				}
				opts := tableops.VacuumOptions{SkipRetentionCheck: *force, DryRun: *dryRun, Keep: keep}
				if retain.set {
					opts.Retention = &retain.d
				}
				res, err := tableops.Vacuum(ctx, t, snap, opts)
				var re *tableops.RetentionError
				if errors.As(err, &re) {
					return usagef("--retain %s is shorter than the table's delta.deletedFileRetentionDuration (%s): "+
						"readers of older versions and concurrent writers could lose files; add --force to do it anyway",
						re.Retention, re.TableRetention)
				}
				if err != nil {
					return fmt.Errorf("vacuuming %s: %w", loc, err)
				}
				printVacuum(e, res, *dryRun)
				return nil
			}
		},
	}
}

// printVacuum lists a dry run's files, then sums up.
func printVacuum(e *env, res tableops.VacuumResult, dryRun bool) {
	if dryRun {
		for _, p := range res.Files {
			fmt.Fprintln(e.stdout, p)
		}
		fmt.Fprintf(e.stdout, "would delete %s (%s) older than %s\n", plural(len(res.Files), "file"), humanBytes(res.SizeOfDataToDelete), res.Retention)
		return
	}
	fmt.Fprintf(e.stdout, "deleted %s (%s) older than %s\n", plural(res.NumDeletedFiles, "file"), humanBytes(res.SizeOfDataToDelete), res.Retention)
}
