package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
)

// version is the release this binary is, stamped by scripts/release.sh with
// -ldflags "-X main.version=vX.Y.Z". It is the one place a release's version is set;
// empty in other builds, which fall back to the module version (buildVersion).
var version string

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
				info, _ := debug.ReadBuildInfo() // nil without module support
				fmt.Fprintln(e.stdout, "cdc2delta", buildVersion(version, info))
				return nil
			}
		},
	}
}

// buildVersion is the version to report: the stamped one; else the main module's
// version, which `go install …/cmd/cdc2delta@vX` sets to vX; else "devel". The VCS
// revision follows when the build recorded one (builds inside a git checkout).
func buildVersion(stamped string, info *debug.BuildInfo) string {
	v := stamped
	if v == "" && info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	if v == "" {
		v = "devel"
	}
	if info == nil {
		return v
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += ", modified"
	}
	return v + " (revision " + rev + ")"
}
