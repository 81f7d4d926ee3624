package control

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBehind: how far a table's complete_through commit is behind the newest commit
// applied to any table, never negative (a table is complete through transactions
// after its own last change when they did not touch it), unknown without both times.
func TestBehind(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2024, 3, 15, 0, 0, s, 0, time.UTC) }
	rows := []Row{{LastAppliedCommit: at(2)}, {LastAppliedCommit: at(9)}, {}}
	newest := NewestApplied(rows)
	require.Equal(t, at(9), newest)
	tests := []struct {
		name     string
		newest   time.Time
		complete time.Time
		want     time.Duration
		known    bool
	}{
		{"behind", newest, at(5), 4 * time.Second, true},
		{"complete through the newest", newest, at(9), 0, true},
		{"complete past the newest applied", newest, at(12), 0, true},
		{"no complete_through", newest, time.Time{}, 0, false},
		{"nothing applied", time.Time{}, at(5), 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Behind(tc.newest, tc.complete)
			require.Equal(t, tc.known, ok)
			require.Equal(t, tc.want, got)
		})
	}
}
