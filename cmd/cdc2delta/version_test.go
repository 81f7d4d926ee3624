package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersionCommand: version and --version print one line naming the binary, and
// version is listed in the help.
func TestVersionCommand(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		r := exe(t, arg)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Regexp(t, `^cdc2delta \S+( \(revision [0-9a-f]+(, modified)?\))?\n$`, r.stdout)
	}
	r := exe(t, "--help")
	require.Regexp(t, `(?m)^  version +print the version`, r.stdout)
	r = exe(t, "version", "extra")
	require.Equal(t, exitUsage, r.code)
}
