package main

import (
	"context"
	"flag"
	"fmt"
)

func checkpointCommand() command {
	return command{
		name:    "checkpoint",
		args:    "TABLE",
		summary: "write a checkpoint at the latest version so readers replay fewer commits",
		example: "cdc2delta checkpoint ./tables/sales/dbo/orders",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				t, snap, err := sf.openLatest(ctx, loc)
				if err != nil {
					return err
				}
				lc, err := t.Checkpoint(ctx, snap)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "checkpoint written at version %d (%s)\n", lc.Version, plural(int(lc.Size), "action"))
				return nil
			}
		},
	}
}
