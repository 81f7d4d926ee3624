package deltalog

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// cleanupExpiredLogs deletes log files older than delta.logRetentionDuration, following
// Spark's metadata cleanup: it finds the newest commit at or before the cutoff (midnight
// UTC of now - retention) and the newest complete checkpoint at or before that commit,
// then deletes commits, checkpoints and checksums of versions strictly below that
// checkpoint. The commit at the checkpoint version is kept (its commitInfo and timestamp
// are needed), so every version from the checkpoint on stays reconstructable. Files are
// deleted oldest first, so a crash midway leaves a contiguous log.
//
// The cutoff moves once a day, so a Table runs the listing of the whole log once per
// cutoff (a log kept 30 days by a table that commits every 10 s holds 260,000 commits),
// not with every checkpoint. What it skips is at most a day late: a checkpoint written
// since at a version the cutoff has passed, which only a table idle that long gets.
func (t *Table) cleanupExpiredLogs(ctx context.Context, config map[string]string, proto Protocol) (int, error) {
	if v, ok := config[PropEnableExpiredLogCleanup]; ok && !isTrue(v) {
		return 0, nil
	}
	if proto.HasWriterFeature(FeatureCheckpointProtection) {
		// checkpointProtection restricts which checkpoints may go; we do not implement
		// its rules, so we keep everything.
		return 0, nil
	}
	retention := durationProp(config, PropLogRetentionDuration, defaultLogRetention)
	cutoff := t.opts.now().Add(-retention).UTC().Truncate(24 * time.Hour)
	if t.cleanedTo.Load() == cutoff.UnixMilli() {
		return 0, nil
	}
	n, err := t.cleanupBefore(ctx, cutoff)
	if err == nil {
		t.cleanedTo.Store(cutoff.UnixMilli())
	}
	return n, err
}

func (t *Table) cleanupBefore(ctx context.Context, cutoff time.Time) (int, error) {
	ll, err := listLog(ctx, t.store, 0)
	if err != nil {
		return 0, err
	}
	cutoffCommit := int64(-1)
	var prev time.Time
	for _, c := range ll.commits {
		// Spark makes commit timestamps monotonic before comparing them.
		ts := c.modTime
		if !prev.IsZero() && !ts.After(prev) {
			ts = prev.Add(time.Millisecond)
		}
		prev = ts
		if ts.After(cutoff) {
			break
		}
		cutoffCommit = c.version
	}
	if cutoffCommit < 0 {
		return 0, nil
	}
	cps := ll.checkpointsAtOrBefore(cutoffCommit)
	if len(cps) == 0 {
		return 0, nil
	}
	keepFrom := cps[0].version

	type victim struct {
		version int64
		path    string
	}
	var victims []victim
	for _, c := range ll.commits {
		if c.version < keepFrom {
			victims = append(victims, victim{c.version, c.path})
		}
	}
	for _, cp := range ll.checkpoints {
		if cp.version < keepFrom {
			for _, p := range cp.paths {
				victims = append(victims, victim{cp.version, p})
			}
		}
	}
	for _, o := range ll.other {
		n := parseLogName(o.Path[len(logDir):])
		if n.version < keepFrom {
			victims = append(victims, victim{n.version, o.Path})
		}
	}
	// Oldest version first; at one version delete the commit last, so a version whose
	// commit survives still has everything it had.
	sortVictims := func(a, b victim) int {
		if c := cmpInt64(a.version, b.version); c != 0 {
			return c
		}
		return boolCmp(a.path == commitPath(a.version), b.path == commitPath(b.version))
	}
	slices.SortFunc(victims, sortVictims)
	deleted := 0
	for _, v := range victims {
		if err := t.store.Delete(ctx, v.path); err != nil {
			return deleted, fmt.Errorf("deleting expired log file %s: %w", v.path, err)
		}
		deleted++
	}
	if deleted > 0 {
		t.opts.logger.InfoContext(ctx, "deleted expired log files", "count", deleted,
			"before_version", strconv.FormatInt(keepFrom, 10))
	}
	return deleted, nil
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
