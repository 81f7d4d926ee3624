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
		{"corrupt file", &deltalog.CorruptFileError{Path: "_delta_log/3.json", Err: errors.New("unexpected end of JSON input")}, "opening", "a file of the table is unreadable"},
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
