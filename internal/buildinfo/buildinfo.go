// Package buildinfo says which release a binary is: the version the
// `version` command prints and every Delta commit records in
// commitInfo.engineInfo, so that a table's history names the build that
// wrote each version.
package buildinfo

import "runtime/debug"

// stamped is the release, set by scripts/release.sh with -ldflags
// "-X github.com/cdc2delta/cdc2delta/internal/buildinfo.stamped=vX.Y.Z". It is
// the one place a release's version is set, and is never written at run time.
var stamped string

// Version is the release this binary is: the stamped version; else the main
// module's, which `go install …/cmd/cdc2delta@vX` sets to vX; else "devel".
func Version() string {
	info, _ := debug.ReadBuildInfo() // nil without module support
	return version(stamped, info)
}

// Describe is Version followed by the VCS revision when the build recorded one
// (builds inside a git checkout).
func Describe() string {
	info, _ := debug.ReadBuildInfo()
	return describe(stamped, info)
}

func version(stamped string, info *debug.BuildInfo) string {
	switch {
	case stamped != "":
		return stamped
	case info != nil && info.Main.Version != "" && info.Main.Version != "(devel)":
		return info.Main.Version
	}
	return "devel"
}

func describe(stamped string, info *debug.BuildInfo) string {
	v := version(stamped, info)
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
