package cdctable

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStartOffset(t *testing.T) {
	ours := func(off int64) *CommittedOffset { return &CommittedOffset{Offset: off, Meta: GroupMeta(3)} }
	operator := func(off int64) *CommittedOffset { return &CommittedOffset{Offset: off} }
	tests := []struct {
		name       string
		txn        int64
		hasTxn     bool
		committed  *CommittedOffset
		want       int64
		wantReason StartReason
	}{
		{"nothing", 0, false, nil, -1, StartFromReset},
		{"group only", 0, false, operator(42), 42, StartFromGroup},
		{"txn only", 9, true, nil, 10, StartFromTxn},
		{"txn equals group", 9, true, ours(10), 10, StartFromTxn},
		{"stale commit of ours", 9, true, ours(4), 10, StartFromTxn},
		{"operator reset below txn", 9, true, operator(0), 0, StartReplay},
		{"group ahead of delta", 9, true, operator(50), 10, StartAheadOfDelta},
		{"txn at offset zero", 0, true, nil, 1, StartFromTxn},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := StartOffset(tc.txn, tc.hasTxn, tc.committed)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.wantReason, why)
		})
	}
}
