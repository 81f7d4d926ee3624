package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/cdc2delta/cdc2delta/internal/buildinfo"
)

func versionCommand() command {
	return command{
		name:    "version",
		summary: "print the version of this binary",
		example: "cdc2delta version",
		flags: func(_ *flag.FlagSet, e *env) func(context.Context, []string) error {
			return func(_ context.Context, args []string) error {
				if len(args) > 0 {
					return usagef("version takes no arguments, got %q", args)
				}
				fmt.Fprintln(e.stdout, "cdc2delta", buildinfo.Describe())
				return nil
			}
		},
	}
}
