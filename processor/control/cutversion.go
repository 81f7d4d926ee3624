package control

import (
	"slices"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// Exactness says whether a table version sits exactly on a group's cut.
type Exactness string

const (
	// Exact: the version holds every change through the cut and none after.
	Exact Exactness = "yes"
	// NotExact: the version also holds changes after the cut; no version of
	// a current-state table sits exactly on it.
	NotExact Exactness = "no"
	// ExactUnknown: the version was recorded after a restart, without what
	// it holds past its completeness.
	ExactUnknown Exactness = "unknown"
)

// CutVersion returns the first version row of table complete through cut
// and whether it sits exactly on it; ok is false when no version recorded
// yet is complete through it.
func (s *State) CutVersion(table string, cut codecs.Position) (r Row, exact Exactness, ok bool) {
	i := slices.IndexFunc(s.Versions[table], func(r Row) bool { return r.CompleteThrough.Compare(cut) >= 0 })
	if i < 0 {
		return Row{}, "", false
	}
	r = s.Versions[table][i]
	switch {
	case r.LastApplied == (codecs.Position{}):
		return r, ExactUnknown, true
	case r.LastApplied.Compare(cut) > 0:
		return r, NotExact, true
	}
	return r, Exact, true
}
