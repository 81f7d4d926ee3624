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

// LastCheckpointVersion returns the version _last_checkpoint points at, -1 when the table
// has none (or the file cannot be used, as a snapshot load would then list the log).
func (t *Table) LastCheckpointVersion(ctx context.Context) (int64, error) {
	lc, err := readLastCheckpoint(ctx, t.store)
	var ce *CorruptFileError
	switch {
	case errors.As(err, &ce):
		return -1, nil
	case err != nil:
		return -1, err
	case lc == nil:
		return -1, nil
	}
	return lc.Version, nil
}

// CleanupLogs deletes the log files that delta.logRetentionDuration has expired, as Commit
// does after each checkpoint it writes; a caller writing checkpoints with [Table.Checkpoint]
// (and DisableCheckpoints on its writers) calls it after them. It returns how many files
// it deleted.
func (t *Table) CleanupLogs(ctx context.Context, snap *Snapshot) (int, error) {
	if snap == nil {
		return 0, errors.New("deltalog: log cleanup needs a snapshot")
	}
	return t.cleanupExpiredLogs(ctx, snap.metadata.Configuration, snap.protocol)
}
