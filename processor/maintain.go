package processor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/backoff"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// Maintenance configures the upkeep the processor runs on its tables beside
// ingest (ADR 0032): compaction, checkpoints and log cleanup, and VACUUM.
// It runs on its own goroutines and never holds up a table's commits:
// both write through Delta's optimistic concurrency.
type Maintenance struct {
	// Disabled turns it off: the tables then checkpoint every 10 commits as
	// they commit, and compaction and VACUUM are the operator's.
	Disabled bool
	// CompactAt is the debt at which a table is compacted: the objects a
	// full scan reads beyond what the compaction would leave (small files
	// and deletion vectors worth purging). Default 10.
	CompactAt int
	// PurgeRatio is the share of a large file's rows its deletion vector
	// must hide for the file to be rewritten (default 0.1).
	PurgeRatio float64
	// MaxCompactBytes bounds the bytes one compaction rewrites (default
	// 1 GiB); the rest waits for the next one.
	MaxCompactBytes int64
	// MaxCompactRows bounds the rows one compaction of a table or its
	// history table rewrites, as the files' statistics count them, and the
	// rows of a compacted file (default 4Mi). The table's writer indexes
	// every row of the files a compaction adds before the table commits
	// again, so this bounds that pause; and a file that holds as many rows
	// is full however few its bytes, so narrow rows are not packed into
	// files of tens of millions of rows that every later compaction or
	// purge rewrites whole. A change log, which no writer indexes, is
	// bounded by bytes only.
	MaxCompactRows int64
	// A table is checkpointed once CheckpointCommits versions (default 10)
	// followed its last checkpoint and that checkpoint is CheckpointInterval
	// old (default 1m), or once CheckpointMaxCommits versions (default 100)
	// did: a busy table checkpoints about once per interval, not every 10
	// commits, and a reader's log tail stays bounded. A table whose state
	// (live files and tombstones) is large waits for more versions, one per
	// checkpointRowsPerCommit of its rows, up to CheckpointMaxCommits.
	CheckpointCommits    int
	CheckpointInterval   time.Duration
	CheckpointMaxCommits int
	// VacuumInterval is how often a table is vacuumed with its own
	// retention (delta.deletedFileRetentionDuration, 7 days by default);
	// 0 (the default) never.
	VacuumInterval time.Duration
	// Every is how often a committing table is looked at (default 10s);
	// its last commits before it goes quiet are looked at within Every.
	Every time.Duration
	// Concurrency bounds the tables maintained at once (default 1), so
	// upkeep takes at most that many cores and buffers.
	Concurrency int
	// TailFileSize is the tables' merge.Options.TailFileSize: a small
	// batch's new rows go into the table's smallest file below it, so a
	// trickling table gains no file per commit. 0 or negative: off, as in
	// the configuration; DefaultMaintenance has merge.DefaultTailFileSize.
	// With maintenance disabled it is off.
	TailFileSize int64
}

// withDefaults fills the fields left zero that have no zero meaning from
// DefaultMaintenance; TailFileSize and VacuumInterval 0 stay off.
func (m Maintenance) withDefaults() Maintenance {
	d := DefaultMaintenance()
	if m.CompactAt <= 0 {
		m.CompactAt = d.CompactAt
	}
	if m.PurgeRatio <= 0 {
		m.PurgeRatio = d.PurgeRatio
	}
	if m.MaxCompactBytes <= 0 {
		m.MaxCompactBytes = d.MaxCompactBytes
	}
	if m.MaxCompactRows <= 0 {
		m.MaxCompactRows = d.MaxCompactRows
	}
	if m.CheckpointCommits <= 0 {
		m.CheckpointCommits = d.CheckpointCommits
		if m.CheckpointMaxCommits > 0 {
			m.CheckpointCommits = min(m.CheckpointCommits, m.CheckpointMaxCommits)
		}
	}
	if m.CheckpointInterval <= 0 {
		m.CheckpointInterval = d.CheckpointInterval
	}
	if m.CheckpointMaxCommits < m.CheckpointCommits {
		m.CheckpointMaxCommits = max(d.CheckpointMaxCommits, m.CheckpointCommits)
	}
	if m.Every <= 0 {
		m.Every = 10 * time.Second // not configurable
	}
	if m.Concurrency <= 0 {
		m.Concurrency = d.Concurrency
	}
	return m
}

