package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnknownCommandSuggests: a mistyped command names the one it most likely meant,
// and a name near none names none.
func TestUnknownCommandSuggests(t *testing.T) {
	tests := []struct {
		typed, want string // want "": no suggestion
	}{
		{"stauts", "status"},     // swapped letters
		{"replya", "replay"},     // swapped letters
		{"verison", "version"},   // swapped letters
		{"optimise", "optimize"}, // spelling
		{"histroy", "history"},
		{"vaccum", "vacuum"},
		{"rn", "run"},
		{"valid", "validate"}, // prefix of one command
		{"des", "describe"},   // prefix of one command
		{"frobnicate", ""},
		{"x", ""},
		{"s", ""}, // a prefix of several: no guess
	}
	for _, tt := range tests {
		t.Run(tt.typed, func(t *testing.T) {
			r := cli(t, tt.typed)
			require.Equal(t, exitUsage, r.code)
			require.Contains(t, r.stderr, `unknown command "`+tt.typed+`"`)
			require.Contains(t, r.stderr, "Commands:")
			if tt.want == "" {
				require.NotContains(t, r.stderr, "Did you mean")
				return
			}
			require.Contains(t, r.stderr, "Did you mean this?\n  cdc2delta "+tt.want+"\n")
		})
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"run", "run", 0},
		{"", "run", 3},
		{"stauts", "status", 1},
		{"optimise", "optimize", 1},
		{"vaccum", "vacuum", 1},
		{"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, editDistance(tt.a, tt.b), "%s → %s", tt.a, tt.b)
	}
}

// TestHelpSpellsFlagsAsDocs: every command's help spells its flags --name, as the docs
// and the error messages do.
func TestHelpSpellsFlagsAsDocs(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, c.name, "--help")
			require.Equal(t, exitOK, r.code, r.stderr)
			for line := range strings.Lines(r.stdout) {
				require.False(t, strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --"), "flag spelled with one dash: %q", line)
			}
		})
	}
	r := cli(t, "show", "--help")
	require.Contains(t, r.stdout, "\n  --limit int\n")
}
