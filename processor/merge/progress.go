package merge

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// progressField is the commitInfo field in which a commit records what it
// applied, so that how far a table is complete can be worked out from the
// table alone, whichever process wrote it (ADR 0029).
const progressField = "cdc2delta.progress"

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

// progressOf summarizes the records a commit applies.
func progressOf(recs []Record) Progress {
	var p Progress
	best := map[TopicPartition]*codecs.Change{}
	snaps := map[TopicPartition]*codecs.Change{}
	orders := map[string][]int64{}
	for i := range recs {
		c := &recs[i].Change
		if cur := best[recs[i].TopicPartition]; cur == nil || c.Pos.Compare(cur.Pos) > 0 {
			best[recs[i].TopicPartition] = c
		}
		switch c.Snapshot {
		case "", "false", "incremental":
		case "last_in_data_collection", "last":
			p.SnapshotEnds = append(p.SnapshotEnds, PartitionProgress{AppID: recs[i].AppID(), Pos: c.Pos.Hex(), Millis: c.CommitMillis, Snapshot: c.Snapshot})
		default:
			if cur := snaps[recs[i].TopicPartition]; cur == nil || c.Pos.Compare(cur.Pos) > 0 {
				snaps[recs[i].TopicPartition] = c
			}
		}
		if c.TxID != "" && c.TxOrder > 0 {
			orders[c.TxID] = append(orders[c.TxID], c.TxOrder)
			if p.TxMillis == nil {
				p.TxMillis = map[string]int64{}
			}
			p.TxMillis[c.TxID] = c.CommitMillis
		}
	}
	if len(best) > 0 {
		p.Partitions = make(map[string]PartitionProgress, len(best))
		for tp, c := range best {
			p.Partitions[tp.AppID()] = PartitionProgress{Pos: c.Pos.Hex(), Millis: c.CommitMillis, Snapshot: c.Snapshot}
		}
	}
	for _, tp := range slices.SortedFunc(maps.Keys(snaps), func(a, b TopicPartition) int { return strings.Compare(a.AppID(), b.AppID()) }) {
		c := snaps[tp]
		p.Snapshots = append(p.Snapshots, PartitionProgress{AppID: tp.AppID(), Pos: c.Pos.Hex(), Millis: c.CommitMillis, Snapshot: c.Snapshot})
	}
	if len(orders) > 0 {
		p.Tx = make(map[string][][2]int64, len(orders))
		for id, os := range orders {
			slices.Sort(os)
			var rs [][2]int64
			for _, o := range slices.Compact(os) {
				if n := len(rs); n > 0 && rs[n-1][1]+1 == o {
					rs[n-1][1] = o
				} else {
					rs = append(rs, [2]int64{o, o})
				}
			}
			p.Tx[id] = rs
		}
	}
	return p
}

// empty reports whether there is nothing to record.
func (p Progress) empty() bool { return len(p.Partitions) == 0 && len(p.Tx) == 0 }

// ReadProgress returns what the commit of ci recorded; ok is false for a
// commit that recorded nothing (another writer's, or one that applied no
// change).
func ReadProgress(ci *deltalog.CommitInfo) (p Progress, ok bool, err error) {
	if ci == nil {
		return p, false, nil
	}
	s := deltalog.OperationValues(ci.Extra).Text(progressField)
	if s == "" {
		return p, false, nil
	}
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return p, false, fmt.Errorf("reading commitInfo %s: %w", progressField, err)
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
