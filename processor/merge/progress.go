package merge

import (
	"maps"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// progressOf summarizes the records a commit applies.
func progressOf(recs []Record) cdctable.Progress {
	var p cdctable.Progress
	best := map[cdctable.TopicPartition]*codecs.Change{}
	snaps := map[cdctable.TopicPartition]*codecs.Change{}
	orders := map[string][]int64{}
	for i := range recs {
		c := &recs[i].Change
		if cur := best[recs[i].TopicPartition]; cur == nil || c.Pos.Compare(cur.Pos) > 0 {
			best[recs[i].TopicPartition] = c
		}
		switch c.Snapshot {
		case "", "false", "incremental":
		case "last_in_data_collection", "last":
			p.SnapshotEnds = append(p.SnapshotEnds, cdctable.PartitionProgress{AppID: recs[i].AppID(), Pos: c.Pos.Hex(), Millis: c.CommitMillis, Snapshot: c.Snapshot})
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
		p.Partitions = make(map[string]cdctable.PartitionProgress, len(best))
		for tp, c := range best {
			p.Partitions[tp.AppID()] = cdctable.PartitionProgress{Pos: c.Pos.Hex(), Millis: c.CommitMillis, Snapshot: c.Snapshot}
		}
	}
	for _, tp := range slices.SortedFunc(maps.Keys(snaps), func(a, b cdctable.TopicPartition) int { return strings.Compare(a.AppID(), b.AppID()) }) {
		c := snaps[tp]
		p.Snapshots = append(p.Snapshots, cdctable.PartitionProgress{AppID: tp.AppID(), Pos: c.Pos.Hex(), Millis: c.CommitMillis, Snapshot: c.Snapshot})
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
