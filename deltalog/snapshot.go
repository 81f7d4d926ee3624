package deltalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
)

// Snapshot is the immutable state of a table at one version.
type Snapshot struct {
	version    int64
	protocol   Protocol
	metadata   Metadata
	schema     *StructType
	files      []Add
	tombs      tombstoneSet
	txns       map[string]Txn
	domains    map[string]DomainMetadata
	commitTime time.Time
	// absolute are the live files with an absolute path (only with KeepAbsolutePaths).
	absolute []*AbsolutePathError
}

// Version returns the table version the snapshot reflects.
func (s *Snapshot) Version() int64 { return s.version }

// Protocol returns a copy of the table's protocol.
func (s *Snapshot) Protocol() Protocol {
	p := s.protocol
	p.ReaderFeatures = slices.Clone(p.ReaderFeatures)
	p.WriterFeatures = slices.Clone(p.WriterFeatures)
	return p
}

// Metadata returns a copy of the table's metaData action; callers may modify it to build
// a metadata change.
func (s *Snapshot) Metadata() Metadata {
	m := s.metadata
	m.Configuration = maps.Clone(m.Configuration)
	m.PartitionColumns = slices.Clone(m.PartitionColumns)
	m.Format.Options = maps.Clone(m.Format.Options)
	return m
}

// Schema returns the parsed table schema. Callers must not modify it.
func (s *Snapshot) Schema() *StructType { return s.schema }

// Files returns the live logical files, ordered by path and then deletion vector id.
// The slice is the caller's; the maps inside each Add are shared and must not be modified.
func (s *Snapshot) Files() []Add { return slices.Clone(s.files) }

// NumFiles returns the number of live logical files.
func (s *Snapshot) NumFiles() int { return len(s.files) }

// Tombstones returns the removes that have not yet expired
// (deletionTimestamp + delta.deletedFileRetentionDuration is after the snapshot's load
// time); VACUUM must keep their files and checkpoints keep them.
func (s *Snapshot) Tombstones() []Remove { return s.tombs.all() }

// NumTombstones returns len(s.Tombstones()) without building the slice.
func (s *Snapshot) NumTombstones() int { return s.tombs.len() }

// TxnVersion returns the latest version recorded for appID by a txn action.
func (s *Snapshot) TxnVersion(appID string) (int64, bool) {
	t, ok := s.txns[appID]
	return t.Version, ok
}

// Txns returns the latest txn action of every application id.
func (s *Snapshot) Txns() map[string]Txn { return maps.Clone(s.txns) }

// DomainMetadata returns the live (not removed) metadata domains.
func (s *Snapshot) DomainMetadata() map[string]DomainMetadata { return maps.Clone(s.domains) }

// AbsolutePaths lists the live data files whose path is absolute, which every other
// use of the table refuses; only a table opened with KeepAbsolutePaths loads them.
func (s *Snapshot) AbsolutePaths() []*AbsolutePathError { return slices.Clone(s.absolute) }

// CommitTimestamp returns when the snapshot's version was committed: its
// inCommitTimestamp when in-commit timestamps are enabled, else its commit file's
// modification time as listed (Table.CommitTime is the time time travel resolves).
func (s *Snapshot) CommitTimestamp() time.Time { return s.commitTime }

// stateActions returns the reconciled state as actions, as a checkpoint stores it.
func (s *Snapshot) stateActions() []Action {
	tombstones := s.tombs.all()
	out := make([]Action, 0, 2+len(s.txns)+len(s.domains)+len(s.files)+len(tombstones))
	p, m := s.protocol, s.metadata
	out = append(out, Action{Protocol: &p}, Action{Metadata: &m})
	for _, id := range slices.Sorted(maps.Keys(s.txns)) {
		t := s.txns[id]
		out = append(out, Action{Txn: &t})
	}
	for _, d := range slices.Sorted(maps.Keys(s.domains)) {
		dm := s.domains[d]
		out = append(out, Action{DomainMetadata: &dm})
	}
	for i := range s.files {
		out = append(out, Action{Add: &s.files[i]})
	}
	for i := range tombstones {
		out = append(out, Action{Remove: &tombstones[i]})
	}
	return out
}

// Snapshot loads the latest version of the table.
func (t *Table) Snapshot(ctx context.Context) (*Snapshot, error) {
	ll, start, err := t.listFromHint(ctx)
	if err != nil {
		return nil, err
	}
	v := ll.latestVersion()
	if v < 0 {
		return nil, fmt.Errorf("deltalog: no table in %s: %w", logDir, ErrNotExist)
	}
	return t.loadSnapshot(ctx, ll, start, v)
}

