//go:build integration

package fulltier_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestKafkaBrokerAndTools produces and consumes a record on the real broker
// with franz-go, commits it as a consumer group, and checks that Kafka's own
// kafka-consumer-groups tool sees the group at the committed offset.
func TestKafkaBrokerAndTools(t *testing.T) {
	t.Parallel()
	brokers := fulltier.KafkaBrokers(t)
	suffix := uuid.NewString()[:8]
	topic := "fulltier-smoke-" + suffix
	group := "fulltier-group-" + suffix
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	admin, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer admin.Close()
	created, err := kadm.NewClient(admin).CreateTopic(ctx, 1, 1, nil, topic)
	require.NoError(t, err)
	require.NoError(t, created.Err)

	require.NoError(t, admin.ProduceSync(ctx, &kgo.Record{
		Topic: topic, Key: []byte("k"), Value: []byte("hello"),
	}).FirstErr())

	consumer, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
	)
	require.NoError(t, err)
	var got []*kgo.Record
	for len(got) == 0 {
		fetches := consumer.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "no record consumed")
		require.Empty(t, fetches.Errors())
		got = append(got, fetches.Records()...)
	}
	require.Len(t, got, 1)
	require.Equal(t, "hello", string(got[0].Value))
	require.NoError(t, consumer.CommitUncommittedOffsets(ctx))
	consumer.Close() // leaves the group, so that describe shows no members

	topics := fulltier.KafkaTool(t, "kafka-topics", "--bootstrap-server", brokers[0], "--list")
	require.Contains(t, strings.Fields(topics), topic)

	out := fulltier.KafkaTool(t, "kafka-consumer-groups",
		"--bootstrap-server", brokers[0], "--describe", "--group", group)
	row := describeRow(t, out, topic)
	require.Equal(t, group, row["GROUP"])
	require.Equal(t, "0", row["PARTITION"])
	require.Equal(t, "1", row["CURRENT-OFFSET"])
	require.Equal(t, "1", row["LOG-END-OFFSET"])
	require.Equal(t, "0", row["LAG"])
}

// describeRow returns the row of `kafka-consumer-groups --describe` output
// for topic, keyed by the header's column names.
func describeRow(t *testing.T, out, topic string) map[string]string {
	t.Helper()
	var header []string
	for line := range strings.Lines(out) {
		fields := strings.Fields(line)
		switch {
		case len(fields) > 0 && fields[0] == "GROUP":
			header = fields
		case header != nil && len(fields) >= 2 && fields[1] == topic:
			row := make(map[string]string, len(header))
			for i, h := range header {
				if i < len(fields) {
					row[h] = fields[i]
				}
			}
			return row
		}
	}
	t.Fatalf("no row for topic %s in kafka-consumer-groups output:\n%s", topic, out)
	return nil
}
