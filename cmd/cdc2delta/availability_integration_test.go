//go:build integration

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// availabilityBatchAge is the batch age of the availability test's members.
const availabilityBatchAge = 500 * time.Millisecond

// TestRebalanceAvailability runs three members of one group (the real binary,
// dynamic membership) on the real broker under continuous load, SIGKILLs one
// and measures, per partition the survivors own, the longest gap between two
// Delta commits carrying its txn until the dead member's session has expired
// and its partitions have moved. The goal: no gap longer than the batch age
// plus 5 s. Then the group catches up and every table equals the source.
func TestRebalanceAvailability(t *testing.T) {
	for _, tc := range []struct {
		name     string
		protocol string
		regex    bool
	}{
		{"classic cooperative-sticky, topic_regex", "classic", true},
		{"KIP-848 consumer protocol, topics listed", "consumer", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testRebalanceAvailability(t, tc.protocol, tc.regex)
		})
	}
}

func testRebalanceAvailability(t *testing.T, protocol string, regex bool) {
	brokers := fulltier.KafkaBrokers(t)
	prefix := fmt.Sprintf("avail%s%d", protocol, time.Now().UnixNano())
	group := prefix + "-group"
	src := newCrashSource(t, brokers, prefix, dbzgen.WorkloadOptions{Seed: 7, Keys: 300, Snapshot: true, Redeliver: 0.02})
	root := t.TempDir()
	var topics []string
	for _, tb := range src.tables {
		topics = append(topics, tb.Topic())
	}
	members := []string{"a", "b", "c"}
	runs := map[string]*binaryRun{}
	require.NoError(t, src.produce(t.Context(), 300))
	stopProducing := src.produceInBackground(t.Context(), 10, 50*time.Millisecond)
	for _, m := range members {
		cfg := writeAvailabilityConfig(t, root, brokers[0], prefix, group, src.regURL, m, protocol, regex, topics)
		runs[m] = startRun(t, binary, cfg, filepath.Join(root, "run-"+m+".log"))
	}

	// A stable group: every member owns partitions, all are assigned, for 3 s.
	adm := src.adm
	var owners map[cdctable.TopicPartition]string
	stableSince := time.Time{}
	require.Eventually(t, func() bool {
		o := groupOwners(t, adm, group, protocol)
		if len(o) != len(topics)*crashPartitions || len(distinct(o)) != len(members) || !sameOwners(o, owners) {
			owners, stableSince = o, time.Now()
			return false
		}
		return time.Since(stableSince) > 3*time.Second
	}, 90*time.Second, 250*time.Millisecond, "the group never settled: %v", owners)

	victim := "b"
	var survivorParts, victimParts []cdctable.TopicPartition
	for tp, m := range owners {
		if m == victim {
			victimParts = append(victimParts, tp)
		} else {
			survivorParts = append(survivorParts, tp)
		}
	}
	require.NotEmpty(t, victimParts)
	killed := time.Now()
	runs[victim].kill()

	// Wait until the dead member's partitions belong to survivors and have
	// committed, then a little longer.
	var moved time.Time
	require.Eventually(t, func() bool {
		o := groupOwners(t, adm, group, protocol)
		if len(o) != len(topics)*crashPartitions || slices.Contains(distinctList(o), victim) {
			return false
		}
		last := lastCommits(t, root, src)
		for _, tp := range victimParts {
			if !last[tp].After(killed) {
				return false
			}
		}
		moved = time.Now()
		return true
	}, 3*time.Minute, 500*time.Millisecond, "the dead member's partitions never moved")
	// The window ends once every partition has committed after the move: it then
	// covers the steady state the group returned to.
	require.Eventually(t, func() bool {
		last := lastCommits(t, root, src)
		for _, tp := range slices.Concat(survivorParts, victimParts) {
			if !last[tp].After(moved) {
				return false
			}
		}
		return true
	}, 3*time.Minute, 250*time.Millisecond, "not every partition committed after the move")
	end := time.Now()

	// Gaps of the survivors' partitions over [killed, end], and how long the
	// dead member's partitions waited.
	timeline := commitTimes(t, root, src)
	var worst time.Duration
	var worstTP cdctable.TopicPartition
	for _, tp := range survivorParts {
		g := maxGap(timeline[tp], killed, end)
		if g > worst {
			worst, worstTP = g, tp
		}
	}
	var victimWait time.Duration
	for _, tp := range victimParts {
		if g := maxGap(timeline[tp], killed, end); g > victimWait {
			victimWait = g
		}
	}
	t.Logf("protocol %s: %d partitions, victim owned %d; dead member's partitions moved %s after the kill and waited up to %s without a commit; survivors' longest commit gap %s (%s/%d); goal <= %s",
		protocol, len(owners), len(victimParts), moved.Sub(killed).Round(100*time.Millisecond), victimWait.Round(100*time.Millisecond),
		worst.Round(100*time.Millisecond), worstTP.Topic, worstTP.Partition, availabilityBatchAge+5*time.Second)
	require.Greater(t, victimWait, 20*time.Second, "the measure sees a stall: the dead member's partitions waited for its session to expire")
	require.LessOrEqual(t, worst, availabilityBatchAge+5*time.Second, "a survivor stalled while the dead member's session expired")

	// Exactly once across the kill and the rebalance.
	stopProducing()
	ends := src.endOffsets()
	tables := make([]crashTable, len(src.tables))
	for i, tb := range src.tables {
		d := tb.Def()
		tables[i] = crashTable{t: t, dir: filepath.Join(root, "tables", d.Database, d.Schema, d.Name)}
	}
	waitCaughtUp(t, tables, ends, runs["a"])
	for _, m := range members {
		if m != victim {
			require.Equal(t, exitOK, runs[m].terminate(), "member %s; log:\n%s", m, runs[m].logTail())
		}
	}
	for i, tb := range tables {
		def := src.tables[i].Def()
		cols := compareColumns(def)
		got, perKey := tb.rows(cols, def.Key)
		require.Equal(t, modelRows(src.rows(src.tables[i]), cols), got, "table %s", def.Name)
		for k, n := range perKey {
			require.Equal(t, 1, n, "table %s: key %s appears %d times", def.Name, k, n)
		}
		require.Empty(t, tb.walkLog().txnRegressions, "table %s: a batch was applied twice", def.Name)
	}
}

