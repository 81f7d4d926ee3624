package deltalog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"
)

// SnapshotAtTime loads the latest version committed at or before ts, by the commit
// times of commitClock. A ts before the earliest reconstructable version gives a
// *VersionRangeError.
func (t *Table) SnapshotAtTime(ctx context.Context, ts time.Time) (*Snapshot, error) {
	c, latest, err := t.clock(ctx)
	if err != nil {
		return nil, err
	}
	earliest := c.ll.earliestVersion()
	rangeErr := &VersionRangeError{Version: -1, Timestamp: ts, Earliest: earliest, Latest: latest}
	if earliest < 0 {
		return nil, rangeErr
	}
	var v int64
	if c.ict && ts.UnixMilli() >= c.ictSince {
		from := max(c.ictFrom, earliest)
		if v, err = c.searchICT(ctx, from, latest, ts); err != nil {
			return nil, err
		}
		if v < 0 && from > earliest {
			// ts falls between the last file-time version and the first ICT one.
			v = from - 1
		}
	} else {
		to := latest
		if c.ict {
			to = c.ictFrom - 1
		}
		v = c.searchFileTimes(earliest, to, ts)
	}
	if v < 0 {
		return nil, rangeErr
	}
	return t.SnapshotAt(ctx, v)
}

// HistoryEntry is one commit of History.
type HistoryEntry struct {
	Version int64
	// Timestamp is the version's commit time as time travel resolves it
	// (SnapshotAtTime): a Timestamp selects its version.
	Timestamp time.Time
	// Info is the commit's commitInfo; nil if it has none.
	Info *CommitInfo
}

// History returns the newest limit commits still in the log (0: all), newest first,
// with the commit times SnapshotAtTime resolves. A table with no commit gives an error
// matching ErrNotExist. When the latest version does not load (a torn or corrupt
// commit), History still shows the commits, their times following the newest version
// that loads, so that one can see which to restore to.
func (t *Table) History(ctx context.Context, limit int) ([]HistoryEntry, error) {
	c, _, err := t.clock(ctx)
	if err != nil && !errors.Is(err, ErrNotExist) && ctx.Err() == nil {
		c, err = t.clockBelow(ctx, err)
	}
	if err != nil {
		return nil, err
	}
	commits := slices.Clone(c.ll.commits)
	slices.Reverse(commits)
	if limit > 0 && len(commits) > limit {
		commits = commits[:limit]
	}
	out := make([]HistoryEntry, 0, len(commits))
	for _, f := range commits {
		ci, err := firstCommitInfo(ctx, t.store, f.path)
		if err != nil {
			return nil, err
		}
		ts, err := c.at(ctx, f.version, ci)
		if err != nil {
			return nil, err
		}
		out = append(out, HistoryEntry{Version: f.version, Timestamp: ts, Info: ci})
	}
	return out, nil
}

// CommitTime is version v's commit time as time travel resolves it (SnapshotAtTime)
// and History shows it. Without an inCommitTimestamp it can differ from
// Snapshot.CommitTimestamp, the file time as listed, in milliseconds and where file
// times tie or go backwards.
func (t *Table) CommitTime(ctx context.Context, v int64) (time.Time, error) {
	c, _, err := t.clock(ctx)
	if err != nil {
		return time.Time{}, err
	}
	return c.at(ctx, v, nil)
}

// commitClock gives each version its commit time by one rule, as Delta readers apply
// it (Delta protocol, In-Commit Timestamps): with in-commit timestamps enabled (by the
// latest metadata), a version from their enablement version on has its
// inCommitTimestamp; a version before it, or every version without them, has its
// commit file's modification time in milliseconds, made increasing as Spark does (a
// time not after the previous version's counts as the previous plus 1ms).
// SnapshotAtTime searches these times and History shows them, so a time History shows
// selects its version.
type commitClock struct {
	store Store
	ll    *logListing
	// ict says in-commit timestamps are enabled; then versions from ictFrom on have
	// one, and times at or after ictSince (unix ms) are searched among them.
	ict      bool
	ictFrom  int64
	ictSince int64
	// files are the versions' file times, ascending by version.
	files []versionTime
}

type versionTime struct {
	version int64
	time    time.Time
}

// clock lists the log and reads the latest version's metadata; it also returns the
// latest version.
func (t *Table) clock(ctx context.Context) (*commitClock, int64, error) {
	latest, err := t.Snapshot(ctx)
	if err != nil {
		return nil, 0, err
	}
	ll, err := listLog(ctx, t.store, 0)
	if err != nil {
		return nil, 0, err
	}
	return newClock(t.store, ll, latest), latest.Version(), nil
}

// maxClockFallback bounds how many versions below an unloadable latest one
// clockBelow tries.
const maxClockFallback = 16

