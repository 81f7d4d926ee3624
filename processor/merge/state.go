package merge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// tableState is what a Sink knows of its table between batches.
type tableState struct {
	cdctable.Layout
	snap    *deltalog.Snapshot // nil while the table is being created
	meta    deltalog.Metadata
	proto   deltalog.Protocol
	index   *keyIndex
	tombs   *tombstones
	mappers map[*codecs.Layout]*rowMapper
}

// newTableState derives field positions from metadata, or returns an error
// matching cdctable.ErrNotCDCTable.
func newTableState(meta deltalog.Metadata) (*tableState, error) {
	l, err := cdctable.LayoutOf(meta)
	if err != nil {
		return nil, err
	}
	return &tableState{Layout: l, meta: meta, mappers: map[*codecs.Layout]*rowMapper{}}, nil
}

// reload brings the state to the latest snapshot: incrementally when the
// sink has state of the same metadata (catchUp), else by reading every file.
func (s *Sink) reload(ctx context.Context) error {
	if s.state != nil && s.state.snap != nil {
		err := s.catchUp(ctx)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errCatchUpUnsupported) && !errors.Is(err, deltalog.ErrNotExist) {
			return err
		}
		s.log.Info("rebuilding the key index", "reason", err)
	}
	return s.fullReload(ctx)
}

// vanishedFileRetries bounds how often fullReload moves to a newer snapshot
// because a file of the one it read was gone.
const vanishedFileRetries = 3

// fullReload reads the latest snapshot and rebuilds the key index and tombstones.
func (s *Sink) fullReload(ctx context.Context) error {
	snap, err := s.table.Snapshot(ctx)
	if errors.Is(err, deltalog.ErrNotExist) {
		s.state = nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("loading table %s: %w", s.opts.TableName, err)
	}
	st, err := newTableState(snap.Metadata())
	if err != nil {
		return fmt.Errorf("loading table %s: %w", s.opts.TableName, err)
	}
	st.snap, st.proto = snap, snap.Protocol()
	for attempt := 1; ; attempt++ {
		if st.index, err = s.openIndex(ctx, st); err == nil {
			break
		}
		// A file of the snapshot can vanish while the index reads it: a later
		// commit removed it and VACUUM, with a retention shorter than this read,
		// deleted it. The table has then moved on; read its newer version. A
		// file missing from the newest version is missing for real.
		if !errors.Is(err, deltalog.ErrNotExist) || attempt > vanishedFileRetries {
			return fmt.Errorf("indexing table %s: %w", s.opts.TableName, err)
		}
		newer, uerr := s.table.Update(ctx, st.snap)
		if uerr != nil || newer.Version() == st.snap.Version() {
			return fmt.Errorf("indexing table %s: %w", s.opts.TableName, err)
		}
		s.log.Info("a file vanished while the key index read it; reading the newer version",
			"version", st.snap.Version(), "newer", newer.Version(), "err", err)
		if st, err = newTableState(newer.Metadata()); err != nil {
			return fmt.Errorf("loading table %s: %w", s.opts.TableName, err)
		}
		st.snap, st.proto, snap = newer, newer.Protocol(), newer
	}
	if st.tombs, err = loadTombstones(ctx, s.opts.Store, tombstoneView{s.table, snap.Version()}, s.opts.Now(), s.opts.TombstoneRetention); err != nil {
		st.index.close()
		return fmt.Errorf("loading table %s: %w", s.opts.TableName, err)
	}
	s.setState(st)
	s.compactTombstones(ctx, 1)
	s.log.Debug("table loaded", "version", snap.Version(), "files", snap.NumFiles(), "keys", st.index.keys.len(), "indexBytes", st.index.keys.bytes(), "tombstones", len(st.tombs.keys))
	return nil
}

