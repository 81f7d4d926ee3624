package merge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// Tombstone compaction (ADR 0022): every batch with deletes adds a file, so
// they are merged into one when there are more than tombstoneCompactFiles,
// checked on one tombstone write in tombstoneCompactCheck and on load.
const (
	tombstoneCompactFiles = 64
	tombstoneCompactCheck = 16
)

// compact writes every entry of t to one new file, then deletes the files t
// has judged: those merged into it and the orphans. Entries are claims of
// committed batches that hold on their own, so any mix of old and
// compacted files a concurrent reader sees, or a crash between the write
// and the deletes leaves, merges to the same tombstones. Batch files not
// judged yet (above the snapshot's version) stay. It returns how many files
// it deleted.
func (t *tombstones) compact(ctx context.Context, store deltalog.Store) (int, error) {
	if len(t.files) < 2 {
		return 0, nil
	}
	var floor *codecs.Position
	if t.floor != (codecs.Position{}) {
		floor = &t.floor
	}
	deleted := 0
	old := t.files
	t.files = map[string]fileState{}
	if len(t.keys) > 0 || floor != nil {
		path := cdctable.TombstoneDir + cdctable.TombstoneCompactedPrefix + uuid.NewString() + ".json"
		if err := putTombstones(ctx, store, path, t.keys, floor); err != nil {
			t.files = old
			return 0, fmt.Errorf("compacting tombstones: %w", err)
		}
		t.files[path] = fileMerged
	}
	var errs []error
	for path, st := range old {
		if err := store.Delete(ctx, path); err != nil {
			// Still present and still valid (or still an orphan); a later
			// compaction retries.
			t.files[path] = st
			errs = append(errs, fmt.Errorf("deleting compacted tombstones %s: %w", path, err))
			continue
		}
		deleted++
	}
	return deleted, errors.Join(errs...)
}

// compactTombstoneFiles compacts the table's tombstone files that count in
// view when there are more than threshold files. It knows no retention, so
// it keeps expired entries; loading drops them.
func compactTombstoneFiles(ctx context.Context, store deltalog.Store, view tombstoneView, threshold int) (int, error) {
	n := 0
	for info, err := range store.List(ctx, cdctable.TombstoneDir, "") {
		if err != nil {
			return 0, fmt.Errorf("listing tombstones: %w", err)
		}
		if strings.HasSuffix(info.Path, ".json") {
			n++
		}
	}
	if n <= threshold {
		return 0, nil
	}
	t := newTombstones()
	if err := t.catchUp(ctx, store, view, math.MinInt64, nil); err != nil {
		return 0, err
	}
	return t.compact(ctx, store)
}
