package processor

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

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

func txnAttr(txn int64, ok bool) any {
	if !ok {
		return "none"
	}
	return txn
}

func committedAttr(c *cdctable.CommittedOffset) any {
	if c == nil {
		return "none"
	}
	return c.Offset
}
