package deltalog

import (
	"context"
	"errors"
)

// Update returns the latest snapshot, reusing s: only the commits after s.Version() are
// read and applied, which is much cheaper than a full load for a writer that keeps its
// snapshot between commits. It returns s itself when nothing was committed since. If the
// commits after s cannot be read contiguously (log cleanup ran past s), it falls back to
// a full load.
func (t *Table) Update(ctx context.Context, s *Snapshot) (*Snapshot, error) {
	if s == nil {
		return t.Snapshot(ctx)
	}
	return t.updateTo(ctx, s, -1)
}

// updateTo advances s to version target (-1: the latest) by applying the commits after
// it, falling back to a full load when they are not all there.
func (t *Table) updateTo(ctx context.Context, s *Snapshot, target int64) (*Snapshot, error) {
	full := func() (*Snapshot, error) {
		if target < 0 {
			return t.Snapshot(ctx)
		}
		return t.SnapshotAt(ctx, target)
	}
	ll, err := listLog(ctx, t.store, s.version+1)
	if err != nil {
		return nil, err
	}
	if target < 0 {
		target = ll.latestVersion()
	}
	if target <= s.version {
		if target == s.version || target < 0 {
			return s, nil
		}
		return full()
	}
	plan := replayPlan{version: target}
	for v := s.version + 1; v <= target; v++ {
		c, ok := ll.commit(v)
		if !ok {
			return full()
		}
		plan.commits = append(plan.commits, c)
	}
	commits, err := t.readCommits(ctx, plan.commits)
	if errors.Is(err, ErrNotExist) {
		return full() // cleaned up between listing and reading
	}
	if err != nil {
		return nil, tornLatest(ll, err)
	}
	st := stateAfter(s)
	for i, c := range commits {
		st.apply(c, plan.commits[i].path)
	}
	return t.finishSnapshot(ctx, ll, plan, st, s)
}
