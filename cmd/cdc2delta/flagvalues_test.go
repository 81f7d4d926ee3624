package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersionFlagRange checks every command that takes --version: a version below -1 is
// a usage error naming the flag, never "the latest version".
func TestVersionFlagRange(t *testing.T) {
	dir := t.TempDir()
	testTable(t, dir)
	var withVersion []string
	for _, c := range commands() {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.flags(fs, &env{stdout: io.Discard, stderr: io.Discard, lookup: func(string) (string, bool) { return "", false }})
		if fs.Lookup("version") != nil {
			withVersion = append(withVersion, c.name)
		}
	}
	require.ElementsMatch(t, []string{"show", "describe", "restore", "clone"}, withVersion)
	for _, name := range withVersion {
		t.Run(name, func(t *testing.T) {
			for _, v := range []string{"-2", "-9223372036854775808", "x"} {
				r := cli(t, name, "--version", v, dir)
				require.Equal(t, exitUsage, r.code, "--version %s: %s", v, r.stderr)
				require.Contains(t, r.stderr, `invalid value "`+v+`" for flag -version: `)
			}
		})
	}

	// -1, the old documented default, still means the latest version.
	r := cli(t, "describe", "--version", "-1", "--json", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, `"version": 2`)
	r = cli(t, "restore", "--version", "-1", dir)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "give --version N or --timestamp T")
}

func TestRetainFlag(t *testing.T) {
	dir := t.TempDir()
	testTable(t, dir)
	tests := []struct {
		name, value, want string
	}{
		{"negative", "-1h", `invalid value "-1h" for flag -retain: must not be negative`},
		{"no unit", "7", `invalid value "7" for flag -retain: not a duration`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := cli(t, "vacuum", "--dry-run", "--retain", tc.value, dir)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
		})
	}
}

// TestFlagHelp checks that help texts say what the flags do and print no sentinel
// defaults.
func TestFlagHelp(t *testing.T) {
	tests := []struct {
		command string
		want    []string
		notWant []string
	}{
		{"restore", []string{"-version N\n    \trestore the table to version N\n", "restore the table to the latest version committed at or before this time"},
			[]string{"read the table", "(default"}},
		{"vacuum", []string{"-retain duration\n", "(default: the table's\n    \tdelta.deletedFileRetentionDuration, 7 days (168h) when the table does not set it)\n"},
			[]string{"-1ns", "(default -"}},
		{"show", []string{"-version N\n    \tread the table as of version N (default: the latest)\n"}, []string{"(default -1)"}},
		{"describe", []string{"-version N\n    \tread the table as of version N (default: the latest)\n"}, []string{"(default -1)"}},
	}
	for _, tc := range tests {
		t.Run(tc.command, func(t *testing.T) {
			r := cli(t, tc.command, "--help")
			require.Equal(t, exitOK, r.code, r.stderr)
			for _, w := range tc.want {
				require.Contains(t, r.stdout, w)
			}
			for _, w := range tc.notWant {
				require.False(t, strings.Contains(r.stdout, w), "help of %s has %q:\n%s", tc.command, w, r.stdout)
			}
		})
	}
}
