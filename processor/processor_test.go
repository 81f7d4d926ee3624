package processor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

func TestEndToEnd(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 1, Keys: 60, Snapshot: true, Redeliver: 0.1, MaxTxEvents: 3})
	pl.produce(600)
	r := pl.start(pl.options("e2e"))
	pl.waitCaughtUp()
	pl.requireModel()
	pl.requireGroupOffsets("e2e")
	require.True(t, r.p.Status().Ready())
}
