package cdctable

// StartReason says why a partition starts where it does; it is logged.
type StartReason string

const (
	StartFromTxn      StartReason = "delta txn"
	StartReplay       StartReason = "operator offset reset (replay)"
	StartFromGroup    StartReason = "group committed offset"
	StartFromReset    StartReason = "reset policy"
	StartAheadOfDelta StartReason = "delta txn (group offset ahead ignored)"
)

// CommittedOffset is a group's committed offset for one partition.
type CommittedOffset struct {
	Offset int64
	Meta   string
}

// StartOffset decides where a newly assigned partition resumes (ADR 0020).
// txn is the table's last applied offset (ok false: none); committed is the
// group's (nil: none). It returns the next offset to read, or -1 to use the
// reset policy.
func StartOffset(txn int64, hasTxn bool, committed *CommittedOffset) (int64, StartReason) {
	switch {
	case hasTxn && committed != nil && committed.Offset < txn+1 && !IsGroupMeta(committed.Meta):
		// Kafka's tools reset the group below the table: replay from
		// there; the txn and per-row position guards keep it idempotent.
		return committed.Offset, StartReplay
	case hasTxn && committed != nil && committed.Offset > txn+1:
		// Skipping ahead of the table would lose changes; the txn is the
		// truth.
		return txn + 1, StartAheadOfDelta
	case hasTxn:
		return txn + 1, StartFromTxn
	case committed != nil:
		return committed.Offset, StartFromGroup
	default:
		return -1, StartFromReset
	}
}
