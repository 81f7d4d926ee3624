package deltalog

import (
	"context"
	"errors"
	"fmt"
)

// Checkpoint writes a classic checkpoint of snap's version and points _last_checkpoint at
// it, on demand (the `cdc2delta checkpoint` command); Commit writes them on its own
// cadence. It changes no table state, so it needs no commit and can run beside writers.
func (t *Table) Checkpoint(ctx context.Context, snap *Snapshot) (LastCheckpoint, error) {
	if snap == nil {
		return LastCheckpoint{}, errors.New("deltalog: checkpoint needs a snapshot")
	}
	lc, err := writeCheckpoint(ctx, t.store, snap.Version(), snap.stateActions())
	if err != nil {
		return LastCheckpoint{}, fmt.Errorf("checkpointing version %d: %w", snap.Version(), err)
	}
	return lc, nil
}
