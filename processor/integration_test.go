//go:build integration

package processor

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// describeGroup runs kafka-consumer-groups --describe and returns, per
// partition, the committed offset and the lag it prints.
func describeGroup(t *testing.T, broker, group string) map[cdctable.TopicPartition][2]int64 {
	t.Helper()
	out := fulltier.KafkaTool(t, "kafka-consumer-groups", "--bootstrap-server", broker, "--describe", "--group", group)
	got := map[cdctable.TopicPartition][2]int64{}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
		if len(f) < 6 || f[0] != group {
			continue
		}
		part, err1 := strconv.ParseInt(f[2], 10, 32)
		cur, err2 := strconv.ParseInt(f[3], 10, 64)
		lag, err3 := strconv.ParseInt(f[5], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue // "-" for partitions without a commit
		}
		got[cdctable.TopicPartition{Topic: f[1], Partition: int32(part)}] = [2]int64{cur, lag}
	}
	return got
}

// requireLagZero checks the group's offsets, as Kafka's own tool shows
// them, equal txn+1 with lag 0 for every non-empty partition.
func (pl *pipeline) requireLagZero(t *testing.T, group string) {
	t.Helper()
	broker := pl.brokers[0]
	require.Eventually(t, func() bool {
		desc := describeGroup(t, broker, group)
		for _, tb := range pl.tables {
			for tp, v := range pl.txns(tb) {
				d, ok := desc[tp]
				if !ok || d[0] != v+1 || d[1] != 0 {
					t.Logf("%s/%d: describe %v, txn %d", tp.Topic, tp.Partition, d, v)
					return false
				}
			}
		}
		return true
	}, 30*time.Second, 500*time.Millisecond)
}

func TestIntegrationRealBroker(t *testing.T) {
	brokers := fulltier.KafkaBrokers(t)
	prefix := fmt.Sprintf("it%d", time.Now().UnixNano())
	group := prefix + "-group"
	pl := newPipelineOn(t, dbzgen.WorkloadOptions{Seed: 11, Keys: 200, Snapshot: true, Redeliver: 0.05, MaxTxEvents: 3}, brokers, prefix)
	pl.produce(3000)

	r := pl.start(pl.options(group))
	pl.waitCaughtUp()
	pl.requireModel()
	pl.requireGroupOffsets(group)
	pl.requireLagZero(t, group)
	before := map[string][]string{}
	for _, tb := range pl.tables {
		before[tb.Def().Name] = pl.tableRows(tb)
	}
	r.close(t)

	// An operator replays with Kafka's own tool; the restart honours it
	// and leaves the tables unchanged.
	fulltier.KafkaTool(t, "kafka-consumer-groups", "--bootstrap-server", brokers[0], "--group", group,
		"--reset-offsets", "--to-earliest", "--all-topics", "--execute")
	total := pl.totalRecords()
	r2 := pl.start(pl.options(group))
	require.Eventually(t, func() bool {
		return metricSum(t, r2.reg, "cdc2delta_events_consumed_total") == float64(total)
	}, 60*time.Second, 50*time.Millisecond, "the reset must be honoured as a replay")
	pl.waitCaughtUp()
	for _, tb := range pl.tables {
		require.Equal(t, before[tb.Def().Name], pl.tableRows(tb), "replay changed %s", tb.Def().Name)
	}
	pl.requireLagZero(t, group)

	pl.produce(1000)
	pl.waitCaughtUp()
	pl.requireModel()
	pl.requireLagZero(t, group)
}
