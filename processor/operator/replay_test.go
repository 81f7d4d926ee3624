package operator

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReplayFrom rewinds a group on a fake cluster of two topics of two
// partitions holding five records each, stamped a second apart, and checks
// the offsets committed, their empty metadata, and the refusals.
func TestReplayFrom(t *testing.T) {
	const records = 5
	t0 := time.UnixMilli(1_700_000_000_000)
	topics := []string{"p.db.dbo.a", "p.db.dbo.b"}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topics...))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	for _, topic := range topics {
		for p := range int32(2) {
			for i := range records {
				r := &kgo.Record{Topic: topic, Partition: p, Timestamp: t0.Add(time.Duration(i) * time.Second), Value: []byte{byte(i)}}
				require.NoError(t, cl.ProduceSync(t.Context(), r).FirstErr())
			}
		}
	}
	every := func(at int64) map[string]map[int32]int64 {
		return map[string]map[int32]int64{topics[0]: {0: at, 1: at}, topics[1]: {0: at, 1: at}}
	}

	tests := []struct {
		name string
		o    ReplayOptions
		want map[string]map[int32]int64
	}{
		{"earliest", ReplayOptions{Partition: -1}, every(0)},
		{"offset", ReplayOptions{Partition: -1, Offset: 3}, every(3)},
		{"one partition", ReplayOptions{Topics: topics[:1], Partition: 1, Offset: 2}, map[string]map[int32]int64{topics[0]: {1: 2}}},
		{"time", ReplayOptions{Partition: -1, At: t0.Add(2 * time.Second)}, every(2)},
		{"time between records", ReplayOptions{Partition: -1, At: t0.Add(2500 * time.Millisecond)}, every(3)},
		{"time after every record", ReplayOptions{Partition: -1, At: t0.Add(time.Hour)}, every(records)},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Group = fmt.Sprint("g", i)
			if tc.o.Topics == nil {
				tc.o.Topics = topics
			}
			offs, err := ReplayFrom(t.Context(), adm, tc.o)
			require.NoError(t, err)
			got := map[string]map[int32]int64{}
			offs.Each(func(o kadm.Offset) {
				if got[o.Topic] == nil {
					got[o.Topic] = map[int32]int64{}
				}
				got[o.Topic][o.Partition] = o.At
			})
			require.Equal(t, tc.want, got)
			fetched, err := adm.FetchOffsets(t.Context(), tc.o.Group)
			require.NoError(t, err)
			committed := map[string]map[int32]int64{}
			fetched.Each(func(r kadm.OffsetResponse) {
				require.NoError(t, r.Err)
				require.Empty(t, r.Metadata, "an operator's reset carries no metadata of ours")
				if committed[r.Topic] == nil {
					committed[r.Topic] = map[int32]int64{}
				}
				committed[r.Topic][r.Partition] = r.At
			})
			require.Equal(t, tc.want, committed)
		})
	}

	t.Run("never below the log start", func(t *testing.T) {
		var del kadm.Offsets
		del.AddOffset(topics[1], 0, 2, -1)
		resp, err := adm.DeleteRecords(t.Context(), del)
		require.NoError(t, err)
		require.NoError(t, resp.Error())
		offs, err := ReplayFrom(t.Context(), adm, ReplayOptions{Group: "start", Topics: topics[1:], Partition: -1, Offset: 1})
		require.NoError(t, err)
		o, _ := offs.Lookup(topics[1], 0)
		require.Equal(t, int64(2), o.At)
		o, _ = offs.Lookup(topics[1], 1)
		require.Equal(t, int64(1), o.At)
	})

	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			o    ReplayOptions
			want error
		}{
			{"negative offset", ReplayOptions{Group: "r", Topics: topics, Partition: -1, Offset: -1}, ErrOptions},
			{"time and offset", ReplayOptions{Group: "r", Topics: topics, Partition: -1, Offset: 2, At: t0}, ErrOptions},
			{"no such partition", ReplayOptions{Group: "r", Topics: topics, Partition: 7}, ErrNoPartition},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := ReplayFrom(t.Context(), adm, tc.o)
				require.ErrorIs(t, err, tc.want)
			})
		}
	})

	t.Run("active group", func(t *testing.T) {
		member, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumerGroup("active"), kgo.ConsumeTopics(topics...))
		require.NoError(t, err)
		defer member.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		member.PollFetches(ctx) // joins the group
		// Precondition: the group has a member to refuse for.
		require.Eventually(t, func() bool {
			g, err := adm.DescribeGroups(ctx, "active")
			return err == nil && len(g["active"].Members) > 0
		}, 10*time.Second, 10*time.Millisecond)
		_, err = ReplayFrom(t.Context(), adm, ReplayOptions{Group: "active", Topics: topics, Partition: -1})
		require.ErrorIs(t, err, ErrGroupActive)
		ga, ok := errors.AsType[*GroupActiveError](err)
		require.True(t, ok)
		require.Equal(t, GroupActiveError{Group: "active", Members: 1}, *ga)
		require.EqualError(t, err, "group active has 1 active members: stop every cdc2delta instance first, "+
			"since Kafka only lets an empty group's offsets be reset")
	})
}
