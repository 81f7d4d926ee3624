package merge

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/merge/keyrun"
)

// liveCheck says whether a run entry's row is live in one snapshot: its
// file is live and the file's deletion vector does not hold the row.
type liveCheck struct {
	ctx   context.Context
	x     *keyIndex
	files map[string]*deltalog.Add
	dvs   *deltalog.DVReader
	read  map[string]*roaring64.Bitmap
}

func newLiveCheck(ctx context.Context, x *keyIndex, files map[string]*deltalog.Add, dvs *deltalog.DVReader) *liveCheck {
	return &liveCheck{ctx: ctx, x: x, files: files, dvs: dvs, read: map[string]*roaring64.Bitmap{}}
}

// liveCheckOf is a liveCheck against snap's files.
func liveCheckOf(ctx context.Context, x *keyIndex, store deltalog.Store, snap *deltalog.Snapshot) *liveCheck {
	return newLiveCheck(ctx, x, filesByPath(snap), deltalog.NewDVReader(store))
}

func (c *liveCheck) live(loc rowLoc) (bool, error) {
	if int(loc.file) >= len(c.x.files) {
		return false, fmt.Errorf("%w: file id %d of %d", keyrun.ErrCorrupt, loc.file, len(c.x.files))
	}
	path := c.x.files[loc.file]
	add := c.files[path]
	if path == "" || add == nil {
		return false, nil
	}
	if add.DeletionVector == nil {
		return true, nil
	}
	bm, err := c.deleted(add)
	if err != nil {
		return false, err
	}
	return !bm.Contains(uint64(loc.row)), nil
}

// deleted returns the rows add's deletion vector holds, read once per
// check; the bitmap is shared and must not be changed.
func (c *liveCheck) deleted(add *deltalog.Add) (*roaring64.Bitmap, error) {
	if bm, ok := c.read[add.Path]; ok {
		return bm, nil
	}
	bm, err := c.dvs.Read(c.ctx, add.DeletionVector)
	if err != nil {
		return nil, fmt.Errorf("reading deletion vector of %s: %w", add.Path, err)
	}
	c.read[add.Path] = bm
	return bm, nil
}
