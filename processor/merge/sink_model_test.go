package merge

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// workloadRecords encodes n events of a dbzgen workload over the orders
// table and decodes them as the consumer would, spreading them over three
// partitions by key hash as Kafka's default partitioner does.
func workloadRecords(t testing.TB, wopts dbzgen.WorkloadOptions, n int) ([]Record, *dbzgen.Workload, *dbzgen.Table) {
	t.Helper()
	return workloadRecordsOf(t, dbzgen.Orders(), wopts, n)
}

// workloadRecordsOf is workloadRecords over the table def.
func workloadRecordsOf(t testing.TB, def dbzgen.TableDef, wopts dbzgen.WorkloadOptions, n int) ([]Record, *dbzgen.Workload, *dbzgen.Table) {
	t.Helper()
	reg, err := registry.New()
	require.NoError(t, err)
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(srv.Close)
	cl, err := sr.NewClient(sr.URLs(srv.URL))
	require.NoError(t, err)
	src, err := codecs.NewRegistry(codecs.RegistryOptions{URLs: []string{srv.URL}})
	require.NoError(t, err)
	dec, err := codecs.NewDecoder(src, codecs.Options{})
	require.NoError(t, err)
	gen := dbzgen.New(cl, dbzgen.DefaultOptions())
	orders, err := gen.Table(def)
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(wopts, orders)
	require.NoError(t, err)
	offsets := map[int32]int64{}
	recs := make([]Record, 0, n)
	for range n {
		ev := w.Next()
		key, value, err := gen.Encode(t.Context(), ev)
		require.NoError(t, err)
		h := fnv.New32a()
		h.Write(key)
		part := int32(h.Sum32() % 3)
		ch, err := dec.DecodeRecord(t.Context(), orders.Topic(), part, offsets[part], key, value)
		require.NoError(t, err)
		recs = append(recs, Record{TopicPartition: cdctable.TopicPartition{Topic: orders.Topic(), Partition: part}, Offset: offsets[part], Change: ch})
		offsets[part]++
	}
	return recs, w, orders
}

// expectedRows is the model: per key, the row of the event with the highest
// position, or nothing when that event is a delete.
func expectedRows(t *testing.T, recs []Record) map[string][]any {
	t.Helper()
	latest := map[string]*Record{}
	for i := range recs {
		r := &recs[i]
		if r.Change.Op == codecs.OpTombstone {
			continue
		}
		k := fmt.Sprint(r.Change.Key...)
		if old, ok := latest[k]; !ok || compareEvents(r, old) > 0 {
			latest[k] = r
		}
	}
	out := map[string][]any{}
	for k, r := range latest {
		if r.Change.Op == codecs.OpDelete {
			continue
		}
		out[k] = slices.Clone(r.Change.Row)
	}
	return out
}

// tableRows reads the table back, source columns only, keyed like expectedRows.
func tableRows(t *testing.T, store deltalog.Store, ncols int, keyCol string) map[string][]any {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	ki := -1
	for i, f := range snap.Schema().Fields {
		if f.Name == keyCol {
			ki = i
		}
	}
	out := map[string][]any{}
	for _, add := range snap.Files() {
		rows, err := datafile.Read(t.Context(), store, &add, snap.Schema(), datafile.ReadOptions{Properties: snap.Metadata().Configuration})
		require.NoError(t, err)
		for _, r := range rows {
			k := fmt.Sprint(r[ki])
			require.NotContains(t, out, k, "key stored twice")
			out[k] = r[:ncols]
		}
	}
	return out
}

func TestSinkModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode Mode
		seed uint64
	}{{"dv", ModeDV, 1}, {"cow", ModeCoW, 2}, {"dv-seed3", ModeDV, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			recs, w, orders := workloadRecords(t, dbzgen.WorkloadOptions{
				Seed: tc.seed, Keys: 60, Snapshot: true, DeleteRatio: 0.15, KeyChangeRatio: 0.05,
				MaxTxEvents: 4, Redeliver: 0.2, RedeliverWindow: 400,
			}, 1500)
			rng := rand.New(rand.NewPCG(tc.seed, 99))
			store := newMemStore()
			s, err := Open(t.Context(), Options{Store: store, TableName: "orders", Mode: tc.mode, TargetFileSize: 4 << 10})
			require.NoError(t, err)
			var batches []Batch
			for i := 0; i < len(recs); {
				n := 1 + rng.IntN(80)
				b := Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
				for _, r := range recs[i:min(i+n, len(recs))] {
					b.LastOffsets[r.TopicPartition] = r.Offset
					if r.Change.Op != codecs.OpTombstone {
						b.Records = append(b.Records, r)
					}
				}
				i += n
				batches = append(batches, b)
			}
			for i, b := range batches {
				_, err := s.Apply(t.Context(), b)
				require.NoError(t, err, "batch %d", i)
				if rng.IntN(5) == 0 {
					// A replay of an earlier batch (a rewind) changes nothing.
					res, err := s.Apply(t.Context(), batches[rng.IntN(i+1)])
					require.NoError(t, err)
					require.False(t, res.Committed)
				}
				if rng.IntN(10) == 0 {
					// A restart rebuilds the index from the table.
					s, err = Open(t.Context(), Options{Store: store, TableName: "orders", Mode: tc.mode, TargetFileSize: 4 << 10})
					require.NoError(t, err)
				}
			}
			ncols := len(recs[0].Change.Layout.Columns)
			got := tableRows(t, store, ncols, "order_id")
			require.Equal(t, expectedRows(t, recs), got)
			// The source's own final state has the same keys.
			var keys []string
			for _, r := range w.Rows(orders) {
				keys = append(keys, fmt.Sprint(r["order_id"]))
			}
			require.ElementsMatch(t, keys, mapsKeys(got))
		})
	}
}

func mapsKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
