package processor

import (
	"time"

	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// The defaults below are the one source of the policy a Processor runs
// with: the configuration's defaults (config.Default) are built from them,
// and a zero field of Options, BatchLimits or Maintenance takes them, where
// zero has no meaning of its own. Where zero does mean something
// (CommitsPerSecond 0: unlimited, Drained false, TailFileSize 0: off,
// VacuumInterval 0: never), it means the same here as in the configuration,
// and the default is only in these values: start from them.

// DefaultOptions are the process-wide defaults.
func DefaultOptions() Options {
	return Options{
		GroupProtocol:    GroupClassic,
		ClientID:         "cdc2delta",
		ResetOffset:      "earliest",
		FetchMaxWait:     100 * time.Millisecond,
		FetchMinBytes:    1 << 20,
		Sink:             merge.DefaultOptions(),
		Batch:            DefaultBatchLimits(),
		MaxBufferedBytes: 256 << 20,
		OpenConcurrency:  8,
		RetryBudget:      2 * time.Minute,
		BadInput:         PolicyFail,
		Maintenance:      DefaultMaintenance(),
	}
}

// DefaultBatchLimits are the batch limits and commit budget of ADR 0030: a
// busy table commits every second, a trickling one within 10 s, and all
// tables together at most 50 times a second.
func DefaultBatchLimits() BatchLimits {
	return BatchLimits{Records: 10_000, Bytes: 16 << 20, Age: time.Second, MinRecords: 100,
		MaxDelay: 10 * time.Second, CommitsPerSecond: 50, Drained: true}
}

// DefaultMaintenance is the upkeep of ADR 0032, on. MaxCompactRows 4Mi: a
// writer indexes a compacted file's rows at about 3 µs a row with its index
// on disk, so one compaction holds a table's commits some 12 s at most, and
// files of narrow rows still hold several MB.
func DefaultMaintenance() Maintenance {
	return Maintenance{CompactAt: 10, PurgeRatio: 0.1, MaxCompactBytes: 1 << 30, MaxCompactRows: 1 << 22, CheckpointCommits: 10,
		CheckpointInterval: time.Minute, CheckpointMaxCommits: 100, Concurrency: 1,
		TailFileSize: merge.DefaultTailFileSize}
}
