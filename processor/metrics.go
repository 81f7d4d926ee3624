package processor

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// metrics are the processor's Prometheus collectors, registered on the
// injected Registerer (none: collected but not exported).
type metrics struct {
	consumed          *prometheus.CounterVec   // table
	applied           *prometheus.CounterVec   // table, op (insert|update|delete|truncate)
	skippedStale      *prometheus.CounterVec   // table
	skippedReplay     *prometheus.CounterVec   // table
	duplicates        *prometheus.CounterVec   // table
	unresolved        *prometheus.CounterVec   // table
	tombstones        *prometheus.CounterVec   // table
	deadLettered      *prometheus.CounterVec   // table, reason
	badInput          *prometheus.CounterVec   // table, reason, policy
	batchRecords      *prometheus.HistogramVec // table
	commitSeconds     *prometheus.HistogramVec // table
	endToEnd          *prometheus.HistogramVec // table
	arrivalDelay      *prometheus.HistogramVec // table
	conflicts         *prometheus.CounterVec   // table
	rebases           *prometheus.CounterVec   // table
	retries           *prometheus.CounterVec   // table, while
	retrySeconds      *prometheus.GaugeVec     // table
	tableFailed       *prometheus.GaugeVec     // table
	tableState        *prometheus.GaugeVec     // table, state
	deadLetterDropped *prometheus.CounterVec   // table
	kafkaUp           prometheus.Gauge
	pausedPartitions  prometheus.Gauge
	deltaOffset       *prometheus.GaugeVec   // topic, partition
	groupOffset       *prometheus.GaugeVec   // topic, partition
	highWatermark     *prometheus.GaugeVec   // topic, partition
	groupCommits      *prometheus.CounterVec // result (ok|error)
	bufferedBytes     prometheus.Gauge
	commits           *prometheus.CounterVec // table, reason
	filesWritten      *prometheus.CounterVec // table
	bytesWritten      *prometheus.CounterVec // table
	liveFiles         *prometheus.GaugeVec   // table
	liveDVs           *prometheus.GaugeVec   // table
	deletedRows       *prometheus.GaugeVec   // table
	smallFileDebt     *prometheus.GaugeVec   // table
	// Maintenance (ADR 0032):
	maintenance        *prometheus.CounterVec   // table, kind, result
	maintenanceSeconds *prometheus.HistogramVec // kind
	maintenanceFailing *prometheus.GaugeVec     // table, kind
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns = "cdc2delta"
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	hist := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: name, Help: help, Buckets: buckets}, labels)
	}
	m := &metrics{
		consumed:          counter("events_consumed_total", "Kafka records consumed, tombstones and bad input included.", "table"),
		applied:           counter("events_applied_total", "Changes applied to Delta tables, by effect.", "table", "op"),
		skippedStale:      counter("events_skipped_stale_total", "Changes at or below the position stored for their key.", "table"),
		skippedReplay:     counter("events_skipped_replayed_total", "Records at or below their partition's Delta txn version (replays).", "table"),
		duplicates:        counter("events_duplicates_total", "In-batch duplicates and superseded changes of one key.", "table"),
		unresolved:        counter("unavailable_unresolved_total", "Columns an event did not carry (Debezium's unavailable-value placeholder) with no earlier image of the row to take the value from: stored as NULL.", "table"),
		tombstones:        counter("tombstones_total", "Kafka tombstones (null values) skipped.", "table"),
		deadLettered:      counter("events_dead_lettered_total", "Records produced to the dead-letter topic.", "table", "reason"),
		badInput:          counter("bad_input_total", "Records that could not be decoded or applied, by reason and policy.", "table", "reason", "policy"),
		batchRecords:      hist("batch_records", "Records per applied micro-batch.", prometheus.ExponentialBuckets(1, 4, 10), "table"),
		commitSeconds:     hist("commit_seconds", "Time to apply one micro-batch (MERGE and Delta commit).", prometheus.ExponentialBuckets(0.005, 2, 14), "table"),
		endToEnd:          hist("end_to_end_latency_seconds", "From the oldest source commit in a batch to its Delta commit.", prometheus.ExponentialBuckets(0.01, 2, 16), "table"),
		arrivalDelay:      hist("arrival_delay_seconds", "From the Kafka timestamp of a batch's first record to its arrival in the batch (the time in Kafka, the fetch and the decoding): the part of the end-to-end latency before batching and commits.", prometheus.ExponentialBuckets(0.001, 2, 16), "table"),
		conflicts:         counter("commit_conflict_retries_total", "Re-applications (a new plan) after a concurrent Delta commit that touched the batch's keys or files.", "table"),
		rebases:           counter("commit_rebases_total", "Commits retried at a later version, with the same plan, after concurrent Delta commits that touched nothing the batch read.", "table"),
		retries:           counter("retries_total", "Retries of transient failures (storage, registry, Kafka), by what was being done.", "table", "while"),
		retrySeconds:      gauge("table_retry_seconds", "How long the table's current transient failure has lasted (0: none).", "table"),
		tableFailed:       gauge("table_failed", "1 when the table is stopped by an error that needs an operator.", "table"),
		tableState:        gauge("table_state", "1 for the table's current state: opening, running, retrying, stalled (retrying past the budget) or stopped.", "table", "state"),
		deadLetterDropped: counter("dead_letter_values_dropped_total", "Dead-lettered records sent without their value, which exceeded the dead-letter topic's max.message.bytes.", "table"),
		kafkaUp:           prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "kafka_up", Help: "1 while a broker of kafka.brokers answers."}),
		pausedPartitions:  prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "partitions_paused", Help: "Assigned partitions not fetching: waiting for their table, stopped, held for the registry or backpressured."}),
		deltaOffset:       gauge("partition_delta_offset", "Last offset applied to Delta (the txn version).", "topic", "partition"),
		groupOffset:       gauge("partition_group_offset", "Offset last committed to the consumer group.", "topic", "partition"),
		highWatermark:     gauge("partition_high_watermark", "Partition high watermark seen in the last fetch.", "topic", "partition"),
		groupCommits:      counter("group_commits_total", "Consumer-group offset commits, by result.", "result"),
		bufferedBytes:     prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "buffered_bytes", Help: "Record bytes buffered in pending micro-batches."}),
		commits:           counter("commits_total", "Delta commits, by why the batch was committed: full (max_records or max_bytes), ready (min_records and max_age, within the commit budget), max_delay, memory, poison or shutdown.", "table", "reason"),
		filesWritten:      counter("files_written_total", "Objects written by commits besides the log entry: data, deletion vector, change data and tombstone files.", "table"),
		bytesWritten:      counter("bytes_written_total", "Bytes of the objects counted by cdc2delta_files_written_total.", "table"),
		liveFiles:         gauge("table_live_files", "Live data files of the table after its last commit.", "table"),
		liveDVs:           gauge("table_live_deletion_vectors", "Live data files with a deletion vector after the table's last commit.", "table"),
		deletedRows:       gauge("table_deleted_rows", "Rows hidden by the live deletion vectors: every full scan reads and drops them.", "table"),
		smallFileDebt:     gauge("table_small_file_debt", "Live files below half the target file size beyond what OPTIMIZE would leave of them.", "table"),
		maintenance: counter("maintenance_total", "Automatic upkeep runs, by kind (compact, checkpoint, vacuum) and result: ok, conflict (a compaction that gave way to a commit touching its files) or failed.",
			"table", "kind", "result"),
		maintenanceSeconds: hist("maintenance_seconds", "Time of one upkeep run that did work, by kind.", prometheus.ExponentialBuckets(0.005, 2, 16), "kind"),
		maintenanceFailing: gauge("table_maintenance_failures", "Consecutive failed upkeep runs of the table, by kind (0: the last one succeeded).", "table", "kind"),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{
		m.consumed, m.applied, m.skippedStale, m.skippedReplay, m.duplicates, m.unresolved, m.tombstones,
		m.deadLettered, m.badInput, m.batchRecords, m.commitSeconds, m.endToEnd, m.arrivalDelay, m.conflicts, m.rebases,
		m.retries, m.retrySeconds, m.tableFailed, m.tableState, m.deadLetterDropped, m.kafkaUp, m.pausedPartitions,
		m.deltaOffset, m.groupOffset, m.highWatermark, m.groupCommits, m.bufferedBytes,
		m.commits, m.filesWritten, m.bytesWritten, m.liveFiles, m.liveDVs, m.deletedRows, m.smallFileDebt,
		m.maintenance, m.maintenanceSeconds, m.maintenanceFailing,
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observeApply records one applied batch of table, committed for why.
func (m *metrics) observeApply(table string, records int, r merge.Result, why string) {
	if r.Committed {
		m.commits.WithLabelValues(table, why).Inc()
		m.filesWritten.WithLabelValues(table).Add(float64(r.FilesWritten))
		m.bytesWritten.WithLabelValues(table).Add(float64(r.BytesWritten))
	}
	m.applied.WithLabelValues(table, "insert").Add(float64(r.Inserted))
	m.applied.WithLabelValues(table, "update").Add(float64(r.Updated))
	m.applied.WithLabelValues(table, "delete").Add(float64(r.Deleted))
	m.applied.WithLabelValues(table, "truncate").Add(float64(r.Truncates))
	m.skippedStale.WithLabelValues(table).Add(float64(r.SkippedStale))
	m.skippedReplay.WithLabelValues(table).Add(float64(r.SkippedReplayed))
	m.duplicates.WithLabelValues(table).Add(float64(r.Duplicates + r.Superseded))
	m.unresolved.WithLabelValues(table).Add(float64(r.UnavailableUnresolved))
	m.conflicts.WithLabelValues(table).Add(float64(r.Retries))
	m.rebases.WithLabelValues(table).Add(float64(r.Rebases))
	m.batchRecords.WithLabelValues(table).Observe(float64(records))
	m.commitSeconds.WithLabelValues(table).Observe(r.Duration.Seconds())
}

func partLabels(tp cdctable.TopicPartition) []string {
	return []string{tp.Topic, strconv.FormatInt(int64(tp.Partition), 10)}
}

// setTableState sets the one-hot state gauge of table.
func (m *metrics) setTableState(table string, st TableState) {
	for _, s := range tableStates {
		v := 0.0
		if s == st {
			v = 1
		}
		m.tableState.WithLabelValues(table, string(s)).Set(v)
	}
}

// observeCost sets the live-file gauges of table.
func (m *metrics) observeCost(table string, st merge.TableStats) {
	m.liveFiles.WithLabelValues(table).Set(float64(st.Files))
	m.liveDVs.WithLabelValues(table).Set(float64(st.DeletionVectors))
	m.deletedRows.WithLabelValues(table).Set(float64(st.DeletedRows))
	m.smallFileDebt.WithLabelValues(table).Set(float64(st.SmallFileDebt))
}

// forgetTable drops the per-table gauges of a closed table (counters stay).
func (m *metrics) forgetTable(table string) {
	for _, s := range tableStates {
		m.tableState.DeleteLabelValues(table, string(s))
	}
	m.tableFailed.DeleteLabelValues(table)
	m.retrySeconds.DeleteLabelValues(table)
	m.liveFiles.DeleteLabelValues(table)
	m.liveDVs.DeleteLabelValues(table)
	m.deletedRows.DeleteLabelValues(table)
	m.smallFileDebt.DeleteLabelValues(table)
	m.maintenanceFailing.DeletePartialMatch(prometheus.Labels{"table": table})
}

// forgetPartition drops the gauges of a revoked partition.
func (m *metrics) forgetPartition(tp cdctable.TopicPartition) {
	m.deltaOffset.DeleteLabelValues(partLabels(tp)...)
	m.groupOffset.DeleteLabelValues(partLabels(tp)...)
	m.highWatermark.DeleteLabelValues(partLabels(tp)...)
}
