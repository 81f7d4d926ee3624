package processor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

func TestPendingTakeHonoursCaps(t *testing.T) {
	a := cdctable.TopicPartition{Topic: "t", Partition: 0}
	b := cdctable.TopicPartition{Topic: "t", Partition: 1}
	now := time.Unix(100, 0)
	change := func(tp cdctable.TopicPartition, off int64, size int64) entry {
		return entry{kind: entryChange, tp: tp, offset: off, size: size, change: codecs.Change{Op: codecs.OpUpdate}}
	}
	skip := func(tp cdctable.TopicPartition, off int64) entry {
		return entry{kind: entrySkip, tp: tp, offset: off, size: 1}
	}
	poison := func(tp cdctable.TopicPartition, off int64) entry {
		return entry{kind: entryPoison, tp: tp, offset: off, size: 1}
	}
	type commit struct {
		records int
		last    map[cdctable.TopicPartition]int64
		poison  int64 // -1: none
	}
	tests := []struct {
		name    string
		limits  BatchLimits
		entries []entry
		want    []commit
	}{
		{
			name:   "records cap splits one poll",
			limits: BatchLimits{Records: 2, Bytes: 1 << 20},
			entries: []entry{change(a, 0, 10), change(b, 0, 10), change(a, 1, 10), skip(a, 2), change(b, 1, 10),
				change(a, 3, 10)},
			want: []commit{
				{2, map[cdctable.TopicPartition]int64{a: 0, b: 0}, -1},
				// The tombstone of a/2 precedes the third change: it goes with it.
				{2, map[cdctable.TopicPartition]int64{a: 2, b: 1}, -1},
				{1, map[cdctable.TopicPartition]int64{a: 3}, -1},
			},
		},
		{
			name:    "bytes cap",
			limits:  BatchLimits{Records: 100, Bytes: 25},
			entries: []entry{change(a, 0, 10), change(a, 1, 10), change(a, 2, 10), change(b, 0, 30)},
			want: []commit{
				{2, map[cdctable.TopicPartition]int64{a: 1}, -1},
				{1, map[cdctable.TopicPartition]int64{a: 2}, -1},
				// Larger than the cap alone: it goes alone.
				{1, map[cdctable.TopicPartition]int64{b: 0}, -1},
			},
		},
		{
			name:    "stops before poison",
			limits:  BatchLimits{Records: 100, Bytes: 1 << 20},
			entries: []entry{change(a, 0, 1), change(b, 0, 1), poison(a, 1), change(b, 1, 1)},
			want: []commit{
				{2, map[cdctable.TopicPartition]int64{a: 0, b: 0}, -1},
				{0, map[cdctable.TopicPartition]int64{}, 1},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p pending
			for _, e := range tc.entries {
				p.add(now, tc.limits, e)
			}
			var got []commit
			for !p.empty() {
				w := p.take(tc.limits)
				b := w.batch()
				c := commit{records: len(b.Records), last: b.LastOffsets, poison: -1}
				if w.poison != nil {
					c.poison = w.poison.offset
				}
				require.LessOrEqual(t, len(b.Records), tc.limits.Records)
				got = append(got, c)
			}
			require.Equal(t, tc.want, got)
			require.Zero(t, p.bytes)
			require.Empty(t, p.recs)
		})
	}
}

func TestPendingDropAndRequeue(t *testing.T) {
	a := cdctable.TopicPartition{Topic: "t", Partition: 0}
	b := cdctable.TopicPartition{Topic: "t", Partition: 1}
	t0 := time.Unix(100, 0)
	var p pending
	for i := range int64(4) {
		p.add(t0, BatchLimits{}, entry{kind: entryChange, tp: a, offset: i, size: 1})
		p.add(t0, BatchLimits{}, entry{kind: entryChange, tp: b, offset: i, size: 1})
	}
	w := p.take(BatchLimits{Records: 4, Bytes: 100})
	require.Len(t, w.recs, 4)
	p.add(t0.Add(time.Second), BatchLimits{}, entry{kind: entryChange, tp: a, offset: 4, size: 1})

	isB := func(tp cdctable.TopicPartition) bool { return tp == b }
	require.EqualValues(t, 2, p.drop(isB), "b's two pending entries are freed")
	p.requeue(w, isB)
	var offs []int64
	for _, r := range p.recs {
		require.Equal(t, a, r.TopicPartition)
		offs = append(offs, r.Offset)
	}
	require.Equal(t, []int64{0, 1, 2, 3, 4}, offs, "requeued work comes first, in order")
	require.Equal(t, t0, p.started, "requeued work keeps its age")
	require.True(t, p.due(t0.Add(time.Second), BatchLimits{Records: 100, Bytes: 100, Age: time.Second}, false))
}

// TestPendingMarksKeepTheirPlace: tombstones and bad records sit among the
// changes in arrival order; dropping a partition and requeueing work keep
// each one after the changes that arrived before it.
func TestPendingMarksKeepTheirPlace(t *testing.T) {
	a := cdctable.TopicPartition{Topic: "t", Partition: 0}
	b := cdctable.TopicPartition{Topic: "t", Partition: 1}
	t0 := time.Unix(100, 0)
	change := func(tp cdctable.TopicPartition, off int64) entry {
		return entry{kind: entryChange, tp: tp, offset: off, size: 1}
	}
	skip := func(tp cdctable.TopicPartition, off int64) entry {
		return entry{kind: entrySkip, tp: tp, offset: off, size: 1}
	}
	var p pending
	for _, e := range []entry{change(b, 0), change(a, 0), skip(b, 1), skip(a, 1), change(b, 2), change(a, 2), skip(a, 3)} {
		p.add(t0, BatchLimits{}, e)
	}
	require.EqualValues(t, 3, p.drop(func(tp cdctable.TopicPartition) bool { return tp == b }))
	limits := BatchLimits{Records: 1, Bytes: 100}
	w := p.take(limits)
	require.Equal(t, map[cdctable.TopicPartition]int64{a: 1}, w.batch().LastOffsets, "a/0 and the tombstone a/1 that followed it")
	p.requeue(w, func(cdctable.TopicPartition) bool { return false })
	var got []map[cdctable.TopicPartition]int64
	for !p.empty() {
		w := p.take(limits)
		got = append(got, w.batch().LastOffsets)
	}
	require.Equal(t, []map[cdctable.TopicPartition]int64{{a: 1}, {a: 3}}, got)
}

// TestPendingCountsFromProduction: MaxDelay counts from a record's
// production, at most produceCredit (a tenth of MaxDelay - Age, at most a
// second) before its arrival, and Age from its arrival; the oldest
// production among the entries decides.
func TestPendingCountsFromProduction(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	l := BatchLimits{Records: 100, Age: time.Second, MinRecords: 1000, MaxDelay: 10 * time.Second}.withDefaults()
	for _, tc := range []struct {
		name     string
		produced []time.Time // one entry each, all arriving at t0
		forcedAt time.Time
	}{
		{"no timestamp", []time.Time{{}}, t0.Add(10 * time.Second)},
		{"fetch latency counts", []time.Time{t0.Add(-200 * time.Millisecond)}, t0.Add(9800 * time.Millisecond)},
		{"a backlog counts from arrival less the credit", []time.Time{t0.Add(-time.Hour)}, t0.Add(9100 * time.Millisecond)},
		{"a clock ahead counts from arrival", []time.Time{t0.Add(time.Minute)}, t0.Add(10 * time.Second)},
		{"the oldest decides", []time.Time{t0.Add(-100 * time.Millisecond), t0.Add(-300 * time.Millisecond), {}}, t0.Add(9700 * time.Millisecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p pending
			for i, at := range tc.produced {
				p.add(t0, l, entry{kind: entryChange, offset: int64(i), size: 1, produced: at})
			}
			require.Equal(t, tc.forcedAt, p.forcedAt(l))
			require.False(t, p.forced(tc.forcedAt.Add(-time.Millisecond), l))
			require.True(t, p.forced(tc.forcedAt, l))
			w := p.take(l)
			require.Equal(t, tc.forcedAt, w.produced.Add(l.MaxDelay), "the work keeps it")
			require.Equal(t, t0, w.started, "Age still counts from arrival")
		})
	}
	old := BatchLimits{Age: time.Second, MaxDelay: time.Second}.withDefaults()
	var p pending
	p.add(t0, old, entry{kind: entryChange, size: 1, produced: t0.Add(-200 * time.Millisecond)})
	require.Equal(t, t0.Add(time.Second), p.forcedAt(old), "MaxDelay = Age (the old behaviour) counts from arrival")
}

// A batch after the first is made as big as the last one at its first
// record, and clear and drop keep that size.
func TestPendingSizesFromTheLastTake(t *testing.T) {
	tp := cdctable.TopicPartition{Topic: "t", Partition: 0}
	t0 := time.Unix(100, 0)
	l := BatchLimits{Records: 1000, Bytes: 1 << 30}
	var p pending
	add := func(off int64) { p.add(t0, l, entry{kind: entryChange, tp: tp, offset: off, size: 1}) }
	for i := range int64(700) {
		add(i)
	}
	require.Equal(t, 700, len(p.take(l).recs))
	require.Equal(t, 700, p.hint)

	add(700)
	require.GreaterOrEqual(t, cap(p.recs), 700, "the first record after a take of 700 sizes for 700")
	require.GreaterOrEqual(t, cap(p.sizes), 700)

	p.clear()
	add(701)
	require.GreaterOrEqual(t, cap(p.recs), 700, "clear keeps the size")
	p.drop(func(cdctable.TopicPartition) bool { return true })
	require.True(t, p.empty())
	add(702)
	require.GreaterOrEqual(t, cap(p.recs), 700, "drop keeps the size")
}

// Each array has one owner: a batch taken as a prefix gets its own copy
// (pending's further records never show in it), a batch that takes
// everything gets pending's array, and an array handed back after a commit
// is reused for new records without touching a batch still applying.
func TestPendingBatchesOwnTheirArrays(t *testing.T) {
	tp := cdctable.TopicPartition{Topic: "t", Partition: 0}
	t0 := time.Unix(100, 0)
	l := BatchLimits{Records: 100, Bytes: 1 << 30}
	p := pending{arrays: new(recordArrays)}
	add := func(off int64) { p.add(t0, l, entry{kind: entryChange, tp: tp, offset: off, size: 1}) }
	for i := range int64(250) {
		add(i)
	}
	first := p.take(l) // a prefix: copied
	require.Len(t, first.recs, 100)
	require.NotSame(t, &first.arr[:1][0], &p.base[:1][0])
	for i := range int64(200) {
		add(250 + i) // grows pending's array, handing the old one back
	}
	second := p.take(l)
	p.arrays.put(first.arr) // committed
	for i := range int64(100) {
		add(450 + i)
	}
	for i, r := range first.recs {
		require.Zero(t, r.Offset, "a handed-back array is cleared (%d)", i)
	}
	for i, r := range second.recs {
		require.Equal(t, int64(100+i), r.Offset)
	}
	var offs []int64
	for !p.empty() {
		w := p.take(l)
		for _, r := range w.recs {
			offs = append(offs, r.Offset)
		}
	}
	require.Len(t, offs, 550-200)
	for i, off := range offs {
		require.Equal(t, int64(200+i), off)
	}
	// The last take took everything: pending's array went with it.
	require.Nil(t, p.base)
}
