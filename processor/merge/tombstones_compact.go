package merge

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Tombstone compaction (ADR 0022): every batch with deletes adds a file, so
// they are merged into one when there are more than tombstoneCompactFiles,
// checked on one tombstone write in tombstoneCompactCheck and on load.
const (
	tombstoneCompactFiles = 64
	tombstoneCompactCheck = 16
)

// compact writes every entry of t to one new file, then deletes the files t
// has read. Entries are claims that hold on their own, so any mix of old and
// compacted files a concurrent reader sees, or a crash between the write
// and the deletes leaves, merges to the same tombstones. It returns how
// many files it deleted.
func (t *tombstones) compact(ctx context.Context, store deltalog.Store) (int, error) {
	if len(t.read) < 2 {
		return 0, nil
	}
	var floor *codecs.Position
	if t.floor != (codecs.Position{}) {
		floor = &t.floor
	}
	deleted := 0
	old := t.read
	t.read = map[string]bool{}
	if len(t.keys) > 0 || floor != nil {
		data, err := encodeTombstones(t.keys, floor)
		if err != nil {
			t.read = old
			return 0, err
		}
		path := tombstoneDir + "compacted-" + uuid.NewString() + ".json"
		if err := store.PutIfAbsent(ctx, path, data); err != nil {
			t.read = old
			return 0, fmt.Errorf("compacting tombstones into %s: %w", path, err)
		}
		t.read[path] = true
	}
	var errs []error
	for path := range old {
		if err := store.Delete(ctx, path); err != nil {
			// Still present and still valid; a later compaction retries.
			t.read[path] = true
			errs = append(errs, fmt.Errorf("deleting compacted tombstones %s: %w", path, err))
			continue
		}
		deleted++
	}
	return deleted, errors.Join(errs...)
}

// compactTombstoneFiles compacts the table's tombstone files when there are
// more than threshold. It knows no retention, so it keeps expired entries;
// loading drops them.
func compactTombstoneFiles(ctx context.Context, store deltalog.Store, threshold int) (int, error) {
	t := newTombstones()
	if err := t.catchUp(ctx, store, math.MinInt64); err != nil {
		return 0, err
	}
	if len(t.read) <= threshold {
		return 0, nil
	}
	return t.compact(ctx, store)
}
