package merge

import (
	"context"
	"errors"
	"fmt"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// positions returns the txn version per partition of t's latest snapshot,
// read from known (nil: from scratch) as Table.Update reads it: a start
// after an open then reads only the commits since, not the checkpoint
// again. A table not created yet has none. name says which table in errors.
func positions(ctx context.Context, t *deltalog.Table, known *deltalog.Snapshot, name string) (map[cdctable.TopicPartition]int64, error) {
	snap, err := t.Update(ctx, known)
	if errors.Is(err, deltalog.ErrNotExist) {
		return map[cdctable.TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading positions of %s: %w", name, err)
	}
	return cdctable.Offsets(snap), nil
}

// lostRaceRetries is how many times a blind writer (the change log, the
// history table) commits again after losing a race for a version.
const lostRaceRetries = 5

// commitRetrying runs commit and, while it loses a race for its version
// (a conflict, or the version taken), reloads and runs it again, at most
// lostRaceRetries more times.
func commitRetrying(ctx context.Context, commit func(context.Context) (int64, error), reload func(context.Context) error) (int64, error) {
	for attempt := 0; ; attempt++ {
		v, err := commit(ctx)
		var ce *deltalog.ConflictError
		if err == nil || !(errors.As(err, &ce) || errors.Is(err, deltalog.ErrExist)) || attempt >= lostRaceRetries {
			return v, err
		}
		if err := reload(ctx); err != nil {
			return -1, err
		}
	}
}
