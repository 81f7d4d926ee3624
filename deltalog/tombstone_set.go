package deltalog

import (
	"slices"
	"strings"
)

// tombstoneSet is a snapshot's unexpired removes. A trickled table gains a tombstone per
// commit and keeps it for the retention period (7 days by default): some 60,000 for a
// table that commits every 10 s. Copying them all into each new snapshot would cost a
// writer that much per commit, so a snapshot shares base with the snapshots before it
// and copies only recent, and an expired tombstone leaves base when it is next rebuilt
// (reads filter it out before then).
type tombstoneSet struct {
	base   []Remove // sorted by compareRemoves; shared, never modified
	recent []Remove // sorted; no key of base's
	cutoff int64    // removes deleted at or before it (unix ms) have expired
	// escaped is set when a base path has an escape: a raw-path search of base might
	// then miss a key, so any change rebuilds it.
	escaped bool
}

// newTombstoneSet makes the set of all, sorted, at cutoff.
func newTombstoneSet(all []Remove, cutoff int64) tombstoneSet {
	ts := tombstoneSet{cutoff: cutoff}
	ts.base = slices.DeleteFunc(all, func(r Remove) bool { return !ts.live(&r) })
	ts.escaped = slices.ContainsFunc(ts.base, func(r Remove) bool { return strings.IndexByte(r.Path, '%') >= 0 })
	return ts
}

func (ts *tombstoneSet) live(r *Remove) bool {
	return r.DeletionTimestamp != nil && *r.DeletionTimestamp > ts.cutoff
}

// len counts the unexpired tombstones.
func (ts *tombstoneSet) len() int {
	n := 0
	for _, part := range [2][]Remove{ts.base, ts.recent} {
		for i := range part {
			if ts.live(&part[i]) {
				n++
			}
		}
	}
	return n
}

// all returns the unexpired tombstones, sorted.
func (ts *tombstoneSet) all() []Remove {
	return overlay(ts.base, slices.DeleteFunc(slices.Clone(ts.recent), func(r Remove) bool { return !ts.live(&r) }),
		compareRemoves, ts.live)
}

// next returns the set after commits whose removes are fresh (sorted) and whose adds
// and removes changed reports by file, at a later cutoff. probes name the same files
// (path and deletion vector), for finding whether base holds one.
func (ts *tombstoneSet) next(fresh, probes []Remove, changed func(*Remove) bool, cutoff int64) tombstoneSet {
	n := tombstoneSet{base: ts.base, cutoff: cutoff, escaped: ts.escaped}
	keep := func(r *Remove) bool { return n.live(r) && !changed(r) }
	n.recent = overlay(ts.recent, slices.DeleteFunc(fresh, func(r Remove) bool { return !n.live(&r) }), compareRemoves, keep)
	// Rebuilding base costs its length, copying recent its length with each commit:
	// keeping recent below √(2·base) makes the sum, per commit, about that root.
	if len(n.recent)*len(n.recent) > 2*len(ts.base) || ts.holdsAny(probes) {
		n = newTombstoneSet(overlay(ts.base, n.recent, compareRemoves, keep), cutoff)
	}
	return n
}

// holdsAny reports whether base may hold the file of one of probes.
func (ts *tombstoneSet) holdsAny(probes []Remove) bool {
	for i := range probes {
		if ts.escaped || strings.IndexByte(probes[i].Path, '%') >= 0 {
			return len(ts.base) > 0
		}
		if _, ok := slices.BinarySearchFunc(ts.base, probes[i], compareRemoves); ok {
			return true
		}
	}
	return false
}
