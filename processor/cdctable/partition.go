package cdctable

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TopicPartition names one Kafka partition, the source of a table's rows
// whose offset a table records. (It keeps the two-word name so that a type
// embedding it still has its Topic and Partition fields promoted.)
type TopicPartition struct {
	Topic     string
	Partition int32
}

// appIDPrefix starts the Delta txn application id of every partition.
const appIDPrefix = "cdc2delta/"

// AppID is the Delta txn application id recording this partition's offset.
func (tp TopicPartition) AppID() string {
	return fmt.Sprintf("%s%s/%d", appIDPrefix, tp.Topic, tp.Partition)
}

// TagName is the partition's name in PartitionsTag ("topic/partition").
func (tp TopicPartition) TagName() string {
	return tp.Topic + "/" + strconv.FormatInt(int64(tp.Partition), 10)
}

// ParseAppID inverts TopicPartition.AppID. Kafka topic names cannot hold
// '/', so the last one separates the partition.
func ParseAppID(id string) (TopicPartition, bool) {
	rest, ok := strings.CutPrefix(id, appIDPrefix)
	if !ok {
		return TopicPartition{}, false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return TopicPartition{}, false
	}
	p, err := strconv.ParseInt(rest[i+1:], 10, 32)
	if err != nil {
		return TopicPartition{}, false
	}
	return TopicPartition{Topic: rest[:i], Partition: int32(p)}, true
}

// Offsets decodes the cdc2delta txn app ids of a snapshot: the last offset
// applied per partition.
func Offsets(snap *deltalog.Snapshot) map[TopicPartition]int64 {
	out := map[TopicPartition]int64{}
	for id, txn := range snap.Txns() {
		tp, ok := ParseAppID(id)
		if ok {
			out[tp] = txn.Version
		}
	}
	return out
}

// GroupMetaPrefix starts the metadata of every consumer-group offset
// cdc2delta commits. Kafka's own tools commit empty metadata, which is how an
// operator's offset reset is told apart from a stale commit of ours (ADR 0020).
const GroupMetaPrefix = "cdc2delta:v="

// GroupMeta is the group-offset metadata for a position applied in Delta
// table version v.
func GroupMeta(v int64) string { return GroupMetaPrefix + strconv.FormatInt(v, 10) }

// IsGroupMeta reports whether group-offset metadata was written by cdc2delta.
func IsGroupMeta(meta string) bool { return strings.HasPrefix(meta, GroupMetaPrefix) }
