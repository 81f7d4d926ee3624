package merge

import (
	"cmp"
	"context"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// followed are the moves of rows a catch-up follows instead of reading the
// files they moved to: those a new file's cdctable.MovedTag lists whose
// inputs were live before the catch-up and are gone after (ADR 0034). An
// input that came and went within the catch-up (a batch's file compacted
// since) has its rows read from the new file instead.
type followed struct {
	moves []fileMove
	from  map[string]bool
	// to are the new files followed whole; ranges, those followed in part:
	// the rows to read of each, in order.
	to     map[string]bool
	ranges map[string][]rowRange
	// toGone are the new files' deletion vectors: rows deleted since the
	// compaction read its inputs, or since it committed.
	toGone map[string]*roaring64.Bitmap
}

// followMoves returns the moves into files of now new since before that it
// can follow. A file whose tag is unreadable, names an input that was not
// live before or is still live, or whose vectors cannot be read is left to
// be read as any new file is: following is only ever a shortcut.
func followMoves(ctx context.Context, dvs *deltalog.DVReader, before, now map[string]*deltalog.Add, log func(msg string, args ...any)) *followed {
	f := &followed{from: map[string]bool{}, to: map[string]bool{}, ranges: map[string][]rowRange{}, toGone: map[string]*roaring64.Bitmap{}}
	for path, add := range now {
		if before[path] != nil || add.Tags[cdctable.MovedTag] == "" {
			continue
		}
		moves, ranges, err := followFile(ctx, dvs, add, before, now)
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
		if len(ranges) > 0 {
			f.ranges[path] = ranges
		} else {
			f.to[path] = true
		}
		for _, m := range moves {
			f.from[m.from] = true
		}
	}
	return f
}

// rowRange is the rows [from, to) of a file.
type rowRange struct{ from, to int64 }

// followFile returns the moves into add and the rows of add to read: those
// of inputs that were not live before (nor are now). Both are nil when an
// input is live still (a commit the catch-up does not span) or none was
// live before.
func followFile(ctx context.Context, dvs *deltalog.DVReader, add *deltalog.Add, before, now map[string]*deltalog.Add) ([]fileMove, []rowRange, error) {
	moved, err := cdctable.MovedOf(add)
	if err != nil {
		return nil, nil, err
	}
	var moves []fileMove
	var ranges []rowRange
	for _, m := range moved {
		switch {
		case now[m.From] != nil:
			return nil, nil, nil
		case before[m.From] == nil:
			ranges = append(ranges, rowRange{m.Offset, m.Offset + m.Live})
			continue
		}
		gone := roaring64.New()
		if m.Read != nil {
			if gone, err = dvs.Read(ctx, m.Read); err != nil {
				return nil, nil, err
			}
		}
		moves = append(moves, fileMove{from: m.From, to: add.Path, gone: gone, rows: m.Live + int64(gone.GetCardinality()), offset: m.Offset})
	}
	if len(moves) == 0 {
		return nil, nil, nil
	}
	return moves, ranges, nil
}

// keep returns the entries of path a catch-up indexes: all of them but for
// a file followed in part, whose rows outside its ranges were followed.
func (f *followed) keep(path string, entries []keyEntry) []keyEntry {
	ranges, ok := f.ranges[path]
	if !ok {
		return entries
	}
	var out []keyEntry
	for _, e := range entries {
		row := int64(e.row)
		i, _ := slices.BinarySearchFunc(ranges, row, func(r rowRange, row int64) int { return cmp.Compare(r.to, row+1) })
		if i < len(ranges) && ranges[i].from <= row && row < ranges[i].to {
			out = append(out, e)
		}
	}
	return out
}
