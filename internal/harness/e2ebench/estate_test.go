package e2ebench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEstateSamplesNameTheirTables: each sampled event is counted for the
// table it was produced to. ProduceSync returns results as they complete,
// so results matched to tables by position mix the classes' freshness.
func TestEstateSamplesNameTheirTables(t *testing.T) {
	cfg := EstateConfig{Classes: []EstateClass{{Name: "a", Tables: 20, Rows: 50}, {Name: "b", Tables: 20, Rows: 50}},
		Rate: 20_000, Duration: time.Second, Seed: 3}.withDefaults()
	src, err := newEstateSource(t.Context(), cfg)
	require.NoError(t, err)
	defer src.close()
	sent, err := src.produceZipf(t.Context(), cfg, time.Now())
	require.NoError(t, err)
	require.NotEmpty(t, sent)
	for _, e := range sent {
		require.Equal(t, src.tables[e.table].Topic(), e.tp.Topic, "event at offset %d", e.offset)
	}
}
