package processor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// cdc2delta_arrival_delay_seconds counts from the records' Kafka
// timestamps: records stamped a minute back arrive a minute late, fresh
// ones within seconds.
func TestArrivalDelay(t *testing.T) {
	for _, tc := range []struct {
		name     string
		age      time.Duration
		min, max float64 // seconds, of every batch's first record
	}{
		{"fresh", 0, 0, 10},
		{"a minute old", time.Minute, 60, 120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 5, Keys: 30})
			stamp := time.Now().Add(-tc.age)
			var recs []*kgo.Record
			for range 200 {
				ev := pl.w.Next()
				key, value, err := pl.gen.Encode(t.Context(), ev)
				require.NoError(t, err)
				recs = append(recs, &kgo.Record{Topic: pl.gen.Topic(ev), Key: key, Value: value, Timestamp: stamp})
			}
			require.NoError(t, pl.producer.ProduceSync(t.Context(), recs...).FirstErr())
			r := pl.start(pl.options("arrival"))
			pl.waitCaughtUp()
			mfs, err := r.reg.Gather()
			require.NoError(t, err)
			var n uint64
			for _, mf := range mfs {
				if mf.GetName() != "cdc2delta_arrival_delay_seconds" {
					continue
				}
				for _, m := range mf.GetMetric() {
					h := m.GetHistogram()
					n += h.GetSampleCount()
					mean := h.GetSampleSum() / float64(h.GetSampleCount())
					require.GreaterOrEqual(t, mean, tc.min)
					require.Less(t, mean, tc.max)
				}
			}
			require.Positive(t, n, "a batch per table at least")
		})
	}
}
