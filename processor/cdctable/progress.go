package cdctable

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// ProgressField is the commitInfo field in which a commit records what it
// applied, so that how far a table is complete can be worked out from the
// table alone, whichever process wrote it (ADR 0029).
const ProgressField = "cdc2delta.progress"

// Progress is what one commit applied, beyond its rows.
type Progress struct {
	// Partitions holds, per partition (by txn app id), the highest position
	// the commit applied.
	Partitions map[string]PartitionProgress `json:"partitions,omitempty"`
	// Snapshots holds, per partition, the highest snapshot row the commit
	// applied (initial snapshots, not incremental ones); SnapshotEnds the
	// snapshot end markers (last_in_data_collection, last) it applied.
	Snapshots    []PartitionProgress `json:"snapshots,omitempty"`
	SnapshotEnds []PartitionProgress `json:"snapshotEnds,omitempty"`
	// Tx holds, per transaction id, the data_collection_orders of the
	// commit's events of it, as inclusive ranges.
	Tx map[string][][2]int64 `json:"tx,omitempty"`
	// TxMillis holds each transaction's source commit time.
	TxMillis map[string]int64 `json:"txMs,omitempty"`
}

// PartitionProgress is one applied change's place.
type PartitionProgress struct {
	AppID    string `json:"appId,omitempty"`
	Pos      string `json:"pos"` // codecs.Position.Hex
	Millis   int64  `json:"ms"`  // source commit time
	Snapshot string `json:"snapshot,omitempty"`
}

// Empty reports whether there is nothing to record.
func (p Progress) Empty() bool { return len(p.Partitions) == 0 && len(p.Tx) == 0 }

// ReadProgress returns what the commit of ci recorded; ok is false for a
// commit that recorded nothing (another writer's, or one that applied no
// change).
func ReadProgress(ci *deltalog.CommitInfo) (p Progress, ok bool, err error) {
	if ci == nil {
		return p, false, nil
	}
	s := deltalog.OperationValues(ci.Extra).Text(ProgressField)
	if s == "" {
		return p, false, nil
	}
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return p, false, fmt.Errorf("reading commitInfo %s: %w", ProgressField, err)
	}
	return p, true, nil
}

// Orders lists a transaction's recorded orders.
func (p Progress) Orders(txID string) []int64 {
	var out []int64
	for _, r := range p.Tx[txID] {
		for o := r[0]; o <= r[1]; o++ {
			out = append(out, o)
		}
	}
	return out
}

// TxIDs lists the recorded transactions, sorted.
func (p Progress) TxIDs() []string { return slices.Sorted(maps.Keys(p.Tx)) }
