package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

func restoreCommand() command {
	return command{
		name:    "restore",
		args:    "TABLE",
		summary: "restore the table to an earlier version or time, txn positions included (RESTORE)",
		example: "cdc2delta restore --version 12 ./tables/sales/dbo/orders\n" +
			"# the processor then replays each partition from the offsets version 12 had applied",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			tt := addRestoreTargetFlags(fs)
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				if !tt.set() {
					return usagef("give --version N or --timestamp T")
				}
				t, cur, err := sf.openLatest(ctx, loc)
				if torn, ok := errors.AsType[*deltalog.TornCommitError](err); ok {
					// No version can be read past it, but none builds on it.
					return fmt.Errorf("%w\nmove %s out of the table: the table is then whole at version %d "+
						"(restore again from there if you still need another version)", err, torn.Err.Path, torn.Version-1)
				}
				if err != nil {
					return err
				}
				target, err := tt.snapshot(ctx, t, loc)
				if err != nil {
					return err
				}
				m, err := tableops.Restore(ctx, t, cur, target, tableops.RestoreOptions{Timestamp: tt.timestamp})
				if errors.Is(err, tableops.ErrSameVersion) {
					return usagef("the table is already at version %d", cur.Version())
				}
				if err != nil {
					return fmt.Errorf("restoring %s to version %d: %w", loc, target.Version(), err)
				}
				fmt.Fprintf(e.stdout, "restored %s to version %d as version %d: %s removed, %s restored, %s now\n",
					loc, target.Version(), m.Version, plural(int(m.NumRemovedFiles), "file"), plural(int(m.NumRestoredFiles), "file"), plural(int(m.NumOfFilesAfterRestore), "file"))
				return nil
			}
		},
	}
}
