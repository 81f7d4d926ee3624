package tableops

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// maxOptimizeRebases bounds how often one Optimize carries its rewrite past
// concurrent commits before it gives way.
const maxOptimizeRebases = 4

// errNoRebase means a concurrent commit did more than delete rows of the
// inputs: the rewrite no longer holds the table's rows.
var errNoRebase = errors.New("tableops: the compaction's inputs changed beyond deleted rows")

// compacted is one bin's rewrite: its inputs as last accounted for, those a
// concurrent commit removed, the deletion vectors they were read with, the
// rows read from each (its live rows then), and the files written from them,
// in order: the rows of input i follow those of inputs 0..i-1.
type compacted struct {
	inputs  []deltalog.Add
	dropped []bool
	read    []*deltalog.DeletionVector
	live    []int64
	outputs []deltalog.Add
	// sorted bins' rows do not keep their inputs' order.
	sorted bool
	// gone holds, per output, the rows deleted in the inputs since they
	// were read; nil when none.
	gone []*roaring64.Bitmap
	// ends holds, per output, the rows written up to its end; nil until
	// a rebase needs it.
	ends []int64
}

// rebase carries the rewrite of bins from old to cur, where concurrent
// commits (a writer's MERGE, most often) gave some inputs new deletion
// vectors or removed them: the rows a vector newly deletes, and every row of
// a removed input, are marked deleted in the outputs, and a removed input is
// no longer removed by the compaction, so it holds exactly cur's rows. A
// removed input's rows that are still live (a copy-on-write rewrite, say)
// are in cur's other files, where the remover put them. Any other change to
// the inputs (a vector that lost rows or was dropped), to the metadata or to
// the protocol gives errNoRebase. Only unsorted rewrites map rows this way.
func rebase(ctx context.Context, store deltalog.Store, old, cur *deltalog.Snapshot, bins []*compacted) error {
	if !old.Metadata().Equal(cur.Metadata()) || !old.Protocol().Equal(cur.Protocol()) {
		return fmt.Errorf("%w: metadata or protocol changed", errNoRebase)
	}
	files := cur.Files()
	now := make(map[string]*deltalog.Add, len(files))
	for i := range files {
		now[files[i].Path] = &files[i]
	}
	dvs := deltalog.NewDVReader(store)
	var touched []*compacted
	for _, b := range bins {
		changed := false
		var offset int64
		for i, in := range b.inputs {
			n, ok := now[in.Path]
			switch {
			case b.dropped[i]:
			case !ok:
				if err := b.markRange(offset, b.live[i]); err != nil {
					return err
				}
				b.dropped[i], changed = true, true
			case sameDV(in.DeletionVector, n.DeletionVector):
			case n.DeletionVector == nil:
				return fmt.Errorf("%w: the deletion vector of %s was dropped", errNoRebase, in.Path)
			default:
				if err := b.markGone(ctx, dvs, i, offset, n.DeletionVector); err != nil {
					return err
				}
				b.inputs[i], changed = *n, true
			}
			offset += b.live[i]
		}
		if changed {
			touched = append(touched, b)
		}
	}
	for _, b := range touched {
		if err := b.writeGone(ctx, store); err != nil {
			return err
		}
	}
	return nil
}

