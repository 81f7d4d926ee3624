package control

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// TestCutVersion picks, for a group's cut, the first version complete
// through it and says whether it holds changes after the cut.
func TestCutVersion(t *testing.T) {
	restarted := tableRow("t", 9, 12, 0)
	restarted.LastApplied = codecs.Position{}
	st := &State{Versions: map[string][]Row{"t": {tableRow("t", 3, 4, 4), tableRow("t", 5, 6, 8), tableRow("t", 7, 10, 10), restarted}}}
	tests := []struct {
		name    string
		cut     int
		version int64
		exact   Exactness
		ok      bool
	}{
		{"on a version", 4, 3, Exact, true},
		{"between versions", 5, 5, NotExact, true},
		{"holds more than the cut", 6, 5, NotExact, true},
		{"exact at the end", 10, 7, Exact, true},
		{"after a restart", 11, 9, ExactUnknown, true},
		{"past every version", 13, 0, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, exact, ok := st.CutVersion("t", at(tc.cut))
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.exact, exact)
			require.Equal(t, tc.version, r.DeltaVersion)
		})
	}
	_, _, ok := st.CutVersion("other", at(1))
	require.False(t, ok, "a table without version rows")
}
