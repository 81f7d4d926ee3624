// Package runopts maps the configuration file onto the options of the
// packages that run it, the one mapping every binary uses.
package runopts

import (
	"log/slog"
	"time"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/processor"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// Processor maps the configuration onto the processor's options, all but
// what needs I/O or the process to build: ClientOptions, OpenStore,
// PerTable and Decoder.
func Processor(c config.Config, logger *slog.Logger) processor.Options {
	k := c.Kafka
	topics, regex := k.Topics, false
	if k.TopicRegex != "" {
		topics, regex = []string{k.TopicRegex}, true
	}
	return processor.Options{
		Brokers: k.Brokers, Group: k.GroupID, GroupProtocol: k.GroupProtocol, ClientID: k.ClientID,
		Topics: topics, TopicRegex: regex, InstanceID: k.InstanceID, ResetOffset: k.Reset,
		FetchMaxWait: time.Duration(k.FetchMaxWait), FetchMinBytes: int32(k.FetchMinBytes),
		TablePath:              c.Tables.Path,
		Sink:                   Sink(c.Tables.Defaults, logger),
		Batch:                  Batch(c.Batch),
		MaxBufferedBytes:       int64(c.Memory.MaxBufferedBytes),
		OpenConcurrency:        c.Memory.OpenConcurrency,
		Maintenance:            Maintenance(c.Maintenance),
		RetryBudget:            time.Duration(c.Retry.Budget),
		BadInput:               processor.Policy(c.Tables.Defaults.BadInput),
		DeadLetterTopic:        k.DLQTopic,
		CreateDeadLetterTopics: k.DLQCreate,
	}
}

// Batch maps the batch block onto the batch limits.
func Batch(b config.Batch) processor.BatchLimits {
	return processor.BatchLimits{
		Records: b.MaxRecords, Bytes: int64(b.MaxBytes), Age: time.Duration(b.MaxAge),
		MinRecords: b.MinRecords, MaxDelay: time.Duration(b.MaxDelay),
		CommitsPerSecond: float64(b.MaxCommitsPerSecond), Drained: b.CommitWhenDrained,
	}
}

// Maintenance maps the maintenance block onto the processor's upkeep.
func Maintenance(m config.Maintenance) processor.Maintenance {
	return processor.Maintenance{
		Disabled: !m.Enabled, CompactAt: m.CompactAt, PurgeRatio: m.PurgeRatio,
		MaxCompactBytes: int64(m.MaxCompactBytes), MaxCompactRows: m.MaxCompactRows,
		CheckpointCommits: m.CheckpointCommits, CheckpointInterval: time.Duration(m.CheckpointInterval),
		CheckpointMaxCommits: m.CheckpointMaxCommits, VacuumInterval: time.Duration(m.VacuumInterval),
		Concurrency: m.Concurrency, TailFileSize: int64(m.TailFileSize),
	}
}

// History maps a table's history settings onto the history table's
// options (ADR 0046); the processor sets the store and the name.
func History(s config.TableSettings, logger *slog.Logger) merge.HistoryOptions {
	return merge.HistoryOptions{TrackHistory: s.TrackHistory, TrackHistoryExcept: s.TrackHistoryExcept,
		DeletionVectors: new(s.DeletionVectors), ColumnNames: merge.ColumnNames(s.ColumnNames), Logger: logger}
}

// Sink maps one table's settings onto its merge options.
func Sink(s config.TableSettings, logger *slog.Logger) merge.Options {
	return merge.Options{
		DeleteMode: merge.DeleteMode(s.DeleteMode), TombstoneRetention: time.Duration(s.TombstoneRetention),
		Mode: merge.Mode(s.MergeMode), EnableChangeDataFeed: s.ChangeDataFeed,
		DeletionVectors: new(s.DeletionVectors), ColumnNames: merge.ColumnNames(s.ColumnNames),
		PartitionBy: s.PartitionBy, Logger: logger,
	}
}
