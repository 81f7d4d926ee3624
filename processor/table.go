package processor

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TableState is where a table's pipeline is.
type TableState string

// Table states, as /readyz and the cdc2delta_table_state metric name them.
const (
	// TableOpening: the table is being read (snapshot, key index) and its
	// partitions wait, paused, for their start offsets.
	TableOpening TableState = "opening"
	// TableRunning: consuming and committing.
	TableRunning TableState = "running"
	// TableRetrying: a transient failure is being retried, within budget.
	TableRetrying TableState = "retrying"
	// TableStalled: a transient failure has outlasted the retry budget; the
	// table keeps retrying.
	TableStalled TableState = "stalled"
	// TableStopped: a permanent failure; the table waits for an operator.
	TableStopped TableState = "stopped"
)

var tableStates = []TableState{TableOpening, TableRunning, TableRetrying, TableStalled, TableStopped}

// table is one Delta table's pipeline: its partitions, its pending work and
// the worker goroutine that opens the table, applies and commits (ADR 0026).
// Tables never wait for each other.
type table struct {
	path     string
	src      route.TableSource
	sinkOpts merge.Options
	policy   Policy
	logPath  string // the change log's path; "" for none
	histPath string // the history table's path; "" for none
	histOpts merge.HistoryOptions
	// histOnly: the table at path is a history table and the only one
	// (history: only); sink then writes it, and hist is nil.
	histOnly bool
	// wake nudges the worker (capacity 1).
	wake chan struct{}
	// done closes when the worker returns.
	done chan struct{}

	// Guarded by Processor.mu:
	sink     tableSink // nil while opening
	log      *merge.ChangeLog
	hist     *merge.History
	opened   bool
	failed   *TableError // set: stopped
	retry    retryState
	registry retryState // decoding held by registry failures
	pend     pending
	parts    map[cdctable.TopicPartition]*partition
	flight   *flight // the apply in progress, if any
	// idleSince is when the table lost its last partition (zero: has some).
	idleSince time.Time
	// slot is the commit budget's slot the table's ready batch reserved
	// (zero: none).
	slot time.Time
	// lead is how much sooner than MaxDelay a batch is forced, so that it
	// is visible by MaxDelay: what the table's forced commits took lately
	// (limits.go).
	lead commitLead
	// costAt is when the live-file gauges were last set.
	costAt time.Time
	// debtWarned is set once the table's debt was logged, until it falls
	// below half the threshold.
	debtWarned bool
	// backpressured is set while the table's partitions are paused for
	// holding too much pending work.
	backpressured bool

	// consumed and tombstones are the table's events_consumed_total and
	// tombstones counters, looked up once rather than per record (guarded
	// by Processor.mu).
	consumed, tombstones prometheus.Counter
	arrival              prometheus.Observer // arrival_delay_seconds
}

// flight is a batch being applied. A revoke of one of its partitions waits
// for it, within Options.RevokeTimeout, then cancels it.
type flight struct {
	parts  map[cdctable.TopicPartition]bool
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// partition is the state of one assigned partition.
type partition struct {
	tp    cdctable.TopicPartition
	table *table
	// committed is the group's offset when it was assigned (nil: none).
	committed *cdctable.CommittedOffset
	// starting is set once its table asked for its start offset; started
	// once the loop set it and fetching may begin.
	starting, started bool
	// start is the offset set for it (-1: franz-go's own choice, the
	// group's offset or the reset policy).
	start int64
	// applied is the last offset known applied to the table (-1: none yet).
	applied int64
	// txn is the table's txn when the partition started (-1: none): an
	// operator's replay re-reads records up to it, which the table holds.
	txn     int64
	version int64 // the table version holding applied
	// behind: its last fetch with records stopped short of the high
	// watermark, so more is there to fetch (BatchLimits.Drained).
	behind bool
	// hw is the high watermark of its last fetch (0: none yet).
	hw int64
}

// drained reports whether no partition of the table is known to have more
// to fetch: each was last fetched up to its high watermark, or brought no
// records yet (an idle partition owes the batch nothing). mu must be held.
func (t *table) drained() bool {
	for _, pt := range t.parts {
		if pt.behind {
			return false
		}
	}
	return true
}

// owned are the table's partitions assigned to this instance; mu must be
// held.
func (t *table) owned() []cdctable.TopicPartition {
	out := make([]cdctable.TopicPartition, 0, len(t.parts))
	for tp := range t.parts {
		out = append(out, tp)
	}
	return out
}

// state is the table's state for health reporting; mu must be held.
func (t *table) state(budget time.Duration, now time.Time) TableState {
	switch {
	case t.failed != nil:
		return TableStopped
	case t.retry.failing() && now.Sub(t.retry.since) > budget,
		t.registry.failing() && now.Sub(t.registry.since) > budget:
		return TableStalled
	case t.retry.failing() || t.registry.failing():
		return TableRetrying
	case !t.opened:
		return TableOpening
	}
	return TableRunning
}

// kick wakes the worker without blocking.
func (t *table) kick() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}
