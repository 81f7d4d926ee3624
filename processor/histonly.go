package processor

import (
	"context"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// tableSink writes a table's Delta table: the current-state table's MERGE
// (*merge.Sink), or the history table when it is the table's only one
// (historySink, history: only).
type tableSink interface {
	Apply(ctx context.Context, b merge.Batch) (merge.Result, error)
	Positions(ctx context.Context) (map[cdctable.TopicPartition]int64, error)
	Stats() merge.TableStats
	Snapshot() *deltalog.Snapshot
	Behind()
	Settle()
	Version() int64
	Close() error
}

// historySink is a history table that is its table's only Delta table
// (ADR 0046, history: only): it takes each batch as the table would, with
// one txn per partition in each commit.
type historySink struct{ *merge.History }

// Apply places the batch's events in the history table.
func (h historySink) Apply(ctx context.Context, b merge.Batch) (merge.Result, error) {
	return h.History.ApplyResult(ctx, b)
}

// Close does nothing: the history table holds no files open.
func (historySink) Close() error { return nil }

var _ tableSink = (*merge.Sink)(nil)
