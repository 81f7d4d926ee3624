package processor

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// crashState is the durable world a crashed process leaves: the tables'
// objects and the group's committed offsets at one instant.
type crashState struct {
	stores map[string]*memstore.Store // by table path
	group  kadm.OffsetResponses
}

// capture clones every table store and fetches the group's offsets.
func (pl *pipeline) capture(group string) crashState {
	pl.t.Helper()
	pl.memMu.Lock()
	st := crashState{stores: map[string]*memstore.Store{}}
	for path, mt := range pl.mem {
		st.stores[path] = mt.durable.Clone()
	}
	pl.memMu.Unlock()
	resp, err := pl.adm.FetchOffsets(pl.t.Context(), group)
	require.NoError(pl.t, err)
	require.NoError(pl.t, resp.Error())
	st.group = resp
	return st
}

// restore makes a crash state the world a restarted process finds: the
// cloned stores and, with the group empty, the captured offsets (their
// metadata included), as if nothing happened after the crash instant.
func (pl *pipeline) restore(group string, st crashState) {
	pl.t.Helper()
	pl.memMu.Lock()
	pl.mem = map[string]memTable{}
	for path, s := range st.stores {
		pl.mem[path] = newMemTable(s)
	}
	pl.memMu.Unlock()
	offs := st.group.Offsets()
	for _, topic := range pl.topics() {
		for p := range int32(testPartitions) {
			_, ok := offs.Lookup(topic, p)
			require.True(pl.t, ok, "%s/%d has a group offset before the crash", topic, p)
		}
	}
	resp, err := pl.adm.CommitOffsets(pl.t.Context(), group, offs)
	require.NoError(pl.t, err)
	require.NoError(pl.t, resp.Error())
}

// logWalk is what reading every commit of a table's log finds.
type logWalk struct {
	version        int64           // the last commit, -1 for none
	referenced     map[string]bool // data files named by an add or a remove
	txnRegressions []string        // commits whose txn is not above the previous one
}

// walkLog reads every commit of the table in store, in order. A commit
// carrying a txn at or below an earlier one re-applied a batch.
func walkLog(t testing.TB, store deltalog.Store) logWalk {
	t.Helper()
	ctx := t.Context()
	w := logWalk{version: -1, referenced: map[string]bool{}}
	last := map[string]int64{}
	for v := int64(0); ; v++ {
		rc, err := store.Get(ctx, fmt.Sprintf("_delta_log/%020d.json", v))
		if err != nil {
			require.ErrorIs(t, err, deltalog.ErrNotExist)
			break
		}
		data, err := io.ReadAll(rc)
		require.NoError(t, rc.Close())
		require.NoError(t, err)
		for line := range strings.Lines(string(data)) {
			a, ok, err := deltalog.ParseLogLine([]byte(line))
			require.NoError(t, err)
			switch {
			case !ok:
			case a.Add != nil:
				w.referenced[a.Add.Path] = true
			case a.Remove != nil:
				w.referenced[a.Remove.Path] = true
			case a.Txn != nil:
				if prev, seen := last[a.Txn.AppID]; seen && a.Txn.Version <= prev {
					w.txnRegressions = append(w.txnRegressions, fmt.Sprintf("v%d %s: %d after %d", v, a.Txn.AppID, a.Txn.Version, prev))
				}
				last[a.Txn.AppID] = a.Txn.Version
			}
		}
		w.version = v
	}
	return w
}

// orphanFiles lists the data files in store that no commit references.
func orphanFiles(t testing.TB, store deltalog.Store) []string {
	t.Helper()
	ref := walkLog(t, store).referenced
	var out []string
	for info, err := range store.List(t.Context(), "", "") {
		require.NoError(t, err)
		if strings.HasSuffix(info.Path, ".parquet") && !strings.HasPrefix(info.Path, "_delta_log/") && !ref[info.Path] {
			out = append(out, info.Path)
		}
	}
	return out
}

