package merge

import (
	"context"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

// write writes the plan's new rows and takes its deleted rows out: by
// deletion vectors when the table has them, else by rewriting their files.
// It returns the add and remove actions, the files written (in the order
// of the rows) and the deletion vectors written, by path.
func (h *History) write(ctx context.Context, ts *hSchema, p *hPlan) ([]deltalog.Action, []deltalog.Add, map[string]hDV, error) {
	var acts []deltalog.Action
	w, err := datafile.NewWriter(datafile.Options{Schema: ts.schema, PartitionColumns: ts.meta.PartitionColumns,
		Properties: ts.meta.Configuration, Now: h.opts.Now})
	if err != nil {
		return nil, nil, nil, err
	}
	dvs := map[string]hDV{}
	// The live rows of files rewritten (no deletion vectors) follow the
	// plan's rows, which the index registers by their order.
	rows := p.rows
	paths := make([]string, 0, len(p.dels))
	for path := range p.dels {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	var bitmaps []*roaring64.Bitmap
	var targets []*deltalog.Add
	for _, path := range paths {
		add := p.files[path]
		gone := p.dels[path]
		gone.Or(p.deleted[path])
		acts = append(acts, deltalog.Action{Remove: add.Remove(true)})
		if gone.GetCardinality() >= uint64(p.nrows[path]) {
			continue // every row is gone: the remove suffices
		}
		if !ts.dv {
			for r, row := range p.physical[path] {
				if !gone.Contains(uint64(r)) {
					rows.addStored(row, ts.nsrc)
				}
			}
			continue
		}
		bitmaps = append(bitmaps, gone)
		targets = append(targets, add)
	}
	if len(bitmaps) > 0 {
		descs, err := deltalog.WriteDeletionVectors(ctx, h.opts.Store, "", bitmaps)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("writing deletion vectors of history table %s: %w", h.opts.TableName, err)
		}
		for i, old := range targets {
			add := *old
			add.DataChange = true
			add.DeletionVector = &descs[i]
			dvs[add.Path] = hDV{id: dvID(&descs[i]), rows: bitmaps[i]}
			if stats, ok, err := deltalog.ParseStats(old.Stats); err == nil && ok {
				stats.TightBounds = new(bool)
				if js, err := stats.JSON(); err == nil {
					add.Stats = js
				}
			}
			acts = append(acts, deltalog.Action{Add: &add})
		}
	}
	var written []deltalog.Add
	if rows.n > 0 {
		if written, err = w.WriteColumns(ctx, h.opts.Store, rows.columns(ts)); err != nil {
			return nil, nil, nil, fmt.Errorf("writing history table %s: %w", h.opts.TableName, err)
		}
		for i := range written {
			acts = append(acts, deltalog.Action{Add: &written[i]})
		}
	}
	return acts, written, dvs, nil
}
