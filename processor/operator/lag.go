package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// PartitionLag is one partition's position. Lag counts the records not yet
// in Delta: the high watermark minus the next offset the table needs, which
// is txn+1, else the group offset, else 0 (the whole partition; log start
// offsets are not looked up).
type PartitionLag struct {
	Table         string `json:"table"`
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	DeltaTxn      *int64 `json:"deltaTxn"`
	GroupOffset   *int64 `json:"groupOffset"`
	HighWatermark int64  `json:"highWatermark"`
	Lag           int64  `json:"lag"`
}

// Lag reports, for every partition of topics, the table's txn, the group's
// committed offset, the high watermark and the lag, sorted by topic and
// partition. Topics the router cannot name a table for are left out, as the
// processor leaves them. Each Kafka request waits at most timeout
// (DefaultTimeout when 0).
func Lag(ctx context.Context, adm *kadm.Client, timeout time.Duration, group string, topics []string, router *route.Router,
	openStore func(context.Context, string) (deltalog.Store, error)) ([]PartitionLag, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	ends, err := kafkaCall(ctx, timeout, func(ctx context.Context) (kadm.ListedOffsets, error) { return adm.ListEndOffsets(ctx, topics...) })
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing end offsets: %w", err)
	}
	committed, err := kafkaCall(ctx, timeout, func(ctx context.Context) (kadm.OffsetResponses, error) { return adm.FetchOffsets(ctx, group) })
	// A group that never committed has no offsets; some brokers say so with an error.
	if errors.Is(err, kerr.GroupIDNotFound) {
		committed, err = kadm.OffsetResponses{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fetching the offsets of group %s: %w", group, err)
	}
	snaps := map[string]*deltalog.Snapshot{}
	var rows []PartitionLag
	for _, topic := range slices.Sorted(slices.Values(topics)) {
		path, err := router.Route(topic)
		if err != nil {
			continue
		}
		snap, seen := snaps[path]
		if !seen {
			if snap, err = latestSnapshot(ctx, openStore, path); err != nil {
				return nil, err
			}
			snaps[path] = snap
		}
		parts := slices.SortedFunc(func(yield func(kadm.ListedOffset) bool) {
			for _, o := range ends[topic] {
				if !yield(o) {
					return
				}
			}
		}, func(a, b kadm.ListedOffset) int { return int(a.Partition - b.Partition) })
		for _, o := range parts {
			r := PartitionLag{Table: path, Topic: topic, Partition: o.Partition, HighWatermark: o.Offset}
			next := int64(0)
			if cr, ok := committed.Lookup(topic, o.Partition); ok && cr.Err == nil && cr.At >= 0 {
				at := cr.At
				r.GroupOffset, next = &at, at
			}
			if snap != nil {
				if v, ok := snap.TxnVersion(cdctable.TopicPartition{Topic: topic, Partition: o.Partition}.AppID()); ok {
					r.DeltaTxn, next = &v, v+1
				}
			}
			r.Lag = max(0, o.Offset-next)
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// latestSnapshot reads the table at path; nil when it does not exist yet.
func latestSnapshot(ctx context.Context, openStore func(context.Context, string) (deltalog.Store, error), path string) (*deltalog.Snapshot, error) {
	st, err := openStore(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	t, err := deltalog.Open(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	snap, err := t.Snapshot(ctx)
	if errors.Is(err, deltalog.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return snap, nil
}