// failGroupCommits makes the cluster refuse the group's offset commits
// while on is set, as a coordinator does that cannot take them.
func failGroupCommits(c *kfake.Cluster, group string, on *atomic.Bool, commits *atomic.Int64) {
	c.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.OffsetCommitRequest)
		if r.Group == group {
			commits.Add(1)
		}
		if !on.Load() || r.Group != group {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// TestCrashPhases crashes the processor at each phase of a batch's commit
// and restarts it on the durable state the crash left (the table stores
// cloned and the group offsets fetched at that instant): the restart
// re-reads exactly the records past each table's txn, applies them once,
// repairs the group offset to txn+1, and unreferenced data files of the
// lost commit change nothing.
func TestCrashPhases(t *testing.T) {
	type phase int
	const (
		logCommitFails  phase = iota // data files written, the log entry not
		logCommitLands               // the log entry written, the process dies before the group commit
		groupCommitFail              // Delta committed, the group refused the commit
		bothCommitted                // Delta and the group committed, then the crash
	)
	for _, tc := range []struct {
		name  string
		phase phase
	}{
		{"data files written, log commit fails", logCommitFails},
		{"log commit lands, crash before the group commit", logCommitLands},
		{"delta committed, group commit refused", groupCommitFail},
		{"both committed, then crash", bothCommitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
			require.NoError(t, err)
			t.Cleanup(cluster.Close)
			group := "crash"
			failing := new(atomic.Bool)
			groupCommits := new(atomic.Int64) // the group's offset commits, failed or not
			failGroupCommits(cluster, group, failing, groupCommits)
			// recommits waits until the processor has committed the group's offsets n more
			// times: its idle re-commits come every RecommitInterval.
			recommits := func(n int64) {
				t.Helper()
				from := groupCommits.Load()
				require.Eventually(t, func() bool { return groupCommits.Load() >= from+n }, 20*time.Second, 5*time.Millisecond,
					"%d more group commits", n)
			}
			pl := newPipelineOn(t, dbzgen.WorkloadOptions{Seed: 21, Keys: 40, Snapshot: true, Redeliver: 0.1, MaxTxEvents: 3, KeyChangeRatio: 0.05},
				cluster.ListenAddrs(), "faults")
			pl.mem = map[string]memTable{}
			opts := pl.options(group)

			// Warm up: every partition is in Delta and in the group.
			pl.produce(150)
			r1 := pl.start(opts)
			pl.waitCaughtUp()
			pl.requireGroupOffsets(group)
			before := map[string]int64{}
			beforeRows := map[string][]string{}
			for _, tb := range pl.tables {
				before[tablePath(tb)] = walkLog(t, pl.store(tb)).version
				beforeRows[tablePath(tb)] = pl.tableRows(tb)
			}

			// Arm the crash instant, then feed the next batches.
			var (
				once    sync.Once
				crash   crashState
				crashed = make(chan string, 1) // the table whose commit crashed
			)
			switch tc.phase {
			case logCommitFails, logCommitLands:
				for _, tb := range pl.tables {
					path := tablePath(tb)
					pl.memStore(path).Inject(faultstore.Fault{
						Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/*.json", Nth: 1,
						Err:        fmt.Errorf("%w: injected", deltalog.ErrUnavailable),
						AfterWrite: tc.phase == logCommitLands,
						Then: func() {
							once.Do(func() {
								crash = pl.capture(group)
								crashed <- path
							})
						},
					})
				}
			case groupCommitFail:
				failing.Store(true)
			}
			pl.produce(200)

			var crashedPath string
			switch tc.phase {
			case logCommitFails, logCommitLands:
				select {
				case crashedPath = <-crashed:
				case <-time.After(20 * time.Second):
					t.Fatal("no commit reached the log")
				}
				// The live process recovers from the fault by itself
				// (the write is retried; after a lost acknowledgement it
				// finds its own commit), applying nothing twice.
				pl.waitCaughtUp()
				pl.requireModel()
				for _, tb := range pl.tables {
					require.Empty(t, walkLog(t, pl.store(tb)).txnRegressions, "live retry of %s", tablePath(tb))
				}
			case groupCommitFail:
				pl.waitCaughtUp()
				recommits(2) // idle re-commits fail too
				crash = pl.capture(group)
			case bothCommitted:
				pl.waitCaughtUp()
				pl.requireGroupOffsets(group)
				crash = pl.capture(group)
			}
			r1.close(t)
			failing.Store(false)

			// What the crash left.
			crashTxn := map[cdctable.TopicPartition]int64{}
			crashVersion := map[string]int64{}
			stale := 0
			for _, tb := range pl.tables {
				path := tablePath(tb)
				store := crash.stores[path]
				w := walkLog(t, store)
				crashVersion[path] = w.version
				tbl, err := deltalog.Open(t.Context(), store)
				require.NoError(t, err)
				snap, err := tbl.Snapshot(t.Context())
				require.NoError(t, err)
				for p := range int32(testPartitions) {
					tp := cdctable.TopicPartition{Topic: tb.Topic(), Partition: p}
					v, ok := snap.TxnVersion(tp.AppID())
					require.True(t, ok, "%s has a txn before the crash", tp.AppID())
					crashTxn[tp] = v
					if o, ok := crash.group.Lookup(tp.Topic, tp.Partition); ok && o.At < v+1 {
						stale++
					}
				}
				orphans := orphanFiles(t, store)
				switch {
				case path == crashedPath && tc.phase == logCommitFails:
					require.Equal(t, before[path], w.version, "the failed commit is not visible")
					require.NotEmpty(t, orphans, "the failed commit's data files were written")
				case path == crashedPath && tc.phase == logCommitLands:
					require.Equal(t, before[path]+1, w.version, "the commit landed")
				}
			}
			switch tc.phase {
			case logCommitLands, groupCommitFail:
				require.Positive(t, stale, "the group offset lags the Delta txn")
			case bothCommitted:
				require.Zero(t, stale)
			}
			if tc.phase == logCommitFails {
				require.Equal(t, beforeRows[crashedPath], pl.tableRowsIn(crash.stores[crashedPath], crashedPath),
					"no visible change")
			}

			// Restart on the crash state.
			pl.restore(group, crash)
			var want int64
			for tp, end := range pl.endOffsets(pl.topics()...) {
				want += end - (crashTxn[tp] + 1)
			}
			t.Logf("crash in %q: versions %v, stale group offsets %d, records to re-read %d", crashedPath, crashVersion, stale, want)
			r2 := pl.start(opts)
			require.Eventually(t, func() bool {
				return metricSum(t, r2.reg, "cdc2delta_events_consumed_total") == float64(want)
			}, 20*time.Second, 20*time.Millisecond, "the restart re-reads the records past the txn: %d", want)
			require.Eventually(t, func() bool { return r2.p.Status().Partitions == len(pl.tables)*testPartitions },
				20*time.Second, 20*time.Millisecond, "the restart owns every partition")
			pl.waitCaughtUp()
			pl.requireGroupOffsets(group)
			recommits(3) // cycles enough to (wrongly) re-read anything
			pl.requireModel()
			require.Equal(t, float64(want), metricSum(t, r2.reg, "cdc2delta_events_consumed_total"), "nothing read twice")
			for _, tb := range pl.tables {
				path := tablePath(tb)
				w := walkLog(t, pl.store(tb))
				require.Empty(t, w.txnRegressions, "a batch of %s applied twice", path)
				if want == 0 {
					require.Equal(t, crashVersion[path], w.version, "%s: nothing to re-apply, no commit", path)
				}
				if path == crashedPath && tc.phase == logCommitFails {
					require.Greater(t, w.version, crashVersion[path], "the lost batch is applied on restart")
					require.NotEmpty(t, orphanFiles(t, pl.store(tb)), "orphan files stay, unread")
				}
			}
			if tc.phase == groupCommitFail || tc.phase == bothCommitted {
				require.Zero(t, want, "Delta held every record")
			}
		})
	}
}

// tableRowsIn renders the rows of the table at path held in store, like
// tableRows.
func (pl *pipeline) tableRowsIn(store *memstore.Store, path string) []string {
	pl.t.Helper()
	pl.memMu.Lock()
	saved := pl.mem[path]
	pl.mem[path] = newMemTable(store)
	pl.memMu.Unlock()
	defer func() {
		pl.memMu.Lock()
		pl.mem[path] = saved
		pl.memMu.Unlock()
	}()
	for _, tb := range pl.tables {
		if tablePath(tb) == path {
			return pl.tableRows(tb)
		}
	}
	pl.t.Fatalf("no table at %s", path)
	return nil
}
