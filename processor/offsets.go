package processor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// startReason says why a partition starts where it does; it is logged.
type startReason string

const (
	startFromTxn      startReason = "delta txn"
	startReplay       startReason = "operator offset reset (replay)"
	startFromGroup    startReason = "group committed offset"
	startFromReset    startReason = "reset policy"
	startAheadOfDelta startReason = "delta txn (group offset ahead ignored)"
)

// committedOffset is a group's committed offset for one partition.
type committedOffset struct {
	Offset int64
	Meta   string
}

// startOffset decides where a newly assigned partition resumes (ADR 0020).
// txn is the table's last applied offset (ok false: none); committed is the
// group's (nil: none). It returns the next offset to read, or -1 to use the
// reset policy.
func startOffset(txn int64, hasTxn bool, committed *committedOffset) (int64, startReason) {
	switch {
	case hasTxn && committed != nil && committed.Offset < txn+1 && !cdctable.IsGroupMeta(committed.Meta):
		// Kafka's tools reset the group below the table: replay from
		// there; the txn and per-row position guards keep it idempotent.
		return committed.Offset, startReplay
	case hasTxn && committed != nil && committed.Offset > txn+1:
		// Skipping ahead of the table would lose changes; the txn is the
		// truth.
		return txn + 1, startAheadOfDelta
	case hasTxn:
		return txn + 1, startFromTxn
	case committed != nil:
		return committed.Offset, startFromGroup
	default:
		return -1, startFromReset
	}
}

// groupCommit is one partition's offset to commit to the group.
type groupCommit struct {
	Next    int64 // the next offset to read: last applied + 1
	Version int64 // the Delta version holding it, for the metadata
}

// commitOffsets commits offsets to the consumer group, each with metadata
// naming its Delta version.
func commitOffsets(ctx context.Context, cl *kgo.Client, offs map[cdctable.TopicPartition]groupCommit) error {
	if len(offs) == 0 {
		return nil
	}
	m := make(map[string]map[int32]kgo.EpochOffset)
	for tp, o := range offs {
		if m[tp.Topic] == nil {
			m[tp.Topic] = make(map[int32]kgo.EpochOffset)
		}
		m[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o.Next}
	}
	ctx = kgo.PreCommitFnContext(ctx, func(req *kmsg.OffsetCommitRequest) error {
		for i := range req.Topics {
			rt := &req.Topics[i]
			for j := range rt.Partitions {
				rp := &rt.Partitions[j]
				if o, ok := offs[cdctable.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}]; ok {
					meta := cdctable.GroupMeta(o.Version)
					rp.Metadata = &meta
				}
			}
		}
		return nil
	})
	var cerr error
	cl.CommitOffsetsSync(ctx, m, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if e := kerr.ErrorForCode(rp.ErrorCode); e != nil && cerr == nil {
					cerr = fmt.Errorf("%s/%d: %w", rt.Topic, rp.Partition, e)
				}
			}
		}
	})
	if cerr != nil {
		return fmt.Errorf("committing group offsets: %w", cerr)
	}
	return nil
}

// ErrGroupActive reports a replay requested while the group has members:
// their next commit would overwrite it.
var ErrGroupActive = errors.New("processor: consumer group has active members; stop every instance first")

// ReplayFrom resets the group's offsets for topics to the first records at
// or after at, as `kafka-consumer-groups --reset-offsets --to-datetime`
// does, for the processor to honour as an operator replay on its next start
// (ADR 0020). The group must have no members. It returns the offsets set.
//
// The offsets carry empty metadata, like Kafka's tools, so they are not
// mistaken for a stale commit of ours. Records at or below a table's txn are
// still skipped: to re-apply them, RESTORE the table first.
func ReplayFrom(ctx context.Context, adm *kadm.Client, group string, at time.Time, topics ...string) (kadm.Offsets, error) {
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("describing group %s: %w", group, err)
	}
	if g, ok := described[group]; ok && len(g.Members) > 0 {
		return nil, fmt.Errorf("replaying group %s: %w (%d members)", group, ErrGroupActive, len(g.Members))
	}
	listed, err := adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), topics...)
	if err != nil {
		return nil, fmt.Errorf("listing offsets after %s: %w", at.Format(time.RFC3339Nano), err)
	}
	if err := listed.Error(); err != nil {
		return nil, fmt.Errorf("listing offsets after %s: %w", at.Format(time.RFC3339Nano), err)
	}
	offs := listed.Offsets()
	offs.Each(func(o kadm.Offset) {
		o.LeaderEpoch, o.Metadata = -1, ""
		offs.Add(o)
	})
	resp, err := adm.CommitOffsets(ctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("committing replay offsets of group %s: %w", group, err)
	}
	return offs, nil
}

func txnAttr(txn int64, ok bool) any {
	if !ok {
		return "none"
	}
	return txn
}

func committedAttr(c *committedOffset) any {
	if c == nil {
		return "none"
	}
	return c.Offset
}
