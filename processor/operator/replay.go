package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

var (
	// ErrGroupActive reports a replay requested while the group has
	// members: their next commit would overwrite it (*GroupActiveError has
	// the count).
	ErrGroupActive = errors.New("operator: consumer group has active members; stop every instance first")
	// ErrNoPartition reports a replay whose topics and partition name no
	// partition.
	ErrNoPartition = errors.New("operator: no partition matches")
)

// GroupActiveError reports the members of a group a replay refuses to reset.
type GroupActiveError struct {
	Group   string
	Members int
}

// Error says what to do.
func (e *GroupActiveError) Error() string {
	return fmt.Sprintf("group %s has %d active members: stop every cdc2delta instance first, "+
		"since Kafka only lets an empty group's offsets be reset", e.Group, e.Members)
}

// Unwrap returns ErrGroupActive.
func (e *GroupActiveError) Unwrap() error { return ErrGroupActive }

// ReplayOptions say which group ReplayFrom rewinds, on which partitions, and
// to where.
type ReplayOptions struct {
	Group  string
	Topics []string
	// Partition limits the reset to this partition of each topic; -1: every
	// partition.
	Partition int32
	// At, when set, rewinds each partition to its first record at or after
	// it. Otherwise Offset does, never below the partition's log start: 0
	// is the start of each partition.
	At     time.Time
	Offset int64
	// Timeout bounds each Kafka request (DefaultTimeout when 0).
	Timeout time.Duration
}

// ReplayFrom resets the group's offsets for the topics to where o says, as
// `kafka-consumer-groups --reset-offsets` does, for the processor to honour
// as an operator replay on its next start (ADR 0020). The group must have no
// members. It returns the offsets set.
//
// The offsets carry empty metadata, like Kafka's tools, so they are not
// mistaken for a stale commit of ours. Records at or below a table's txn are
// still skipped: to re-apply them, RESTORE the table first.
func ReplayFrom(ctx context.Context, adm *kadm.Client, o ReplayOptions) (kadm.Offsets, error) {
	if o.Offset < 0 || !o.At.IsZero() && o.Offset != 0 {
		return nil, fmt.Errorf("%w: replay: give a time or an offset of at least 0, not offset %d and time %v", ErrOptions, o.Offset, o.At)
	}
	described, err := kafkaCall(ctx, o.Timeout, func(ctx context.Context) (kadm.DescribedGroups, error) { return adm.DescribeGroups(ctx, o.Group) })
	if err != nil {
		return nil, fmt.Errorf("describing group %s: %w", o.Group, err)
	}
	if g, ok := described[o.Group]; ok && len(g.Members) > 0 {
		return nil, &GroupActiveError{Group: o.Group, Members: len(g.Members)}
	}
	var listed kadm.ListedOffsets
	what := "start offsets"
	if o.At.IsZero() {
		listed, err = kafkaCall(ctx, o.Timeout, func(ctx context.Context) (kadm.ListedOffsets, error) { return adm.ListStartOffsets(ctx, o.Topics...) })
	} else {
		what = "offsets after " + o.At.Format(time.RFC3339Nano)
		listed, err = kafkaCall(ctx, o.Timeout, func(ctx context.Context) (kadm.ListedOffsets, error) {
			return adm.ListOffsetsAfterMilli(ctx, o.At.UnixMilli(), o.Topics...)
		})
	}
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", what, err)
	}
	var offs kadm.Offsets
	listed.Each(func(l kadm.ListedOffset) {
		if o.Partition >= 0 && l.Partition != o.Partition {
			return
		}
		// Epoch -1 and empty metadata: an operator's reset.
		offs.AddOffset(l.Topic, l.Partition, max(l.Offset, o.Offset), -1)
	})
	if len(offs) == 0 {
		return nil, fmt.Errorf("replaying group %s: %w", o.Group, ErrNoPartition)
	}
	resp, err := kafkaCall(ctx, o.Timeout, func(ctx context.Context) (kadm.OffsetResponses, error) { return adm.CommitOffsets(ctx, o.Group, offs) })
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("committing replay offsets of group %s: %w", o.Group, err)
	}
	return offs, nil
}
