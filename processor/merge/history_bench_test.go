package merge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// BenchmarkHistoryBatch measures one batch of 1,000 in-order updates of
// random keys, applied to a current-state table (Sink) and to a history
// table (History) that already hold the same keys' rows, at two table
// sizes, in memory. BenchmarkHistoryWorkloads is the comparison on the
// bench workloads' shapes, side by side in one run.
func BenchmarkHistoryBatch(b *testing.B) {
	for _, keys := range []int{10_000, 100_000} {
		for _, kind := range []string{"table", "history"} {
			b.Run(fmt.Sprintf("keys=%d/%s", keys, kind), func(b *testing.B) {
				store := memstore.New(memstore.Options{})
				var apply func(Batch) error
				if kind == "table" {
					s, err := Open(b.Context(), Options{Store: store, TableName: "items"})
					require.NoError(b, err)
					apply = func(bt Batch) error { _, err := s.Apply(b.Context(), bt); return err }
				} else {
					h, err := OpenHistory(b.Context(), HistoryOptions{Store: store, TableName: "items_history"})
					require.NoError(b, err)
					apply = func(bt Batch) error { _, err := h.Apply(b.Context(), bt); return err }
				}
				g := &histGen{r: rand.New(rand.NewPCG(1, 2)), alive: map[int32]bool{}, name: map[int32]string{}}
				var off int64
				tp := cdctable.TopicPartition{Topic: "t", Partition: 0}
				batch := func(ops []codecs.Change) Batch {
					bt := Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
					for _, c := range ops {
						bt.Records = append(bt.Records, Record{TopicPartition: tp, Offset: off, Change: c})
						bt.LastOffsets[tp] = off
						off++
					}
					return bt
				}
				// Load: the keys in batches of 10,000 inserts.
				for k := 0; k < keys; k += 10_000 {
					var ops []codecs.Change
					for id := k; id < min(keys, k+10_000); id++ {
						g.alive[int32(id)] = true
						ops = append(ops, g.change(codecs.OpCreate, int32(id)))
					}
					require.NoError(b, apply(batch(ops)))
				}
				next := func() Batch {
					ops := make([]codecs.Change, 1000)
					for i := range ops {
						ops[i] = g.change(codecs.OpUpdate, int32(g.r.IntN(keys)))
					}
					return batch(ops)
				}
				b.ResetTimer()
				for b.Loop() {
					b.StopTimer()
					bt := next()
					b.StartTimer()
					require.NoError(b, apply(bt))
				}
			})
		}
	}
}
