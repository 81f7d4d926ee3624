package merge

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Moved is where another writer of this process, a compaction, put one
// file's rows: the rows live when From was read (those Read does not
// delete) are, in order, rows Offset to Offset+Live-1 of To. Rows deleted
// in From after it was read are deleted in To too (To's deletion vector).
type Moved struct {
	From string
	// Read is the deletion vector From was read with; nil: none.
	Read   *deltalog.DeletionVector
	Live   int64
	To     string
	Offset int64
}

// maxPendingCompactions bounds the compactions a Sink keeps until its next
// catch-up: an older one is then indexed by reading its files, as another
// process's compaction is.
const maxPendingCompactions = 16

// compactions are the moves of commits by other writers of this process
// that the Sink has not caught up with.
type compactions struct {
	mu      sync.Mutex
	pending []compaction
}

type compaction struct {
	version int64
	moves   []Moved
}

// Compacted tells the sink that the commit at version, another writer's,
// moved rows of its files as moves say: its next catch-up then follows them
// in the key index instead of reading every row of the new files (ADR
// 0034). It implies Behind and never blocks on a batch.
func (s *Sink) Compacted(version int64, moves []Moved) {
	s.compactions.mu.Lock()
	p := append(s.compactions.pending, compaction{version: version, moves: moves})
	s.compactions.pending = p[max(len(p)-maxPendingCompactions, 0):]
	s.compactions.mu.Unlock()
	s.Behind()
}

// between returns the moves of the commits after version from up to
// version to.
func (c *compactions) between(from, to int64) []Moved {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Moved
	for _, p := range c.pending {
		if p.version > from && p.version <= to {
			out = append(out, p.moves...)
		}
	}
	return out
}

// forget drops the moves of the commits up to version to, which a
// catch-up has passed.
func (c *compactions) forget(to int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = slices.DeleteFunc(c.pending, func(p compaction) bool { return p.version <= to })
}

// followed are the moves a catch-up follows: those whose commit lies
// between its two snapshots, all of whose inputs to one output file were
// live before and gone after, and whose output is new. The others' files
// are indexed as any other writer's are.
type followed struct {
	moves []fileMove
	from  map[string]bool
	to    map[string]bool
	// toGone are the outputs' deletion vectors, rows deleted since the
	// compaction read its inputs.
	toGone map[string]*roaring64.Bitmap
}

func followMoves(ctx context.Context, dvs *deltalog.DVReader, moves []Moved, before, now map[string]*deltalog.Add) (*followed, error) {
	f := &followed{from: map[string]bool{}, to: map[string]bool{}, toGone: map[string]*roaring64.Bitmap{}}
	bad := map[string]bool{}
	for _, m := range moves {
		if before[m.From] == nil || now[m.From] != nil || before[m.To] != nil || now[m.To] == nil {
			bad[m.To] = true
		}
	}
	for _, m := range moves {
		if bad[m.To] {
			continue
		}
		gone := roaring64.New()
		if m.Read != nil {
			var err error
			if gone, err = dvs.Read(ctx, m.Read); err != nil {
				return nil, fmt.Errorf("reading deletion vector of compacted %s: %w", m.From, err)
			}
		}
		f.moves = append(f.moves, fileMove{from: m.From, to: m.To, gone: gone, rows: m.Live + int64(gone.GetCardinality()), offset: m.Offset})
		f.from[m.From] = true
		if !f.to[m.To] {
			f.to[m.To] = true
			if dv := now[m.To].DeletionVector; dv != nil {
				bm, err := dvs.Read(ctx, dv)
				if err != nil {
					return nil, fmt.Errorf("reading deletion vector of %s: %w", m.To, err)
				}
				f.toGone[m.To] = bm
			}
		}
	}
	return f, nil
}