// Kinds of upkeep, as the cdc2delta_maintenance_total kind label names them.
const (
	upkeepCompact    = "compact"
	upkeepCheckpoint = "checkpoint"
	upkeepVacuum     = "vacuum"
)

// maintainer runs the tables' upkeep: tables that committed are queued, at
// most once each and every Maintenance.Every, and Concurrency goroutines
// work through the queue.
type maintainer struct {
	p    *Processor
	o    Maintenance
	wake chan struct{} // capacity 1
	// movedRows are the rows a compacted file needs to be tagged with
	// where they came from (movedMinRows; tests set fewer).
	movedRows int64

	mu     sync.Mutex
	queue  []*upkeep
	tables map[string]*upkeep
}

// upkeep is what the maintainer knows of one table path; guarded by
// maintainer.mu except where noted.
type upkeep struct {
	path    string
	log     bool      // the table's change log (ADR 0031), not the table
	hist    bool      // the table's history table (ADR 0046), not the table
	t       *table    // the table's current pipeline
	queued  bool      // in the queue or being maintained
	pending bool      // committed since it was last queued
	seenAt  time.Time // when it was last queued
	// Only the goroutine running the table's job touches these:
	tbl         *deltalog.Table // opened at the first look, then reused: an S3 store is a client
	ckptVersion int64           // the last checkpoint's version; -2: not read yet
	ckptAt      time.Time
	vacuumAt    time.Time
	failing     map[string]*failure // by kind of upkeep
}

// failure is a run of failed upkeep of one kind on one table.
type failure struct {
	count   int
	retryAt time.Time
}

func newMaintainer(p *Processor) *maintainer {
	if p.opts.Maintenance.Disabled {
		return nil
	}
	return &maintainer{p: p, o: p.opts.Maintenance, wake: make(chan struct{}, 1), tables: map[string]*upkeep{}, movedRows: movedMinRows}
}

// committed tells the maintainer that t committed. The table is queued at
// once when it was not looked at for Every, else it is left pending and
// the sweep queues it when Every has passed: the last commits before a
// table goes quiet are looked at too.
func (m *maintainer) committed(t *table) {
	if m == nil {
		return
	}
	m.mu.Lock()
	queued := m.committedLocked(t, t.path, false, t.histOnly)
	if t.logPath != "" {
		queued = m.committedLocked(t, t.logPath, true, false) || queued
	}
	if t.histPath != "" {
		queued = m.committedLocked(t, t.histPath, false, true) || queued
	}
	m.mu.Unlock()
	if queued {
		m.kick()
	}
}

// committedLocked marks the table at path (t's own, its change log's or
// its history table's) committed; m.mu must be held.
func (m *maintainer) committedLocked(t *table, path string, log, hist bool) bool {
	u := m.tables[path]
	if u == nil {
		u = &upkeep{path: path, log: log, hist: hist, ckptVersion: -2, failing: map[string]*failure{}}
		m.tables[path] = u
	}
	u.t, u.pending = t, true
	return m.queueLocked(u, m.p.now())
}

// maintained is what the maintainer reads of a table it keeps: the
// latest snapshot its writer has, a way to tell the writer that a
// maintenance commit moved the table, and a wait for the writer's commit
// in flight.
type maintained interface {
	Snapshot() *deltalog.Snapshot
	Behind()
	Settle()
}

// queueLocked queues u when it has a commit not looked at, is not queued
// or running, and was last looked at Every ago; m.mu must be held.
func (m *maintainer) queueLocked(u *upkeep, now time.Time) bool {
	if !u.pending || u.queued || !u.seenAt.IsZero() && now.Sub(u.seenAt) < m.o.Every {
		return false
	}
	u.pending, u.queued, u.seenAt = false, true, now
	m.queue = append(m.queue, u)
	return true
}

