package merge

import (
	"context"
	"fmt"
	"runtime"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// DefaultTailFileSize is Options.TailFileSize's default (ADR 0032).
const DefaultTailFileSize = 1 << 20

// absorbMaxRows bounds the new rows a batch folds into a tail file: a larger
// batch writes files of its own, which compaction packs later.
const absorbMaxRows = 1000

// absorb folds a small batch's new rows into the table's smallest data file
// below Options.TailFileSize, the tail: the tail's live rows and the new
// rows are written as one file that replaces it, and the batch's deletes in
// the tail are applied by leaving those rows out. A table that trickles so
// gains no file per commit, and its tail gains no deletion vector; the cost
// is rewriting at most TailFileSize per commit. Partitioned tables, batches
// with a truncate and batches of more than absorbMaxRows new rows write
// their files as before. It reports whether it absorbed the new rows.
func (s *Sink) absorb(ctx context.Context, p *mergePlan) (bool, error) {
	st := p.st
	limit := s.opts.TailFileSize
	if limit <= 0 || len(p.rows) == 0 || len(p.rows) > absorbMaxRows || len(st.meta.PartitionColumns) > 0 || len(p.truncated) > 0 {
		return false, nil
	}
	var tail *deltalog.Add
	for _, f := range p.files {
		if f.Size < limit && (tail == nil || f.Size < tail.Size || f.Size == tail.Size && f.Path < tail.Path) {
			tail = f
		}
	}
	if tail == nil {
		return false, nil
	}
	gone := p.dels[tail.Path]
	if gone == nil {
		gone = roaring64.New()
	}
	if tail.DeletionVector != nil {
		old, err := p.dvs.Read(ctx, tail.DeletionVector)
		if err != nil {
			return false, fmt.Errorf("reading deletion vector of %s: %w", tail.Path, err)
		}
		gone.Or(old)
	}
	delete(p.dels, tail.Path) // its deletes are applied here
	p.remove(tail)
	w, err := s.newWriter(st)
	if err != nil {
		return false, err
	}
	c, ok, err := w.CopyLiveWith(ctx, s.opts.Store, tail, gone, p.rows, runtime.GOMAXPROCS(0))
	if err != nil {
		return false, fmt.Errorf("rewriting %s with new rows: %w", tail.Path, err)
	}
	if !ok { // another schema, or nested columns: row by row
		return true, s.rewriteRows(ctx, p, tail.Path, gone, true)
	}
	// The tail's kept rows move, in order, to the new file's first rows;
	// the new rows follow them.
	p.moves = append(p.moves, fileMove{from: tail.Path, to: c.Add.Path, gone: gone, rows: c.SourceRows})
	p.metrics.copied += c.Rows
	p.metrics.bytesAdded += c.Add.Size
	p.adds = append(p.adds, deltalog.Action{Add: c.Add})
	for i, r := range p.rows {
		pos, err := codecs.PositionFromHex(r[st.posField].(string))
		if err != nil {
			return false, err
		}
		p.ops = append(p.ops, indexOp{key: p.rowKeys[i], path: c.Add.Path, row: int(c.Rows) + i, pos: pos})
	}
	return true, nil
}