// SnapshotAt loads the table as of version v (time travel).
func (t *Table) SnapshotAt(ctx context.Context, v int64) (*Snapshot, error) {
	ll, start, err := t.listFromHint(ctx)
	if err != nil {
		return nil, err
	}
	if v < start {
		if ll, err = listLog(ctx, t.store, 0); err != nil {
			return nil, err
		}
		start = 0
	}
	if latest := ll.latestVersion(); v < 0 || v > latest {
		if start > 0 {
			// The hinted listing does not show the earliest version; list it all for
			// an accurate error.
			if ll, err = listLog(ctx, t.store, 0); err != nil {
				return nil, err
			}
		}
		return nil, &VersionRangeError{Version: v, Earliest: ll.earliestVersion(), Latest: ll.latestVersion()}
	}
	return t.loadSnapshot(ctx, ll, start, v)
}

// listFromHint lists the log from the _last_checkpoint hint, falling back to a full
// listing when the hint is missing, corrupt or stale. It returns the start version.
func (t *Table) listFromHint(ctx context.Context) (*logListing, int64, error) {
	lc, err := readLastCheckpoint(ctx, t.store)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		if _, corrupt := errors.AsType[*CorruptFileError](err); !corrupt {
			return nil, 0, err
		}
		t.opts.logger.WarnContext(ctx, "ignoring unusable _last_checkpoint", "err", err)
		lc = nil
	}
	if lc != nil && lc.Version > 0 {
		ll, err := listLog(ctx, t.store, lc.Version)
		if err != nil {
			return nil, 0, err
		}
		if ll.hasCheckpointAt(lc.Version) {
			return ll, lc.Version, nil
		}
	}
	ll, err := listLog(ctx, t.store, 0)
	return ll, 0, err
}

// loadSnapshot replays the log up to version v. A checkpoint that cannot be read is
// skipped in favour of an older one (relisting from the start if needed), as Spark does.
func (t *Table) loadSnapshot(ctx context.Context, ll *logListing, start, v int64) (*Snapshot, error) {
	bad := map[string]error{}
	skip := func(cp checkpointRef) bool { _, isBad := bad[cp.paths[0]]; return isBad }
	for {
		plan, err := ll.planFor(v, skip)
		if err != nil {
			if errors.Is(err, ErrLogGap) && start > 0 {
				if ll, err = listLog(ctx, t.store, 0); err != nil {
					return nil, err
				}
				start = 0
				continue
			}
			if len(bad) > 0 {
				return nil, errors.Join(append([]error{err}, slices.Collect(maps.Values(bad))...)...)
			}
			return nil, err
		}
		snap, err := t.replay(ctx, ll, plan)
		var cpErr *checkpointReadError
		if errors.As(err, &cpErr) && ctx.Err() == nil {
			t.opts.logger.WarnContext(ctx, "skipping unreadable checkpoint", "version", plan.checkpoint.version, "err", cpErr.err)
			bad[plan.checkpoint.paths[0]] = cpErr.err
			continue
		}
		return snap, err
	}
}

// checkpointReadError marks a failure to read a checkpoint, which loadSnapshot can
// recover from by using an older one.
type checkpointReadError struct{ err error }

func (e *checkpointReadError) Error() string { return e.err.Error() }
func (e *checkpointReadError) Unwrap() error { return e.err }

func (t *Table) replay(ctx context.Context, ll *logListing, plan replayPlan) (*Snapshot, error) {
	st := newTableState()
	if plan.checkpoint != nil {
		actions, err := readCheckpoint(ctx, t.store, plan.checkpoint.paths)
		if err != nil {
			return nil, &checkpointReadError{fmt.Errorf("reading checkpoint %d: %w", plan.checkpoint.version, err)}
		}
		st.apply(actions, plan.checkpoint.paths[0])
	}
	commits, err := t.readCommits(ctx, plan.commits)
	if err != nil {
		return nil, tornLatest(ll, err)
	}
	for i, c := range commits {
		st.apply(c, plan.commits[i].path)
	}
	return t.finishSnapshot(ctx, ll, plan, st, nil)
}

// tornLatest makes a commit file that was read but does not parse a
// *TornCommitError when it is the latest version of the log.
func tornLatest(ll *logListing, err error) error {
	ce, ok := errors.AsType[*CorruptFileError](err)
	if !ok || errors.Is(err, ErrNotExist) || errors.Is(err, ErrUnavailable) {
		return err
	}
	if v := ll.latestVersion(); ce.Path == commitPath(v) {
		return &TornCommitError{Version: v, Err: ce}
	}
	return err
}