// catchUp advances the state to the latest snapshot by reading only what
// the commits since changed (ADR 0023). It leaves the state as it was when
// it fails, but for a failure while it indexes many new rows (indexDelta),
// and returns errCatchUpUnsupported for changes it does not follow (new
// metadata or protocol, a deletion vector that lost rows) and for that
// failure: the index is then rebuilt.
func (s *Sink) catchUp(ctx context.Context) error {
	old := s.state
	snap, err := s.table.Update(ctx, old.snap)
	if err != nil {
		return fmt.Errorf("loading table %s: %w", s.opts.TableName, err)
	}
	if !old.snap.Metadata().Equal(snap.Metadata()) || !old.snap.Protocol().Equal(snap.Protocol()) {
		return fmt.Errorf("%w: metadata or protocol changed", errCatchUpUnsupported)
	}
	st, err := newTableState(snap.Metadata())
	if err != nil {
		return fmt.Errorf("loading table %s: %w", s.opts.TableName, err)
	}
	st.snap, st.proto = snap, snap.Protocol()
	d, err := old.index.diffSnapshots(ctx, s.opts.Store, st, old.snap, snap, s.readAhead, s.log.Warn)
	if err != nil {
		return fmt.Errorf("indexing table %s: %w", s.opts.TableName, err)
	}
	// Merging tombstone files of landed commits is idempotent, so a
	// failure here leaves a state that is still right. Their keys tell the
	// index which keys the commits deleted.
	var deleted []string
	err = old.tombs.catchUp(ctx, s.opts.Store, tombstoneView{s.table, snap.Version()}, tombstoneCutoff(s.opts.Now(), s.opts.TombstoneRetention),
		func(key string) { deleted = append(deleted, key) })
	if err != nil {
		return fmt.Errorf("loading table %s: %w", s.opts.TableName, err)
	}
	var was []string
	if old.index.runs != nil {
		was = old.index.runs.names()
	}
	start := time.Now()
	if len(d.fresh) > 0 {
		// Minutes for a compaction of a large table, on disk: said, not silent.
		s.log.Info("catching up the key index on new files", "from", old.snap.Version(), "version", snap.Version(),
			"files", len(d.fresh), "rows", d.freshRows)
	}
	if err := old.index.applyDelta(ctx, s.opts.Store, st, d, deleted, liveCheckOf(ctx, old.index, s.opts.Store, snap)); err != nil {
		// The index is part-way: only a rebuild is sure.
		s.setState(nil)
		return fmt.Errorf("%w: catching up the key index: %w", errCatchUpUnsupported, err)
	}
	if len(d.fresh) > 0 {
		s.log.Info("key index caught up", "version", snap.Version(), "duration", time.Since(start).Round(time.Millisecond))
	}
	if n := len(d.followed.moves); n > 0 {
		s.log.Debug("key index followed compacted rows", "version", snap.Version(), "files", n, "outputs", len(d.followed.to))
	}
	// A catch-up that wrote runs (over a compaction's files, say) or
	// followed moved rows is saved at once, as an open's is: a restart would
	// otherwise read the new files again.
	if x := old.index; x.runs != nil && (!slices.Equal(x.runs.names(), was) || len(d.followed.moves) > 0) {
		if err := x.saveManifest(snap); err != nil {
			s.log.Warn("the key index caught up but was not saved; the next open catches up again", "err", err)
		}
	}
	st.index, st.tombs = old.index, old.tombs
	s.state = st
	s.compactTombstones(ctx, tombstoneCompactFiles)
	s.log.Debug("table caught up", "from", old.snap.Version(), "version", snap.Version(),
		"newFiles", len(d.added)+len(d.fresh), "removedFiles", len(d.removed), "keys", st.index.keys.len(), "deleted", len(deleted))
	return nil
}

// setState replaces the state, closing the run files of a replaced index.
func (s *Sink) setState(st *tableState) {
	if old := s.state; old != nil && old.index != nil && (st == nil || st.index != old.index) {
		old.index.close()
	}
	s.state = st
}

// compactTombstones compacts the loaded tombstone files when there are more
// than threshold; a failure only leaves more files to read.
func (s *Sink) compactTombstones(ctx context.Context, threshold int) {
	if len(s.state.tombs.files) <= threshold {
		return
	}
	n, err := s.state.tombs.compact(ctx, s.opts.Store)
	switch {
	case err != nil && ctx.Err() != nil:
		s.log.Debug("compacting tombstones stopped", "err", err) // a stop, not a failure: the next open compacts
		return
	case err != nil:
		s.log.Warn("compacting tombstones", "err", err)
	}
	s.log.Debug("tombstones compacted", "files", n)
}

// withMetadata returns a copy of st for new metadata, sharing the snapshot,
// index and tombstones; it becomes the Sink's state only after a commit.
func (st *tableState) withMetadata(meta deltalog.Metadata, proto deltalog.Protocol) (*tableState, error) {
	next, err := newTableState(meta)
	if err != nil {
		return nil, err
	}
	next.snap, next.proto, next.index, next.tombs = st.snap, proto, st.index, st.tombs
	return next, nil
}
