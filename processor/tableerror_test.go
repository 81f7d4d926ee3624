package processor

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestHint(t *testing.T) {
	missing := &deltalog.CorruptFileError{Path: "part-0.parquet", Err: fmt.Errorf("opening data file: %w", deltalog.ErrNotExist)}
	tests := []struct {
		name  string
		err   error
		phase string
		want  string
	}{
		// A data file gone comes as a CorruptFileError around ErrNotExist.
		{"missing data file", missing, "opening", "a file the table's log references is missing"},
		// Nothing can be read or restored past a corrupt log file; no
		// version builds on a torn latest commit.
		{"corrupt log file", &deltalog.CorruptFileError{Path: "_delta_log/3.json", Err: errors.New("unexpected end of JSON input")}, "opening",
			"restore it from a backup (`cdc2delta restore` cannot read the log past it either)"},
		{"torn latest commit", fmt.Errorf("loading: %w", &deltalog.TornCommitError{Version: 3, Err: &deltalog.CorruptFileError{Path: "_delta_log/3.json"}}), "opening",
			"latest commit _delta_log/3.json is torn: move that file out of the table; the table is then whole at version 2"},
		{"corrupt data file", &deltalog.CorruptFileError{Path: "part-0.parquet", Err: errors.New("bad magic")}, "opening",
			"restore it from a backup, or `cdc2delta restore` the table to a version before it"},
		// Every stop says what to do, whatever its cause.
		{"unknown while opening", errors.New("boom"), "opening", "the table could not be opened"},
		{"unknown while applying", errors.New("boom"), "applying", "an error that retrying does not cure"},
		{"unknown while dead-lettering", errors.New("boom"), "dead-lettering", "the record could not be dead-lettered"},
		// Bad input: the caller names the record and the policy choices.
		{"unknown while decoding", errors.New("boom"), "decoding", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := hint(tc.err, tc.phase)
			if tc.want == "" {
				require.Empty(t, h)
				return
			}
			require.Contains(t, h, tc.want)
			require.Contains(t, h, "restart")
		})
	}
}
