package processor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// A table waiting for its commit-budget slot is not woken by records that
// move neither the slot nor max_delay; records that do (the batch's new
// oldest, a full batch) still wake it, and so does everything before the
// slot is held.
func TestRouteWakesOnlyWhatMovesTheCommit(t *testing.T) {
	l := BatchLimits{Records: 10, Age: 100 * time.Millisecond, MinRecords: 3, MaxDelay: 10 * time.Second, CommitsPerSecond: 1}.withDefaults()
	m, err := newMetrics(nil)
	require.NoError(t, err)
	p := &Processor{opts: Options{Batch: l, MaxBufferedBytes: 1 << 30}, m: m}
	p.mu.budget = newCommitBudget(l)
	tp := cdctable.TopicPartition{Topic: "t"}
	tb := &table{wake: make(chan struct{}, 1)}
	pt := &partition{tp: tp, table: tb, started: true, applied: -1, txn: -1}
	tb.parts = map[cdctable.TopicPartition]*partition{tp: pt}
	p.mu.parts = map[cdctable.TopicPartition]*partition{tp: pt}
	t0 := time.Unix(1000, 0)
	var off int64
	route := func(now, stamp time.Time) bool {
		p.route(now, &kgo.Record{Topic: tp.Topic, Offset: off, Timestamp: stamp}, decoded{change: codecs.Change{Op: codecs.OpUpdate}})
		off++
		select {
		case <-tb.wake:
			return true
		default:
			return false
		}
	}
	require.True(t, route(t0, t0), "the first record")
	require.False(t, route(t0, t0))
	require.True(t, route(t0, t0), "min_records")

	// Another table took the next slot: this one's ready batch reserves the
	// one after and sleeps until then.
	p.mu.budget.reserve(t0.Add(l.Age), true)
	now := t0.Add(l.Age)
	why, wait := p.commitDueLocked(tb, now, false, false)
	require.Empty(t, why)
	require.Positive(t, wait)
	require.False(t, tb.slot.IsZero())

	require.False(t, route(now, now), "a record that moves nothing")
	require.False(t, route(now, now))
	require.True(t, route(now, t0.Add(-500*time.Millisecond)), "a new oldest record moves max_delay")
	for range l.Records - int(off) - 1 {
		require.False(t, route(now, now))
	}
	require.True(t, route(now, now), "the batch is full")

	tb.slot = time.Time{} // committed: the next batch wakes it again
	tb.pend.clear()
	require.True(t, route(now, now))
}
