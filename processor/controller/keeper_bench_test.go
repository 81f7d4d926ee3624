package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// BenchmarkKeeper shows what keeping the control table costs at 500 tables
// (CDC2DELTA_KEEPER_BENCH_TABLES), one partition each, every one of which
// committed once since the last round (a busy estate: at the defaults a
// trickling table commits every 10 s, twice the round's interval). It
// reports the CPU of a round and, at the default interval of a round every
// 5 s, the share of a core. The tables' commits are written between rounds
// and not counted; the log, Kafka (kfake, in process) and the control
// table's commit are.
func BenchmarkKeeper(b *testing.B) {
	n, err := strconv.Atoi(os.Getenv("CDC2DELTA_KEEPER_BENCH_TABLES"))
	if err != nil || n <= 0 {
		n = 500
	}
	ctx := b.Context()
	topics := make([]string, n)
	for i := range topics {
		topics[i] = fmt.Sprintf("p.db.dbo.t%04d", i)
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topics...))
	require.NoError(b, err)
	b.Cleanup(cluster.Close)
	var mu sync.Mutex
	stores := map[string]deltalog.Store{}
	openStore := func(_ context.Context, path string) (deltalog.Store, error) {
		mu.Lock()
		defer mu.Unlock()
		if stores[path] == nil {
			stores[path] = memstore.New(memstore.Options{})
		}
		return stores[path], nil
	}
	type source struct {
		tbl  *deltalog.Table
		snap *deltalog.Snapshot
		tp   cdctable.TopicPartition
		off  int64
	}
	srcs := make([]*source, n)
	const schema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}`
	for i, topic := range topics {
		store, err := openStore(ctx, fmt.Sprintf("db/dbo/t%04d", i))
		require.NoError(b, err)
		tbl, err := deltalog.Open(ctx, store)
		require.NoError(b, err)
		meta := deltalog.Metadata{ID: fmt.Sprintf("t%04d", i), Format: deltalog.Format{Provider: "parquet"}, SchemaString: schema}
		res, err := tbl.Commit(ctx, nil, []deltalog.Action{{Protocol: &deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
			{Metadata: &meta}}, deltalog.Operation{Name: deltalog.OpCreateTable})
		require.NoError(b, err)
		srcs[i] = &source{tbl: tbl, snap: res.Snapshot, tp: cdctable.TopicPartition{Topic: topic}}
	}
	commitAll := func(round int) {
		for _, s := range srcs {
			s.off++
			var l codecs.LSN
			l[8], l[9] = byte(round>>8), byte(round)
			p := codecs.Position{Commit: l, Change: l, Serial: 1}
			prog := cdctable.Progress{Partitions: map[string]cdctable.PartitionProgress{
				s.tp.AppID(): {Pos: p.Hex(), Millis: time.Now().UnixMilli()}}}
			js, err := json.Marshal(prog)
			require.NoError(b, err)
			res, err := s.tbl.Commit(ctx, s.snap, []deltalog.Action{{Txn: &deltalog.Txn{AppID: s.tp.AppID(), Version: s.off}}},
				deltalog.Operation{Name: deltalog.OpWrite, Extra: map[string]string{cdctable.ProgressField: string(js)}})
			require.NoError(b, err)
			s.snap = res.Snapshot
		}
	}
	opts := testOptions(b, cluster.ListenAddrs())
	opts.Topics, opts.OpenStore = topics, openStore
	c, err := New(opts)
	require.NoError(b, err)
	b.Cleanup(c.Close)
	commitAll(0)
	require.NoError(b, c.Round(ctx)) // the first round opens every table
	var cpu time.Duration
	round := 0
	for b.Loop() {
		round++
		b.StopTimer()
		commitAll(round)
		b.StartTimer()
		cpu0 := processCPU()
		require.NoError(b, c.Round(ctx))
		cpu += processCPU() - cpu0
	}
	st, err := c.ctl.Read(ctx)
	require.NoError(b, err)
	require.Len(b, st.Tables, n, "every table has its row")
	perRound := cpu / time.Duration(b.N)
	b.ReportMetric(float64(perRound.Microseconds())/1000, "cpu-ms/round")
	b.ReportMetric(100*perRound.Seconds()/DefaultInterval.Seconds(), "core-%")
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
