package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/config"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "alpha", "EMPTY": "", "B_2": "b"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "alpha"},
		{in: "x${A}y${B_2}z", want: "xalphaybz"},
		{in: "${MISSING:-def}", want: "def"},
		{in: "${EMPTY:-def}", want: "def"},
		{in: "${EMPTY}", want: ""},
		{in: "${A:-def}", want: "alpha"},
		{in: "${MISSING:-}", want: ""},
		{in: "$$", want: "$"},
		{in: "$${A}", want: "${A}"},
		{in: "pa$word$", want: "pa$word$"},
		{in: "${MISSING}", err: "${MISSING} is not set"},
		{in: "${A", err: "unterminated"},
		{in: "${1A}", err: "not a variable name"},
		{in: "${}", err: "not a variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := config.Expand(tt.in, lookup)
			if tt.err != "" {
				require.ErrorIs(t, err, config.ErrEnv)
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "${A}", "$$", "${A:-x}", "${", "a$b", "${A}${B:-${C}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := config.Expand(s, func(string) (string, bool) { return "v", true })
		if err != nil {
			return
		}
		// Without "$" in the input nothing changes.
		if !strings.Contains(s, "$") {
			require.Equal(t, s, got)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("kafka: {brokers: [a:1]}\n"))
	f.Add([]byte("batch: {max_bytes: 1MiB, max_age: 1s}\n"))
	f.Add([]byte("tables: {overrides: [{topic: a, delete_mode: soft}]}\n"))
	f.Add([]byte("- [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := config.Parse(data, func(string) (string, bool) { return "", false })
		if err == nil {
			_ = c.Validate() // must not panic; any result is fine for random input
		}
	})
}
