package merge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestSinkModelPlaceholders runs a dbzgen workload whose updates send
// unchanged LOBs as Debezium's placeholder, through Avro and the decoder,
// in random micro-batches (a snapshot and later updates without their LOB
// share batches), and compares every version with cdcmodel and the final
// LOBs with the source's.
func TestSinkModelPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode Mode
		del  DeleteMode
		seed uint64
	}{{"dv", ModeDV, DeleteHard, 1}, {"cow-soft", ModeCoW, DeleteSoft, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			recs, w, tickets := workloadRecordsOf(t, dbzgen.Tickets(), dbzgen.WorkloadOptions{
				Seed: tc.seed, Keys: 40, Snapshot: true, Placeholders: 0.8, DeleteRatio: 0.1, KeyChangeRatio: 0.05,
				MaxTxEvents: 3, Redeliver: 0.1, RedeliverWindow: 200,
			}, 1200)
			require.Positive(t, w.Counts().Unavailable)
			store := newMemStore()
			s, err := Open(t.Context(), Options{Store: store, TableName: "tickets", Mode: tc.mode, DeleteMode: tc.del, EnableChangeDataFeed: true, TargetFileSize: 8 << 10})
			require.NoError(t, err)
			model := cdcmodel.New(cdcmodel.Options{SoftDelete: tc.del == DeleteSoft})
			rng := rand.New(rand.NewPCG(tc.seed, 7))
			for i := 0; i < len(recs); {
				n := 1 + rng.IntN(150)
				b := Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
				upTo := map[cdcmodel.TopicPartition]int64{}
				for _, r := range recs[i:min(i+n, len(recs))] {
					b.LastOffsets[r.TopicPartition] = r.Offset
					if r.Change.Op != codecs.OpTombstone {
						b.Records = append(b.Records, r)
					}
					tp := cdcmodel.TopicPartition{Topic: r.Topic, Partition: r.Partition}
					model.Feed(cdcmodel.Record{TopicPartition: tp, Offset: r.Offset, Change: r.Change})
					upTo[tp] = r.Offset
				}
				i += n
				res, err := s.Apply(t.Context(), b)
				require.NoError(t, err)
				want, ok := model.Commit(upTo)
				require.Equal(t, ok, res.Committed)
				if !ok {
					continue
				}
				require.Equal(t, int64(want.Unresolved), res.UnavailableUnresolved)
				got, err := cdcmodel.ReadVersion(t.Context(), store, res.Version, model.KeyColumns())
				require.NoError(t, err)
				cols := model.Columns()
				require.Equal(t, cdcmodel.RenderRows(model.Rows(), cols), cdcmodel.RenderRows(got.Rows, cols), "version %d", res.Version)
				require.Equal(t, cdcmodel.RenderChanges(want.Changes, cols), cdcmodel.RenderChanges(got.Changes, cols), "version %d", res.Version)
			}
			// The LOBs are the source's.
			want := map[string][2]any{}
			for _, r := range w.Rows(tickets) {
				want[fmt.Sprint(r["ticket_id"])] = [2]any{r["body"], r["attachment"]}
			}
			got := map[string][2]any{}
			for _, r := range model.Rows() {
				if r[cdctable.ColDeleted] != true {
					got[fmt.Sprint(r["ticket_id"])] = [2]any{r["body"], r["attachment"]}
				}
			}
			require.Equal(t, want, got)
		})
	}
}
