package deltalog_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestLiveRows counts a file's rows less those its deletion vector marks.
func TestLiveRows(t *testing.T) {
	dv := &deltalog.DeletionVector{Cardinality: 3}
	tests := []struct {
		name    string
		add     deltalog.Add
		want    int64
		ok, bad bool
	}{
		{"no stats", deltalog.Add{}, 0, false, false},
		{"no deletion vector", deltalog.Add{Stats: `{"numRecords":10}`}, 10, true, false},
		{"deletion vector", deltalog.Add{Stats: `{"numRecords":10}`, DeletionVector: dv}, 7, true, false},
		{"no numRecords", deltalog.Add{Stats: `{"minValues":{}}`}, 0, true, false},
		{"bad stats", deltalog.Add{Stats: `{"numRecords":-1}`}, 0, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, ok, err := tc.add.LiveRows()
			require.Equal(t, tc.bad, err != nil, "%v", err)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, n)
		})
	}
}