func (m *maintainer) kick() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// run works through the queue on Concurrency goroutines, and sweeps the
// pending tables into it, until ctx ends.
func (m *maintainer) run(ctx context.Context) {
	if m == nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(min(m.o.Every, time.Second))
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
			queued := false
			m.mu.Lock()
			now := m.p.now()
			for _, u := range m.tables {
				queued = m.queueLocked(u, now) || queued
			}
			m.mu.Unlock()
			if queued {
				m.kick()
			}
		}
	})
	for range m.o.Concurrency {
		wg.Go(func() {
			for {
				u := m.next()
				if u == nil {
					select {
					case <-m.wake:
						continue
					case <-ctx.Done():
						return
					}
				}
				m.maintain(ctx, u)
				m.mu.Lock()
				u.queued = false
				m.mu.Unlock()
				if ctx.Err() != nil {
					return
				}
			}
		})
	}
	wg.Wait()
}

func (m *maintainer) next() *upkeep {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queue) == 0 {
		return nil
	}
	u := m.queue[0]
	m.queue = m.queue[1:]
	if len(m.queue) > 0 {
		m.kick() // another goroutine may take the rest
	}
	return u
}

// maintain runs what is due on one table: compaction, then a checkpoint of
// the version it ends at, then VACUUM. Each kind fails on its own: a
// failure is logged and counted, and that kind of upkeep backs off on the
// table (1 minute, doubling to an hour) while the others go on; ingest is
// never affected.
func (m *maintainer) maintain(ctx context.Context, u *upkeep) {
	m.mu.Lock()
	t := u.t
	m.mu.Unlock()
	m.p.mu.Lock()
	var w maintained
	target := t.sinkOpts.TargetFileSize
	switch {
	case u.log && t.log != nil:
		w, target = t.log, 0 // the log's files take the default size
	case u.hist && t.hist != nil:
		w, target = t.hist, 0
	case u.hist && t.histOnly && t.sink != nil:
		// The table is its history table (history: only): upkept as one.
		w, target = t.sink, 0
	case !u.log && !u.hist && t.sink != nil:
		w = t.sink
	}
	stopped := t.failed != nil
	owned := t.owned()
	m.p.mu.Unlock()
	if w == nil || stopped {
		return
	}
	snap := w.Snapshot()
	if snap == nil {
		return
	}
	if u.tbl == nil {
		store, err := m.p.opts.OpenStore(ctx, u.path)
		if err == nil {
			// Checkpoints are this goroutine's (below), not the compaction
			// commit's; a commit retried at a later version is routine
			// here, and not logged.
			u.tbl, err = deltalog.Open(ctx, store, deltalog.DisableCheckpoints())
		}
		if err != nil {
			m.run1(ctx, u, upkeepCompact, func() error { return fmt.Errorf("opening table %s: %w", u.path, err) })
			return
		}
	}
	tbl := u.tbl
	m.run1(ctx, u, upkeepCompact, func() (err error) {
		snap, err = m.compact(ctx, u, target, w, tbl, snap, owned)
		return err
	})
	m.run1(ctx, u, upkeepCheckpoint, func() error { return m.checkpoint(ctx, u, tbl, snap) })
	m.run1(ctx, u, upkeepVacuum, func() error { return m.vacuum(ctx, u, w, tbl, snap) })
}

// run1 runs one kind of upkeep unless it is backing off, and keeps its
// failure count.
func (m *maintainer) run1(ctx context.Context, u *upkeep, kind string, fn func() error) {
	now := m.p.now()
	f := u.failing[kind]
	if f != nil && now.Before(f.retryAt) {
		return
	}
	err := fn()
	switch {
	case err == nil:
		if f != nil {
			m.p.log.Info("table maintenance recovered", "table", u.path, "kind", kind, "after_failures", f.count)
			delete(u.failing, kind)
			m.p.m.maintenanceFailing.WithLabelValues(u.path, kind).Set(0)
		}
	case ctx.Err() != nil:
	default:
		if f == nil {
			f = &failure{}
			u.failing[kind] = f
		}
		f.count++
		wait := backoff.Policy{Min: time.Minute, Max: time.Hour}.Delay(f.count - 1)
		f.retryAt = now.Add(wait)
		m.p.m.maintenance.WithLabelValues(u.path, kind, "failed").Inc()
		m.p.m.maintenanceFailing.WithLabelValues(u.path, kind).Set(float64(f.count))
		log := m.p.log.Warn
		if f.count >= 3 {
			log = m.p.log.Error
		}
		log("table maintenance failed; ingest goes on, and it is tried again later", "table", u.path, "kind", kind,
			"failures", f.count, "retry_in", wait.Round(time.Second), "err", err)
	}
}