// writeAvailabilityConfig writes member's configuration: its own client id
// (which the group description shows), no instance id.
func writeAvailabilityConfig(t *testing.T, root, broker, prefix, group, regURL, member, protocol string, regex bool, topics []string) string {
	t.Helper()
	subscribe := fmt.Sprintf("topic_regex: '^%s\\..*'", regexp.QuoteMeta(prefix))
	if !regex {
		subscribe = fmt.Sprintf("topics: [%s]", strings.Join(topics, ", "))
	}
	path := filepath.Join(root, member+".yaml")
	require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  client_id: %q
  group_protocol: %s
  %s
schema_registry: {url: %q}
tables: {path: %q}
batch: {max_records: 500, max_age: %s, min_records: 1}
metrics: {listen: ""}
log: {level: info}
`, broker, group, member, protocol, subscribe, regURL, filepath.ToSlash(root)+"/tables/{database}/{schema}/{table}", availabilityBatchAge), 0o600))
	return path
}

// groupOwners maps each assigned partition to its member's client id (nil
// while the group cannot be described).
func groupOwners(t *testing.T, adm *kadm.Client, group, protocol string) map[cdctable.TopicPartition]string {
	t.Helper()
	out := map[cdctable.TopicPartition]string{}
	add := func(client string, assigned map[string][]int32) {
		for topic, parts := range assigned {
			for _, p := range parts {
				out[cdctable.TopicPartition{Topic: topic, Partition: p}] = client
			}
		}
	}
	if protocol == "consumer" {
		described, err := adm.DescribeConsumerGroups(t.Context(), group)
		if err != nil {
			return nil // the coordinator is still loading; ask again
		}
		for _, m := range described[group].Members {
			assigned := map[string][]int32{}
			for topic, parts := range m.Assignment {
				for p := range parts {
					assigned[topic] = append(assigned[topic], p)
				}
			}
			add(m.ClientID, assigned)
		}
		return out
	}
	described, err := adm.DescribeGroups(t.Context(), group)
	if err != nil {
		return nil
	}
	for _, m := range described[group].Members {
		if c, ok := m.Assigned.AsConsumer(); ok {
			assigned := map[string][]int32{}
			for _, tp := range c.Topics {
				assigned[tp.Topic] = append(assigned[tp.Topic], tp.Partitions...)
			}
			add(m.ClientID, assigned)
		}
	}
	return out
}

func distinctList(m map[cdctable.TopicPartition]string) []string {
	var out []string
	for _, v := range m {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func distinct(m map[cdctable.TopicPartition]string) map[string]bool {
	out := map[string]bool{}
	for _, v := range m {
		out[v] = true
	}
	return out
}

func sameOwners(a, b map[cdctable.TopicPartition]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// commitTimes lists, per source partition, the commit times of the table
// versions carrying its txn, in order.
func commitTimes(t *testing.T, root string, src *crashSource) map[cdctable.TopicPartition][]time.Time {
	t.Helper()
	out := map[cdctable.TopicPartition][]time.Time{}
	for _, tb := range src.tables {
		d := tb.Def()
		ct := crashTable{t: t, dir: filepath.Join(root, "tables", d.Database, d.Schema, d.Name)}
		for _, c := range ct.commits() {
			for _, app := range c.txnApps {
				tp := appPartition(t, app)
				out[tp] = append(out[tp], c.at)
			}
		}
	}
	return out
}

// lastCommits is each partition's latest commit time.
func lastCommits(t *testing.T, root string, src *crashSource) map[cdctable.TopicPartition]time.Time {
	out := map[cdctable.TopicPartition]time.Time{}
	for tp, ts := range commitTimes(t, root, src) {
		out[tp] = ts[len(ts)-1]
	}
	return out
}

// maxGap is the longest time in [from, to] without a commit in times
// (sorted), counting from from and up to to.
func maxGap(times []time.Time, from, to time.Time) time.Duration {
	prev, worst := from, time.Duration(0)
	for _, at := range times {
		if at.Before(from) || at.After(to) {
			continue
		}
		worst = max(worst, at.Sub(prev))
		prev = at
	}
	return max(worst, to.Sub(prev))
}

// tableCommit is one commit's time and the txn app ids it carries.
type tableCommit struct {
	at      time.Time
	txnApps []string
}

// commits reads every commit of the table, in version order.
func (c crashTable) commits() []tableCommit {
	c.t.Helper()
	var out []tableCommit
	for _, v := range c.commitVersions() {
		var tc tableCommit
		for _, a := range c.commit(v) {
			switch {
			case a.CommitInfo != nil && a.CommitInfo.Timestamp != nil:
				tc.at = time.UnixMilli(*a.CommitInfo.Timestamp)
			case a.Txn != nil:
				tc.txnApps = append(tc.txnApps, a.Txn.AppID)
			}
		}
		out = append(out, tc)
	}
	return out
}
