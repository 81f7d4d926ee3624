package processor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

func TestStartOffset(t *testing.T) {
	ours := func(off int64) *committedOffset { return &committedOffset{Offset: off, Meta: cdctable.GroupMeta(3)} }
	operator := func(off int64) *committedOffset { return &committedOffset{Offset: off} }
	tests := []struct {
		name       string
		txn        int64
		hasTxn     bool
		committed  *committedOffset
		want       int64
		wantReason startReason
	}{
		{"nothing", 0, false, nil, -1, startFromReset},
		{"group only", 0, false, operator(42), 42, startFromGroup},
		{"txn only", 9, true, nil, 10, startFromTxn},
		{"txn equals group", 9, true, ours(10), 10, startFromTxn},
		{"stale commit of ours", 9, true, ours(4), 10, startFromTxn},
		{"operator reset below txn", 9, true, operator(0), 0, startReplay},
		{"group ahead of delta", 9, true, operator(50), 10, startAheadOfDelta},
		{"txn at offset zero", 0, true, nil, 1, startFromTxn},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := startOffset(tc.txn, tc.hasTxn, tc.committed)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.wantReason, why)
		})
	}
}
