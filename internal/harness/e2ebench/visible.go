package e2ebench

import (
	"bufio"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// commitPoint is one Delta commit as seen by one partition: the txn version
// (last offset applied) it recorded and when it was committed.
type commitPoint struct {
	offset int64
	at     time.Time
}

// timelines maps each partition to the commits that advanced its txn, in
// version order (so offsets ascend).
type timelines map[cdctable.TopicPartition][]commitPoint

// readTimelines reads every JSON commit of a table and adds the commits
// carrying txn actions of the given partitions. The commit time is the
// commitInfo timestamp: when the writer committed, which a reader polling
// the log sees at the earliest. It returns the number of commits read.
func (tl timelines) read(ctx context.Context, store deltalog.Store, parts []cdctable.TopicPartition) (int, error) {
	byApp := make(map[string]cdctable.TopicPartition, len(parts))
	for _, tp := range parts {
		byApp[tp.AppID()] = tp
	}
	commits := 0
	for obj, err := range store.List(ctx, "_delta_log/", "") {
		if err != nil {
			return commits, fmt.Errorf("listing the log: %w", err)
		}
		name := path.Base(obj.Path)
		if !strings.HasSuffix(name, ".json") || len(name) != len("00000000000000000000.json") {
			continue // checkpoints, _last_checkpoint, CRCs
		}
		commits++
		txns, at, err := readCommit(ctx, store, obj.Path)
		if err != nil {
			return commits, err
		}
		for _, t := range txns {
			if tp, ok := byApp[t.AppID]; ok {
				tl[tp] = append(tl[tp], commitPoint{offset: t.Version, at: at})
			}
		}
	}
	return commits, nil
}

// readCommit returns a commit file's txn actions and commit time.
func readCommit(ctx context.Context, store deltalog.Store, p string) ([]deltalog.Txn, time.Time, error) {
	rc, err := store.Get(ctx, p)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("reading commit %s: %w", p, err)
	}
	defer rc.Close()
	var txns []deltalog.Txn
	var at time.Time
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 64<<20) // add actions with stats make long lines
	for sc.Scan() {
		a, ok, err := deltalog.ParseLogLine(sc.Bytes())
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("reading commit %s: %w", p, err)
		}
		switch {
		case !ok:
		case a.Txn != nil:
			txns = append(txns, *a.Txn)
		case a.CommitInfo != nil && a.CommitInfo.Timestamp != nil:
			at = time.UnixMilli(*a.CommitInfo.Timestamp)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, time.Time{}, fmt.Errorf("reading commit %s: %w", p, err)
	}
	if at.IsZero() && len(txns) > 0 {
		return nil, time.Time{}, fmt.Errorf("reading commit %s: no commitInfo timestamp", p)
	}
	return txns, at, nil
}

// visibleAt returns when offset of tp first became visible: the time of
// the first commit whose txn reached it.
func (tl timelines) visibleAt(tp cdctable.TopicPartition, offset int64) (time.Time, bool) {
	pts := tl[tp]
	i, _ := slices.BinarySearchFunc(pts, offset, func(c commitPoint, off int64) int {
		switch {
		case c.offset < off:
			return -1
		case c.offset > off:
			return 1
		}
		return 0
	})
	if i == len(pts) {
		return time.Time{}, false
	}
	return pts[i].at, true
}

// offsetAt returns the last offset of tp visible at t, -1 for none.
func (tl timelines) offsetAt(tp cdctable.TopicPartition, t time.Time) int64 {
	off := int64(-1)
	for _, c := range tl[tp] {
		if c.at.After(t) {
			break
		}
		off = c.offset
	}
	return off
}

// latency returns the quantiles of each sent event's time to visibility.
func (tl timelines) latency(events []sent) (*Latency, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("latency: no events")
	}
	ds := make([]time.Duration, len(events))
	for i, e := range events {
		at, ok := tl.visibleAt(e.tp, e.offset)
		if !ok {
			return nil, fmt.Errorf("latency: %s/%d offset %d never became visible", e.tp.Topic, e.tp.Partition, e.offset)
		}
		ds[i] = at.Sub(e.at)
	}
	return latencyOf(ds), nil
}

// latencyOf summarizes durations (at least one; sorted in place).
func latencyOf(ds []time.Duration) *Latency {
	slices.Sort(ds)
	q := func(f float64) float64 { return ds[min(int(f*float64(len(ds))), len(ds)-1)].Seconds() }
	return &Latency{Events: len(ds), P50Seconds: q(0.50), P99Seconds: q(0.99), MaxSeconds: ds[len(ds)-1].Seconds()}
}