// readCommits fetches and parses commit files concurrently, returning them in order.
func (t *Table) readCommits(ctx context.Context, files []commitFile) ([][]Action, error) {
	out := make([][]Action, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(t.opts.readConcurrency)
	for i, f := range files {
		g.Go(func() error {
			a, err := readCommitFile(gctx, t.store, f.path)
			out[i] = a
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// readCommitFile reads and parses one commit; a missing or unparseable file is a
// *CorruptFileError naming it.
func readCommitFile(ctx context.Context, s Store, path string) ([]Action, error) {
	data, err := readObject(ctx, s, path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &CorruptFileError{Path: path, Err: err}
	}
	return parseCommit(path, data)
}

func readObject(ctx context.Context, s Store, path string) ([]byte, error) {
	rc, err := s.Get(ctx, path)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	_, err = io.Copy(&buf, rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	return buf.Bytes(), err
}

// finishSnapshot checks the replayed state and makes it a snapshot at plan.version,
// with its commit time from the listing.
func (t *Table) finishSnapshot(ctx context.Context, ll *logListing, plan replayPlan, st *tableState, base *Snapshot) (*Snapshot, error) {
	snap, err := t.buildSnapshot(plan, st, base)
	if err != nil {
		return nil, err
	}
	snap.commitTime, err = t.versionTimestamp(ctx, ll, plan.version, snap.metadata.Configuration, st.ict, len(plan.commits) > 0)
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// buildSnapshot checks the replayed state and makes it a snapshot at plan.version, all
// but its commit time. With base nil, st is the whole state; otherwise st holds only the
// commits after base, whose files and tombstones it overlays on base's (advance).
func (t *Table) buildSnapshot(plan replayPlan, st *tableState, base *Snapshot) (*Snapshot, error) {
	where := commitPath(plan.version)
	if plan.checkpoint != nil && len(plan.commits) == 0 {
		where = plan.checkpoint.paths[0]
	}
	if st.protocol == nil {
		return nil, &CorruptFileError{Path: where, Err: errors.New("table state has no protocol")}
	}
	if st.metadata == nil {
		return nil, &CorruptFileError{Path: where, Err: errors.New("table state has no metaData")}
	}
	if err := st.protocol.CheckRead(); err != nil {
		return nil, fmt.Errorf("reading version %d: %w", plan.version, err)
	}
	var schema *StructType
	if base != nil && st.metadataFrom == "" {
		schema = base.schema // the metadata did not change
	} else {
		var err error
		if schema, err = st.schema(plan.version, where); err != nil {
			return nil, err
		}
	}
	snap := &Snapshot{
		version:  plan.version,
		protocol: *st.protocol,
		metadata: *st.metadata,
		schema:   schema,
		txns:     st.txns,
		domains:  st.domains,
	}
	cutoff := t.opts.now().Add(-st.metadata.DeletedFileRetention()).UnixMilli()
	if base == nil {
		snap.files = sortedValues(st.files, compareAdds)
		snap.tombs = newTombstoneSet(sortedValues(st.tombstones, compareRemoves), cutoff)
	} else {
		snap.files, snap.tombs = advance(base, st, cutoff)
	}
	if t.opts.keepAbsolutePaths {
		snap.absolute = st.absolutePaths(plan.version, snap.files)
	} else if err := st.checkRelativePaths(plan.version, snap.files); err != nil {
		return nil, err
	}
	if ret, ok := st.metadata.Configuration[PropSetTxnRetentionDuration]; ok {
		// Kernel semantics: a txn without lastUpdated never expires (Spark would drop it);
		// dropping an offset would make the processor re-apply data, so we keep it.
		if d, err := parseInterval(ret); err == nil {
			limit := t.opts.now().Add(-d).UnixMilli()
			for id, tx := range snap.txns {
				if tx.LastUpdated != nil && *tx.LastUpdated < limit {
					delete(snap.txns, id)
				}
			}
		}
	}
	return snap, nil
}

// versionTimestamp is the commit time of version v: its inCommitTimestamp when ICT is
// enabled at v, else the commit file's modification time. ict is the ICT of the last
// replayed commit (only meaningful when haveCommit).
func (t *Table) versionTimestamp(ctx context.Context, ll *logListing, v int64, config map[string]string, ict *int64, haveCommit bool) (time.Time, error) {
	if ictEnabledAt(config, v) {
		if haveCommit && ict != nil {
			return time.UnixMilli(*ict), nil
		}
		if c, ok := ll.commit(v); ok {
			ci, err := readCommitInfo(ctx, t.store, c.path)
			if err != nil {
				return time.Time{}, err
			}
			if ci != nil && ci.InCommitTimestamp != nil {
				return time.UnixMilli(*ci.InCommitTimestamp), nil
			}
		}
	}
	if c, ok := ll.commit(v); ok {
		return c.modTime, nil
	}
	for _, cp := range ll.checkpoints {
		if cp.version == v {
			return cp.modTime, nil
		}
	}
	return time.Time{}, nil
}

// ictEnabledAt reports whether version v carries an inCommitTimestamp by the table
// properties (delta.enableInCommitTimestamps and its enablement version).
func ictEnabledAt(config map[string]string, v int64) bool {
	if !isTrue(config[PropEnableInCommitTimestamps]) {
		return false
	}
	ev, err := strconv.ParseInt(config[PropICTEnablementVersion], 10, 64)
	if err != nil {
		return true // enabled at creation
	}
	return v >= ev
}

// readCommitInfo returns the commitInfo of a commit file, or nil if it has none.
func readCommitInfo(ctx context.Context, s Store, path string) (*CommitInfo, error) {
	actions, err := readCommitFile(ctx, s, path)
	if err != nil {
		return nil, err
	}
	for _, a := range actions {
		if a.CommitInfo != nil {
			return a.CommitInfo, nil
		}
	}
	return nil, nil
}