// movedMinRows are the rows a compacted file needs for its tag: below, a
// writer reads them again about as fast as it follows them.
const movedMinRows = 1 << 16

// movedTags tags a compacted file of m.movedRows or more with where its
// rows came from (cdctable.MovedTag).
func (m *maintainer) movedTags(moves []tableops.Moved) map[string]string {
	out := make([]cdctable.Moved, len(moves))
	var rows int64
	for i, mv := range moves {
		out[i] = cdctable.Moved{From: mv.From, Read: mv.Read, Live: mv.Live, Offset: mv.Offset}
		rows += mv.Live
	}
	if rows < m.movedRows {
		return nil
	}
	v, ok := cdctable.MovedTagValue(out)
	if !ok {
		return nil
	}
	return map[string]string{cdctable.MovedTag: v}
}

// compactRaces bounds how often a compaction is planned again after a
// commit of the table touched its files; then it waits for the next look.
const compactRaces = 3

// compact compacts the table when its debt reached CompactAt. It returns
// the snapshot to checkpoint: the latest after the compaction, or snap.
func (m *maintainer) compact(ctx context.Context, u *upkeep, target int64, w maintained, tbl *deltalog.Table, snap *deltalog.Snapshot, owned []cdctable.TopicPartition) (*deltalog.Snapshot, error) {
	if target <= 0 {
		target = datafile.DefaultTargetFileSize
	}
	opts := tableops.OptimizeOptions{TargetSize: target, PurgeRatio: m.o.PurgeRatio, MaxInputBytes: m.o.MaxCompactBytes,
		UnionTag: cdctable.PartitionsTag, DeltaEncodings: u.log}
	if !u.log {
		// The table's writer (its key index, or the history table's)
		// indexes every row of the files a compaction adds before its next
		// commit: bounded by rows, that pause is too. A change log's files
		// are only read.
		opts.TargetRows, opts.MaxInputRows = m.o.MaxCompactRows, m.o.MaxCompactRows
	}
	if !u.log && !u.hist {
		// Instances that share the table compact disjoint files (ADR 0036).
		opts.Select = cdctable.Compacts(owned, snap)
		// The writers' key indexes follow the rows instead of reading
		// them again (ADR 0034).
		opts.MovedTags = m.movedTags
	}
	debt := tableops.Debt(snap, opts)
	if debt < m.o.CompactAt {
		return snap, nil
	}
	start := time.Now()
	m.p.log.Debug("compacting table", "table", u.path, "version", snap.Version(), "debt", debt)
	for race := 0; ; race++ {
		res, err := tableops.Optimize(ctx, tbl, snap, opts)
		if err == nil {
			m.p.m.maintenanceSeconds.WithLabelValues(upkeepCompact).Observe(time.Since(start).Seconds())
			if res.NumRemovedFiles == 0 {
				return snap, nil // nothing left to compact
			}
			w.Behind()
			m.p.m.maintenance.WithLabelValues(u.path, upkeepCompact, "ok").Inc()
			m.p.log.Info("table compacted", "table", u.path, "version", res.Version, "debt", debt,
				"files_removed", res.NumRemovedFiles, "files_added", res.NumAddedFiles,
				"deletion_vectors_purged", res.NumDeletionVectorsRemoved, "bytes_rewritten", res.NumRemovedBytes,
				"races", race, "rebases", res.Rebases, "duration", time.Since(start).Round(time.Millisecond))
			// The checkpoint's snapshot: read incrementally, and snap (an
			// older version, as valid to checkpoint) if that fails.
			if latest, err := tbl.Update(ctx, snap); err == nil {
				return latest, nil
			}
			return snap, nil
		}
		var ce *deltalog.ConflictError
		if !errors.As(err, &ce) || ctx.Err() != nil {
			return snap, err
		}
		m.p.m.maintenance.WithLabelValues(u.path, upkeepCompact, "conflict").Inc()
		if race+1 >= compactRaces {
			m.p.log.Info("compaction gave way to the table's commits; it is tried again at the next look",
				"table", u.path, "races", race+1, "err", err)
			return snap, nil
		}
		latest, err := tbl.Update(ctx, snap)
		if err != nil {
			return snap, err // snap stays valid to checkpoint
		}
		snap = latest
	}
}

