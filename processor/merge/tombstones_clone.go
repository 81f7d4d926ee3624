package merge

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// CloneTombstones writes the tombstones that count at version of src (ADR 0022) into
// dst, a table cloned from that version, as one compacted file, which counts as it is:
// the clone's first commit cannot name batch files of src's versions. Compacted files
// of src may hold deletes after version; carrying them too is the safe side (an event
// they cover is older than a delete the pipeline will apply again). Expired entries
// are kept: loading drops them. It returns how many keys it carried.
func CloneTombstones(ctx context.Context, src *deltalog.Table, version int64, dst deltalog.Store) (int, error) {
	t := newTombstones()
	if err := t.catchUp(ctx, src.Store(), tombstoneView{table: src, version: version}, 0, nil); err != nil {
		return 0, err
	}
	var floor *codecs.Position
	if t.floor != (codecs.Position{}) {
		floor = &t.floor
	}
	if len(t.keys) == 0 && floor == nil {
		return 0, nil
	}
	path := cdctable.TombstoneDir + cdctable.TombstoneCompactedPrefix + uuid.NewString() + ".json"
	if err := putTombstones(ctx, dst, path, t.keys, floor); err != nil {
		return 0, fmt.Errorf("cloning tombstones: %w", err)
	}
	return len(t.keys), nil
}