// clockBelow is the clock of the newest of the versions just below the latest that
// loads, when the latest does not (loadErr).
func (t *Table) clockBelow(ctx context.Context, loadErr error) (*commitClock, error) {
	ll, err := listLog(ctx, t.store, 0)
	if err != nil {
		return nil, err
	}
	for v := ll.latestVersion() - 1; v >= max(ll.earliestVersion(), ll.latestVersion()-maxClockFallback); v-- {
		if snap, err := t.SnapshotAt(ctx, v); err == nil {
			return newClock(t.store, ll, snap), nil
		}
	}
	return nil, loadErr
}

// newClock makes the clock of the listed log by the metadata of snap.
func newClock(store Store, ll *logListing, snap *Snapshot) *commitClock {
	c := &commitClock{store: store, ll: ll}
	config := snap.metadata.Configuration
	if isTrue(config[PropEnableInCommitTimestamps]) {
		c.ict = true
		ev, verr := parseInt64(config[PropICTEnablementVersion])
		ets, terr := parseInt64(config[PropICTEnablementTimestamp])
		if verr != nil || terr != nil {
			ev, ets = 0, math.MinInt64 // enabled at creation: every version has one
		}
		c.ictFrom, c.ictSince = ev, ets
	}
	// A checkpoint-only earliest version (its commit deleted) has the checkpoint's time.
	if e := ll.earliestVersion(); e >= 0 {
		if _, ok := ll.commit(e); !ok {
			for _, cp := range ll.checkpoints {
				if cp.version == e {
					c.files = append(c.files, versionTime{e, cp.modTime})
					break
				}
			}
		}
	}
	for _, f := range ll.commits {
		c.files = append(c.files, versionTime{f.version, f.modTime})
	}
	slices.SortFunc(c.files, func(a, b versionTime) int { return cmpInt64(a.version, b.version) })
	for i := range c.files {
		mt := c.files[i].time.Truncate(time.Millisecond)
		if i > 0 && !mt.After(c.files[i-1].time) {
			mt = c.files[i-1].time.Add(time.Millisecond)
		}
		c.files[i].time = mt
	}
	return c
}

// firstCommitInfo returns the first commitInfo of a commit file (nil if it has none),
// reading no further: a commit torn after it still shows in History.
func firstCommitInfo(ctx context.Context, s Store, path string) (*CommitInfo, error) {
	rc, err := s.Get(ctx, path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		a, ok, err := ParseLogLine(sc.Bytes())
		if err != nil {
			return nil, &CorruptFileError{Path: path, Err: fmt.Errorf("line %d: %w", line, err)}
		}
		if ok && a.CommitInfo != nil {
			return a.CommitInfo, nil
		}
	}
	return nil, sc.Err()
}

// at is version v's commit time; ci is its commitInfo when the caller has read it
// (nil: read when needed).
func (c *commitClock) at(ctx context.Context, v int64, ci *CommitInfo) (time.Time, error) {
	if c.ict && v >= c.ictFrom {
		if ci == nil {
			f, ok := c.ll.commit(v)
			if !ok {
				return time.Time{}, &LogGapError{Missing: v, Target: v}
			}
			var err error
			if ci, err = readCommitInfo(ctx, c.store, f.path); err != nil {
				return time.Time{}, err
			}
		}
		if ci != nil && ci.InCommitTimestamp != nil {
			return time.UnixMilli(*ci.InCommitTimestamp).UTC(), nil
		}
		// A commit that should carry one and does not: its file time, as before.
	}
	i, ok := slices.BinarySearchFunc(c.files, v, func(f versionTime, v int64) int { return cmpInt64(f.version, v) })
	if !ok {
		return time.Time{}, &LogGapError{Missing: v, Target: v}
	}
	return c.files[i].time.UTC(), nil
}

// searchFileTimes returns the newest version in [from, to] whose file time is ≤ ts, or -1.
func (c *commitClock) searchFileTimes(from, to int64, ts time.Time) int64 {
	best := int64(-1)
	for _, f := range c.files {
		if f.version < from {
			continue
		}
		if f.version > to || f.time.After(ts) {
			break
		}
		best = f.version
	}
	return best
}

// searchICT binary-searches [from, to] for the newest version whose commit time is
// ≤ ts; inCommitTimestamps strictly increase, so only log2(n) commit files are read.
func (c *commitClock) searchICT(ctx context.Context, from, to int64, ts time.Time) (int64, error) {
	var searchErr error
	// i is the count of versions with a time ≤ ts.
	i := sort.Search(int(to-from+1), func(i int) bool {
		if searchErr != nil {
			return true
		}
		at, err := c.at(ctx, from+int64(i), nil)
		if err != nil {
			searchErr = err
			return true
		}
		return at.After(ts)
	})
	if searchErr != nil {
		if gap, ok := errors.AsType[*LogGapError](searchErr); ok {
			gap.Target = to
		}
		return -1, searchErr
	}
	if i == 0 {
		return -1, nil
	}
	return from + int64(i) - 1, nil
}

func parseInt64(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }
