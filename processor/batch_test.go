package processor

import (
	"testing"
	"time"

	"github.com/cdc2delta/cdc2delta/processor/merge"
	"github.com/stretchr/testify/require"
)

func TestPendingDue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := BatchLimits{Records: 3, Bytes: 100, Age: time.Second}
	tp := merge.TopicPartition{Topic: "t", Partition: 0}
	tests := []struct {
		name string
		fill func(p *pending)
		at   time.Time
		want bool
	}{
		{"empty", func(*pending) {}, t0.Add(time.Hour), false},
		{"young", func(p *pending) { p.add(t0, merge.Record{TopicPartition: tp, Offset: 1}, 10) }, t0.Add(time.Millisecond), false},
		{"records", func(p *pending) {
			for i := range 3 {
				p.add(t0, merge.Record{TopicPartition: tp, Offset: int64(i)}, 1)
			}
		}, t0, true},
		{"bytes", func(p *pending) { p.add(t0, merge.Record{TopicPartition: tp, Offset: 1}, 100) }, t0, true},
		{"age", func(p *pending) { p.add(t0, merge.Record{TopicPartition: tp, Offset: 1}, 1) }, t0.Add(time.Second), true},
		{"skipped offsets age too", func(p *pending) { p.note(t0, tp, 7) }, t0.Add(time.Second), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p pending
			tc.fill(&p)
			require.Equal(t, tc.want, p.due(tc.at, l.withDefaults()))
		})
	}
}

func TestPendingTakeAndDrop(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a, b := merge.TopicPartition{Topic: "t", Partition: 0}, merge.TopicPartition{Topic: "t", Partition: 1}
	var p pending
	p.add(t0, merge.Record{TopicPartition: a, Offset: 5}, 10)
	p.add(t0, merge.Record{TopicPartition: b, Offset: 8}, 20)
	p.add(t0, merge.Record{TopicPartition: a, Offset: 6}, 30)
	p.note(t0, b, 9)

	freed := p.drop(map[merge.TopicPartition]bool{a: true})
	require.Equal(t, int64(40), freed)
	require.Equal(t, int64(20), p.bytes)
	require.Len(t, p.records, 1)
	require.Equal(t, map[merge.TopicPartition]int64{b: 9}, p.last)

	batch := p.take()
	require.Equal(t, map[merge.TopicPartition]int64{b: 9}, batch.LastOffsets)
	require.Equal(t, int64(8), batch.Records[0].Offset)
	require.True(t, p.empty())
	require.Zero(t, p.bytes)

	p.note(t0, a, 1)
	p.drop(map[merge.TopicPartition]bool{a: true})
	require.True(t, p.empty())
	require.True(t, p.deadline(BatchLimits{Age: time.Second}).IsZero())
}
