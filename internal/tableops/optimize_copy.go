package tableops

import (
	"context"
	"fmt"
	"runtime"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

// copy writes the bin's live rows into one file by copying their Parquet
// values column by column (datafile.Writer.CopyLiveWith), in input order, as
// rewrite does without sorting: no row becomes Go values, which made most of
// a compaction's CPU and allocations. It reports false, having written
// nothing, when the copy does not apply (nested columns, an input written
// with other physical types); rewrite then does the work.
func (c *compacted) copy(ctx context.Context, store deltalog.Store, w *datafile.Writer, dvs *deltalog.DVReader) (bool, error) {
	srcs := make([]datafile.Source, len(c.inputs))
	for i := range c.inputs {
		f := &c.inputs[i]
		srcs[i].Add = f
		if f.DeletionVector == nil {
			continue
		}
		bm, err := dvs.Read(ctx, f.DeletionVector)
		if err != nil {
			return false, fmt.Errorf("reading the deletion vector of %s: %w", f.Path, err)
		}
		srcs[i].Drop = bm
	}
	res, ok, err := w.CopyLiveWith(ctx, store, srcs, nil, runtime.GOMAXPROCS(0))
	if err != nil || !ok {
		return false, err
	}
	c.live = make([]int64, len(c.inputs))
	for i, s := range res.Sources {
		c.live[i] = s.Rows
	}
	if res.Add != nil {
		c.outputs = []deltalog.Add{*res.Add}
	}
	return true, nil
}

// rewrite reads the bin's live rows, orders them with sortRows (nil: input
// order) and writes them, split at the target size.
func (c *compacted) rewrite(ctx context.Context, store deltalog.Store, w *datafile.Writer, snap *deltalog.Snapshot, sortRows func([][]any)) error {
	meta := snap.Metadata()
	var rows [][]any
	c.live = make([]int64, len(c.inputs))
	for i := range c.inputs {
		f := &c.inputs[i]
		r, err := datafile.Read(ctx, store, f, snap.Schema(), datafile.ReadOptions{
			Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns,
		})
		if err != nil {
			return fmt.Errorf("reading %s: %w", f.Path, err)
		}
		rows = append(rows, r...)
		c.live[i] = int64(len(r))
	}
	if sortRows != nil {
		sortRows(rows)
	}
	if len(rows) == 0 {
		return nil
	}
	var err error
	c.outputs, err = w.Write(ctx, store, rows)
	return err
}
