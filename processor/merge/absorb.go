package merge

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// DefaultTailFileSize is Options.TailFileSize's default (ADR 0032).
const DefaultTailFileSize = 1 << 20

// absorbMaxRows bounds the new rows a batch folds into a tail file: a larger
// batch writes files of its own, which compaction packs later.
const absorbMaxRows = 1000

// tailMaxRows bounds the rows a batch copies when it folds files, as
// TailFileSize bounds their bytes: rows that compress well (a bulk load's
// sequential keys) put hundreds of thousands in a file below TailFileSize,
// and each fold rewrites them and, with the key index on disk, reads all
// their keys again, so a commit's cost and memory would grow with the
// table's rows instead of the batch's.
const tailMaxRows = 1 << 15

// foldRows is f's rows for the tailMaxRows bound: its physical rows (a
// fold reads them all), or 0 without statistics, where the bytes bound
// alone holds.
func foldRows(f *deltalog.Add) int64 {
	st, ok, err := deltalog.ParseStatsSummary(f.Stats)
	if err != nil || !ok {
		return 0
	}
	return st.NumRecords
}

// absorb folds a small batch's new rows into the table's smallest data file
// below Options.TailFileSize, the tail: the tail's live rows and the new
// rows are written as one file that replaces it, and the batch's deletes in
// the tail are applied by leaving those rows out. Other small files the
// batch deletes rows in are folded into the same file, smallest first, while
// all it copies stays below TailFileSize: they would otherwise gain a
// deletion vector, and a trickle would keep both costs, a vector each commit
// and a tail that grows by every row updated away from them. A table that
// trickles so stays one file, gains no file per commit and no deletion
// vector; the cost is rewriting at most TailFileSize per commit.
// Partitioned tables, batches with a truncate and batches of more than
// absorbMaxRows new rows write their files as before. Of a table other
// writers share, only files of the writer's own partitions are folded
// (filetags.go). It reports whether it absorbed the new rows.
func (s *Sink) absorb(ctx context.Context, p *mergePlan) (bool, error) {
	st := p.st
	limit := s.opts.TailFileSize
	if limit <= 0 || len(p.rows) == 0 || len(p.rows) > absorbMaxRows || len(st.meta.PartitionColumns) > 0 || len(p.truncated) > 0 {
		return false, nil
	}
	var tail *deltalog.Add
	var tailRows int64
	for _, f := range p.files {
		if f.Size < limit && p.owners.MayFold(f) && (tail == nil || f.Size < tail.Size || f.Size == tail.Size && f.Path < tail.Path) {
			if n := foldRows(f); n < tailMaxRows { // statistics read only for a smaller candidate
				tail, tailRows = f, n
			}
		}
	}
	if tail == nil {
		return false, nil
	}
	fold := []*deltalog.Add{tail}
	size, rows := tail.Size, tailRows
	var touched []*deltalog.Add
	for path := range p.dels {
		if f := p.files[path]; f != nil && f != tail && f.Size < limit && p.owners.MayFold(f) {
			touched = append(touched, f)
		}
	}
	slices.SortFunc(touched, func(a, b *deltalog.Add) int {
		return cmp.Or(cmp.Compare(a.Size, b.Size), strings.Compare(a.Path, b.Path))
	})
	for _, f := range touched {
		if size+f.Size >= limit {
			break
		}
		n := foldRows(f)
		if rows+n >= tailMaxRows {
			continue // a smaller file further on may still fit the rows
		}
		fold, size, rows = append(fold, f), size+f.Size, rows+n
	}
	srcs := make([]datafile.Source, len(fold))
	for i, f := range fold {
		gone := p.dels[f.Path]
		if gone == nil {
			gone = roaring64.New()
		}
		if f.DeletionVector != nil {
			old, err := p.dvs.Read(ctx, f.DeletionVector)
			if err != nil {
				return false, fmt.Errorf("reading deletion vector of %s: %w", f.Path, err)
			}
			gone.Or(old)
		}
		srcs[i] = datafile.Source{Add: f, Drop: gone}
	}
	w, err := s.newWriter(st)
	if err != nil {
		return false, err
	}
	c, ok, err := w.CopyLiveWith(ctx, s.opts.Store, srcs, p.rows, runtime.GOMAXPROCS(0))
	if err != nil {
		return false, fmt.Errorf("rewriting %s with new rows: %w", tail.Path, err)
	}
	if !ok { // another schema, or nested columns: the tail alone, row by row
		delete(p.dels, tail.Path)
		p.remove(tail)
		return true, s.rewriteRows(ctx, p, tail.Path, srcs[0].Drop, true)
	}
	// Each folded file's kept rows move, in order, to the new file, after
	// those of the files before it; the new rows follow them.
	var offset int64
	for i, f := range fold {
		delete(p.dels, f.Path) // its deletes are applied here
		p.remove(f)
		p.moves = append(p.moves, fileMove{from: f.Path, to: c.Add.Path, gone: srcs[i].Drop, rows: c.Sources[i].SourceRows, offset: offset})
		offset += c.Sources[i].Rows
	}
	cdctable.Tag(c.Add, p.owners.FoldedTag(fold))
	p.metrics.copied += c.Rows
	p.metrics.bytesAdded += c.Add.Size
	p.adds = append(p.adds, deltalog.Action{Add: c.Add})
	for i := range p.rows {
		p.ops = append(p.ops, indexOp{key: p.rowKeys[i], path: c.Add.Path, row: int(c.Rows) + i, pos: p.rowPos[i]})
	}
	return true, nil
}