// markGone records in b.gone the rows that dv deletes in input i beyond its
// accounted vector; offset is the first output row (across b.outputs) of the
// input's rows.
func (b *compacted) markGone(ctx context.Context, dvs *deltalog.DVReader, i int, offset int64, dv *deltalog.DeletionVector) error {
	in := b.inputs[i]
	read := func(dv *deltalog.DeletionVector) (*roaring64.Bitmap, error) {
		if dv == nil {
			return roaring64.New(), nil
		}
		bm, err := dvs.Read(ctx, dv)
		if err != nil {
			return nil, fmt.Errorf("reading the deletion vector of %s: %w", in.Path, err)
		}
		return bm, nil
	}
	now, err := read(dv)
	if err != nil {
		return err
	}
	was, err := read(in.DeletionVector)
	if err != nil {
		return err
	}
	// Output rows follow the rows live when the input was read, which an
	// earlier rebase's vector no longer shows.
	atRead, err := read(b.read[i])
	if err != nil {
		return err
	}
	if was.AndCardinality(now) != was.GetCardinality() {
		return fmt.Errorf("%w: the deletion vector of %s lost rows", errNoRebase, in.Path)
	}
	now.AndNot(was)
	for it := now.Iterator(); it.HasNext(); {
		row := it.Next()
		// The row was live when read, so it was written: as the
		// (row - rows deleted before it then)th of the input's rows.
		rank := int64(row - atRead.Rank(row))
		if rank >= b.live[i] {
			return fmt.Errorf("%w: %s row %d is beyond the %d rows read", errNoRebase, in.Path, row, b.live[i])
		}
		j, at, err := b.outputRow(offset + rank)
		if err != nil {
			return err
		}
		b.gone[j].Add(uint64(at))
	}
	return nil
}

// markRange records in b.gone the n rows written from the first output row
// offset on (across b.outputs).
func (b *compacted) markRange(offset, n int64) error {
	for n > 0 {
		j, at, err := b.outputRow(offset)
		if err != nil {
			return err
		}
		k := min(n, b.ends[j]-offset) // rows of output j from at on
		b.gone[j].AddRange(uint64(at), uint64(at+k))
		offset, n = offset+k, n-k
	}
	return nil
}

// outputRow locates the nth row written: its output, whose b.gone it
// allocates, and its row there.
func (b *compacted) outputRow(n int64) (int, int64, error) {
	if b.ends == nil {
		b.ends = make([]int64, len(b.outputs))
		b.gone = make([]*roaring64.Bitmap, len(b.outputs))
		var end int64
		for j, out := range b.outputs {
			st, ok, err := deltalog.ParseStatsSummary(out.Stats)
			if err != nil || !ok {
				return 0, 0, fmt.Errorf("%w: %s has no row count", errNoRebase, out.Path)
			}
			end += st.NumRecords
			b.ends[j] = end
		}
	}
	j, _ := slices.BinarySearch(b.ends, n+1)
	if j == len(b.ends) {
		return 0, 0, fmt.Errorf("%w: row %d is beyond the rows written", errNoRebase, n)
	}
	if b.gone[j] == nil {
		b.gone[j] = roaring64.New()
	}
	return j, n - (b.ends[j] - rowsOf(b.ends, j)), nil
}

// empty reports whether every row of output j is marked deleted.
func (b *compacted) empty(j int) bool {
	return b.ends != nil && b.gone[j] != nil && int64(b.gone[j].GetCardinality()) >= rowsOf(b.ends, j)
}

// rowsOf is the rows of output j, given the running ends.
func rowsOf(ends []int64, j int) int64 {
	if j == 0 {
		return ends[0]
	}
	return ends[j] - ends[j-1]
}

// writeGone writes the outputs' deletion vectors for the rows gone so far:
// their bounds still cover those rows, so they are no longer tight.
func (b *compacted) writeGone(ctx context.Context, store deltalog.Store) error {
	var idx []int
	var bitmaps []*roaring64.Bitmap
	for j, bm := range b.gone {
		if bm != nil && !bm.IsEmpty() && !b.empty(j) {
			idx, bitmaps = append(idx, j), append(bitmaps, bm)
		}
	}
	descs, err := deltalog.WriteDeletionVectors(ctx, store, "", bitmaps)
	if err != nil {
		return fmt.Errorf("writing the deletion vectors of compacted files: %w", err)
	}
	for k, j := range idx {
		out := &b.outputs[j]
		out.DeletionVector = &descs[k]
		st, ok, err := deltalog.ParseStats(out.Stats)
		if err != nil || !ok {
			return fmt.Errorf("%w: %s has no statistics", errNoRebase, out.Path)
		}
		st.TightBounds = new(bool)
		if out.Stats, err = st.JSON(); err != nil {
			return err
		}
	}
	return nil
}

// sameDV reports whether two files carry the same deletion vector.
func sameDV(a, b *deltalog.DeletionVector) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UniqueID() == b.UniqueID()
}
