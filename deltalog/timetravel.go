package deltalog

import (
	"context"
	"sort"
	"strconv"
	"time"
)

// SnapshotAtTime loads the latest version committed at or before ts. A version's commit
// time is its inCommitTimestamp when in-commit timestamps are enabled for it, else its
// commit file's modification time, made monotonic as Spark does (a time not after the
// previous version's counts as the previous plus 1ms). A ts before the earliest
// reconstructable version gives a *VersionRangeError.
func (t *Table) SnapshotAtTime(ctx context.Context, ts time.Time) (*Snapshot, error) {
	latest, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	ll, err := listLog(ctx, t.store, 0)
	if err != nil {
		return nil, err
	}
	earliest := ll.earliestVersion()
	rangeErr := &VersionRangeError{Version: -1, Timestamp: ts, Earliest: earliest, Latest: latest.Version()}
	if earliest < 0 {
		return nil, rangeErr
	}
	config := latest.metadata.Configuration
	v := int64(-1)
	if isTrue(config[PropEnableInCommitTimestamps]) {
		ictFrom, searchICT := t.ictStart(config, earliest, ts)
		if searchICT {
			v, err = t.searchICT(ctx, ll, ictFrom, latest.Version(), ts)
			if err != nil {
				return nil, err
			}
			if v < 0 && ictFrom > earliest {
				// ts falls between the last mtime-based version and the first ICT one.
				v = ictFrom - 1
			}
		} else {
			v = searchModTime(ll, earliest, ictFrom-1, ts)
		}
	} else {
		v = searchModTime(ll, earliest, latest.Version(), ts)
	}
	if v < 0 {
		return nil, rangeErr
	}
	return t.SnapshotAt(ctx, v)
}

// ictStart returns the first version with an inCommitTimestamp and whether ts should be
// searched among ICT versions (ts at or after the enablement timestamp).
func (t *Table) ictStart(config map[string]string, earliest int64, ts time.Time) (int64, bool) {
	ev, verr := parseInt64(config[PropICTEnablementVersion])
	ets, terr := parseInt64(config[PropICTEnablementTimestamp])
	if verr != nil || terr != nil {
		return 0, true // enabled at creation: every version has an ICT
	}
	return max(ev, earliest), ts.UnixMilli() >= ets
}

// searchModTime returns the newest version in [from, to] whose monotonized commit file
// time is ≤ ts, or -1.
func searchModTime(ll *logListing, from, to int64, ts time.Time) int64 {
	best := int64(-1)
	var prev time.Time
	for _, c := range ll.commits {
		if c.version > to {
			break
		}
		mt := c.modTime
		if !prev.IsZero() && !mt.After(prev) {
			mt = prev.Add(time.Millisecond)
		}
		prev = mt
		if c.version < from {
			continue
		}
		if mt.After(ts) {
			break
		}
		best = c.version
	}
	if best < 0 && from <= to {
		// A checkpoint-only earliest version (its commit deleted) uses the checkpoint time.
		for _, cp := range ll.checkpoints {
			if cp.version == from && !cp.modTime.After(ts) {
				return from
			}
		}
	}
	return best
}

// searchICT binary-searches [from, to] for the newest version whose inCommitTimestamp
// is ≤ ts; ICTs are strictly increasing, so only log2(n) commit files are read.
func (t *Table) searchICT(ctx context.Context, ll *logListing, from, to int64, ts time.Time) (int64, error) {
	target := ts.UnixMilli()
	var searchErr error
	n := int(to - from + 1)
	// i is the count of versions with ICT ≤ target.
	i := sort.Search(n, func(i int) bool {
		if searchErr != nil {
			return true
		}
		v := from + int64(i)
		c, ok := ll.commit(v)
		if !ok {
			searchErr = &LogGapError{Missing: v, Target: to}
			return true
		}
		ci, err := readCommitInfo(ctx, t.store, c.path)
		if err != nil {
			searchErr = err
			return true
		}
		ict := c.modTime.UnixMilli()
		if ci != nil && ci.InCommitTimestamp != nil {
			ict = *ci.InCommitTimestamp
		}
		return ict > target
	})
	if searchErr != nil {
		return -1, searchErr
	}
	if i == 0 {
		return -1, nil
	}
	return from + int64(i) - 1, nil
}

func parseInt64(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }
