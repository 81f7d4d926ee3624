package merge

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// followed are the moves of rows a catch-up follows instead of reading the
// files they moved to: those a new file's cdctable.MovedTag lists, all of
// whose inputs were live before the catch-up and are gone after (ADR 0034).
type followed struct {
	moves []fileMove
	from  map[string]bool
	to    map[string]bool
	// toGone are the new files' deletion vectors: rows deleted since the
	// compaction read its inputs, or since it committed.
	toGone map[string]*roaring64.Bitmap
}

// followMoves returns the moves into files of now new since before that it
// can follow. A file whose tag is unreadable, names an input that was not
// live before or is still live, or whose vectors cannot be read is left to
// be read as any new file is: following is only ever a shortcut.
func followMoves(ctx context.Context, dvs *deltalog.DVReader, before, now map[string]*deltalog.Add, log func(msg string, args ...any)) *followed {
	f := &followed{from: map[string]bool{}, to: map[string]bool{}, toGone: map[string]*roaring64.Bitmap{}}
	for path, add := range now {
		if before[path] != nil || add.Tags[cdctable.MovedTag] == "" {
			continue
		}
		moves, err := followFile(ctx, dvs, add, before, now)
		if err != nil {
			log("reading a compacted file's keys instead of following its rows", "file", path, "err", err)
			continue
		}
		if moves == nil {
			continue
		}
		if dv := add.DeletionVector; dv != nil {
			bm, err := dvs.Read(ctx, dv)
			if err != nil {
				log("reading a compacted file's keys instead of following its rows", "file", path, "err", err)
				continue
			}
			f.toGone[path] = bm
		}
		f.moves = append(f.moves, moves...)
		f.to[path] = true
		for _, m := range moves {
			f.from[m.from] = true
		}
	}
	return f
}

// followFile returns the moves into add, nil when one of its inputs was not
// live before or is live still (a commit the catch-up does not span).
func followFile(ctx context.Context, dvs *deltalog.DVReader, add *deltalog.Add, before, now map[string]*deltalog.Add) ([]fileMove, error) {
	moved, err := cdctable.MovedOf(add)
	if err != nil {
		return nil, err
	}
	out := make([]fileMove, 0, len(moved))
	for _, m := range moved {
		if before[m.From] == nil || now[m.From] != nil {
			return nil, nil
		}
		gone := roaring64.New()
		if m.Read != nil {
			if gone, err = dvs.Read(ctx, m.Read); err != nil {
				return nil, err
			}
		}
		out = append(out, fileMove{from: m.From, to: add.Path, gone: gone, rows: m.Live + int64(gone.GetCardinality()), offset: m.Offset})
	}
	return out, nil
}
