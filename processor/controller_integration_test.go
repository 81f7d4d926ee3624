//go:build integration

package processor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/control"
)

// TestControlTableRealBroker is TestControlTable against the real Kafka
// broker: transactions across two tables and three partitions, the
// transaction topic with late ENDs, the processor and the controller
// stopped abruptly and restarted, and the change log; customers alone has a
// snapshot, over its three partitions, and no change in the first
// transactions, and its partitions stall at the processor (from their first
// record, then one mid-stream) and are released one by one. Every table and
// version row of every control version is checked against the rows of the
// table version it names, read back, and the group against its tables.
// Under the transaction rule, delta-rs then reads the group's cut: each
// table version the control table says sits exactly on it holds the model
// applied through the cut, and each change log's rows at or below it are
// exactly the cut's events.
func TestControlTableRealBroker(t *testing.T) {
	brokers := fulltier.KafkaBrokers(t)
	t.Run("transactions", func(t *testing.T) {
		testControlTableThen(t, true, 5, brokers, fmt.Sprintf("ctl%d", time.Now().UnixNano()), checkCutByDeltaRS(t))
	})
	t.Run("watermark", func(t *testing.T) {
		testControlTable(t, false, 5, brokers, fmt.Sprintf("ctl%d", time.Now().UnixNano()))
	})
}

func checkCutByDeltaRS(t *testing.T) func(pl *pipeline, st *control.State, recs map[string][]cdcmodel.Record) {
	return func(pl *pipeline, st *control.State, recs map[string][]cdcmodel.Record) {
		cut := st.Groups["sales"].CompleteThrough
		// through is the model of a topic with every event at or below a
		// position applied, one at a time.
		through := func(topic string, p codecs.Position) (*cdcmodel.Model, map[string]bool) {
			model := cdcmodel.New(cdcmodel.Options{})
			upTo := map[cdcmodel.TopicPartition]int64{}
			events := map[string]bool{}
			for _, r := range recs[topic] {
				upTo[r.TopicPartition] = max(upTo[r.TopicPartition], r.Offset)
				if r.Change.Op == codecs.OpTombstone || r.Change.Pos.Compare(p) > 0 {
					continue
				}
				model.Feed(r)
				events[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = true
			}
			model.Commit(upTo)
			return model, events
		}
		type check struct {
			topic, key string
			row        control.Row
			req        int
		}
		var exact []check
		var reqs []fulltier.Request
		logReq, wholeReq := map[string]int{}, map[string][]int{}
		for _, tb := range pl.tables {
			d := tb.Def()
			vs := st.Versions[d.Database+"."+d.Schema+"."+d.Name]
			// Every fourth version row, and the last.
			for i, v := range vs {
				if i%4 != 0 && i != len(vs)-1 {
					continue
				}
				version := v.DeltaVersion
				exact = append(exact, check{topic: tb.Topic(), key: d.Key[0], row: v, req: len(reqs)})
				reqs = append(reqs, fulltier.Request{Engine: fulltier.DeltaRS, Path: pl.root + "/" + tablePath(tb),
					ReadOptions: fulltier.ReadOptions{Version: &version, Filter: "true"}})
			}
			logReq[tb.Topic()] = len(reqs)
			reqs = append(reqs, fulltier.Request{Engine: fulltier.DeltaRS, Path: pl.root + "/" + tablePath(tb) + "_changes",
				ReadOptions: fulltier.ReadOptions{Filter: fmt.Sprintf("%s <= '%s'", cdctable.LogPosition, cut.Hex())}})
			for _, e := range []fulltier.Engine{fulltier.DuckDB, fulltier.Spark} {
				wholeReq[tb.Topic()] = append(wholeReq[tb.Topic()], len(reqs))
				reqs = append(reqs, fulltier.Request{Engine: e, Path: pl.root + "/" + tablePath(tb) + "_changes", ReadOptions: fulltier.ReadOptions{RowsOnly: true}})
			}
		}
		res := fulltier.Read(t, reqs...)
		// DuckDB and Spark read every change log whole: every event once.
		for topic, is := range wholeReq {
			var top codecs.LSN
			for i := range top {
				top[i] = 0xff
			}
			_, want := through(topic, codecs.Position{Commit: top, Change: top, Serial: 1 << 62})
			for _, i := range is {
				require.Empty(t, res[i].Err, "%s reading the change log of %s", res[i].Engine, topic)
				got := map[string]bool{}
				for _, row := range res[i].Rows {
					got[fmt.Sprintf("%v/%v", row[cdctable.LogKafkaPart], row[cdctable.LogKafkaOffset])] = true
				}
				require.Len(t, res[i].Rows, len(want), "%s: %s reads each event of the change log once", topic, res[i].Engine)
				require.Equal(t, want, got, "%s: %s reads the change log's events", topic, res[i].Engine)
			}
		}
		for topic, i := range logReq {
			require.Empty(t, res[i].Err)
			_, want := through(topic, cut)
			got := map[string]bool{}
			for _, row := range res[i].Rows {
				got[fmt.Sprintf("%v/%v", row[cdctable.LogKafkaPart], row[cdctable.LogKafkaOffset])] = true
			}
			require.Equal(t, want, got, "%s: the change log's rows at or below the group's cut are exactly its events", topic)
		}
		require.NotEmpty(t, exact)
		onCut := 0
		for _, c := range exact {
			require.Empty(t, res[c.req].Err)
			model, _ := through(c.topic, c.row.CompleteThrough)
			want := map[string]string{}
			for _, row := range model.Rows() {
				want[fmt.Sprint(row[c.key])] = row[cdctable.ColPosition].(string)
			}
			got := map[string]string{}
			for _, row := range res[c.req].Rows {
				got[strings.Trim(fmt.Sprint(row[c.key]), `"`)] = fmt.Sprint(row[cdctable.ColPosition])
			}
			if c.row.LastApplied != (codecs.Position{}) && c.row.LastApplied.Compare(c.row.CompleteThrough) <= 0 {
				// The control table says nothing after the cut is applied:
				// the version is the model through it.
				require.Equal(t, want, got, "%s version %d, read by delta-rs, is the model through %s", c.topic, c.row.DeltaVersion, c.row.CompleteThrough.Commit)
				onCut++
				continue
			}
			// Complete through it, and maybe more: every key the model holds
			// is there at its position or a later one, or a later change of it
			// deleted it.
			for k, p := range want {
				if g, ok := got[k]; ok {
					require.GreaterOrEqual(t, g, p, "%s version %d: key %s regressed below the cut", c.topic, c.row.DeltaVersion, k)
					continue
				}
				later := slices.ContainsFunc(recs[c.topic], func(r cdcmodel.Record) bool {
					return r.Change.Op == codecs.OpDelete && fmt.Sprint(r.Change.Key[0]) == k && r.Change.Pos.Hex() > p
				})
				require.True(t, later, "%s version %d: key %s, complete through the cut, is missing", c.topic, c.row.DeltaVersion, k)
			}
		}
		t.Logf("%d versions read by delta-rs hold their cut (%d exactly, equal to the model); change logs at the group's cut %s equal its events",
			len(exact), onCut, cut.Commit)
	}
}
