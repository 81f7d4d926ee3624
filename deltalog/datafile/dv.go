package datafile

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// loadDeletionVector reads the bitmap of deleted rows of a logical file.
func loadDeletionVector(ctx context.Context, store deltalog.Store, dv *deltalog.DeletionVector) (*roaring64.Bitmap, error) {
	return deltalog.ReadDeletionVector(ctx, store, dv)
}
