package processor

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// TestTrickleFetchesInBatches: records trickling into quiet partitions are
// fetched a few at a time, not one fetch (and one poll of the loop) per
// record. The same trickle with a minimum of 1 byte, franz-go's default,
// shows the count could have been high.
func TestTrickleFetchesInBatches(t *testing.T) {
	const trickle = 150 // records, one every 10ms
	fetches := func(t *testing.T, minBytes int32) int64 {
		brokers, n := fetchCounting(t)
		pl := newPipelineOn(t, dbzgen.WorkloadOptions{Seed: 41, Keys: 30, Snapshot: true}, brokers, "fetch")
		pl.produce(60)
		opts := pl.options("fetch")
		opts.ClientOptions = []kgo.Opt{kgo.HeartbeatInterval(100 * time.Millisecond)} // the fetch defaults stand
		opts.FetchMinBytes = minBytes
		pl.start(opts)
		pl.waitCaughtUp()
		n.Store(0)
		start := time.Now()
		// The trickle's rate is the input under test: a ticker paces it.
		tick := time.NewTicker(10 * time.Millisecond)
		for range trickle {
			pl.produce(1)
			<-tick.C
		}
		tick.Stop()
		pl.waitCaughtUp()
		got := n.Load()
		t.Logf("fetch_min_bytes %d (0: default): %d fetches for %d records in %v", minBytes, got, trickle, time.Since(start).Round(time.Millisecond))
		return got
	}
	batched := fetches(t, 0) // the default: 1 MiB or 100ms
	perRecord := fetches(t, 1)
	require.Less(t, batched, int64(trickle/3), "a fetch waits up to 100ms for more")
	require.Greater(t, perRecord, 2*batched, "with a 1-byte minimum the broker answers nearly every record")
}

// fetchCounting starts an in-process broker that counts the fetch requests
// it serves.
func fetchCounting(t *testing.T) ([]string, *atomic.Int64) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	n := new(atomic.Int64)
	cluster.ControlKey(kmsg.Fetch.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		n.Add(1)
		return nil, nil, false // counted, then served as usual
	})
	return cluster.ListenAddrs(), n
}
