package datafile

import (
	"context"
	"errors"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// ErrDeletionVector: the file has a deletion vector that could not be loaded.
var ErrDeletionVector = errors.New("datafile: deletion vector unavailable")

// loadDeletionVector reads the bitmap of deleted rows of a logical file.
func loadDeletionVector(ctx context.Context, store deltalog.Store, dv *deltalog.DeletionVector) (*roaring64.Bitmap, error) {
	return nil, ErrDeletionVector
}