// checkpointRowsPerCommit bounds a checkpoint's rows per version since the
// last: a trickled table keeps a tombstone per commit for 7 days, some
// 60,000, and rewriting them every 10 commits would cost more than the
// commits. A reader of the table still reads at most CheckpointMaxCommits
// commits after the checkpoint.
const checkpointRowsPerCommit = 100

// checkpointCommits is how many versions after the last checkpoint make
// one due (given CheckpointInterval passed), by the size of snap's state.
func (m *maintainer) checkpointCommits(snap *deltalog.Snapshot) int64 {
	rows := snap.NumFiles() + snap.NumTombstones()
	return int64(max(m.o.CheckpointCommits, rows/checkpointRowsPerCommit))
}

// checkpoint writes a checkpoint of snap when one is due, then deletes the
// log files the table's retention expired.
func (m *maintainer) checkpoint(ctx context.Context, u *upkeep, tbl *deltalog.Table, snap *deltalog.Snapshot) error {
	now := m.p.now()
	if u.ckptVersion == -2 {
		v, err := tbl.LastCheckpointVersion(ctx)
		if err != nil {
			return err
		}
		u.ckptVersion, u.ckptAt = v, now
	}
	tail := snap.Version() - u.ckptVersion
	if tail < int64(m.o.CheckpointMaxCommits) && (tail < m.checkpointCommits(snap) || now.Sub(u.ckptAt) < m.o.CheckpointInterval) {
		return nil
	}
	start := time.Now()
	if _, err := tbl.Checkpoint(ctx, snap); err != nil {
		return err
	}
	u.ckptVersion, u.ckptAt = snap.Version(), now
	m.p.m.maintenance.WithLabelValues(u.path, upkeepCheckpoint, "ok").Inc()
	n, err := tbl.CleanupLogs(ctx, snap)
	m.p.m.maintenanceSeconds.WithLabelValues(upkeepCheckpoint).Observe(time.Since(start).Seconds())
	m.p.log.Debug("table checkpointed", "table", u.path, "version", snap.Version(), "tail", tail, "log_files_deleted", n)
	if err != nil {
		return fmt.Errorf("cleaning up the log after checkpoint %d: %w", snap.Version(), err)
	}
	return nil
}

// vacuum runs VACUUM with the table's own retention every VacuumInterval.
func (m *maintainer) vacuum(ctx context.Context, u *upkeep, w maintained, tbl *deltalog.Table, snap *deltalog.Snapshot) error {
	now := m.p.now()
	if m.o.VacuumInterval <= 0 || !u.vacuumAt.IsZero() && now.Sub(u.vacuumAt) < m.o.VacuumInterval {
		return nil
	}
	start := time.Now()
	// The writer's data files of a commit in flight are in the listing but not
	// in snap; once it settles, VACUUM START follows its commit and keeps them.
	res, err := tableops.Vacuum(ctx, tbl, snap, tableops.VacuumOptions{Now: now, Listed: w.Settle})
	if err != nil {
		return err
	}
	u.vacuumAt = now
	w.Behind()
	m.p.m.maintenance.WithLabelValues(u.path, upkeepVacuum, "ok").Inc()
	m.p.m.maintenanceSeconds.WithLabelValues(upkeepVacuum).Observe(time.Since(start).Seconds())
	m.p.log.Info("table vacuumed", "table", u.path, "files_deleted", res.NumDeletedFiles,
		"bytes", res.SizeOfDataToDelete, "retention", res.Retention, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}
