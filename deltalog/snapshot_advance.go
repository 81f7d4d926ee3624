package deltalog

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// A writer keeps its snapshot between commits and moves it on by the few commits after
// it. Rebuilding the whole state for that (every live file and tombstone into maps and
// back into sorted slices) costs in proportion to the table, and a trickled table keeps a
// tombstone per commit for the retention period (7 days by default). advance costs one
// copy of the live files and about the square root of the tombstones (tombstoneSet).

// stateAfter returns replay state that holds base's protocol, metadata, txns and domains
// but no files: applying the commits after base to it leaves, in files and tombstones,
// only what those commits changed, for advance.
func stateAfter(base *Snapshot) *tableState {
	st := newTableState()
	p, m := base.protocol, base.metadata
	st.protocol, st.metadata = &p, &m
	maps.Copy(st.txns, base.txns)
	maps.Copy(st.domains, base.domains)
	return st
}

// advance returns the live files and tombstones of base after the commits st was applied
// from (stateAfter), at a new cutoff for tombstones: base's, less those whose key st
// adds or removes, merged in order with st's.
func advance(base *Snapshot, st *tableState, cutoff int64) ([]Add, tombstoneSet) {
	touched := make(map[string]bool, len(st.files)+len(st.tombstones)) // by decoded path
	probes := make([]Remove, 0, len(st.files)+len(st.tombstones))      // by raw path
	for k, a := range st.files {
		touched[k.path] = true
		probes = append(probes, Remove{Path: a.Path, DeletionVector: a.DeletionVector})
	}
	for k, r := range st.tombstones {
		touched[k.path] = true
		probes = append(probes, Remove{Path: r.Path, DeletionVector: r.DeletionVector})
	}
	changed := func(path string, dv *DeletionVector) bool {
		// Most paths need no decoding: look them up as they are, and key only those
		// that match (or that do need it).
		if strings.IndexByte(path, '%') < 0 && !touched[path] {
			return false
		}
		k := keyOf(path, dv)
		_, added := st.files[k]
		_, removed := st.tombstones[k]
		return added || removed
	}
	files := overlay(base.files, sortedValues(st.files, compareAdds), compareAdds,
		func(a *Add) bool { return !changed(a.Path, a.DeletionVector) })
	tombs := base.tombs.next(sortedValues(st.tombstones, compareRemoves), probes,
		func(r *Remove) bool { return changed(r.Path, r.DeletionVector) }, cutoff)
	return files, tombs
}

// overlay returns the entries of base (sorted by cmp) that keep accepts, merged with
// extra (sorted, and none of them equal to a kept entry). Base is copied once; the
// merge positions come from binary searches, so the comparisons grow with extra.
func overlay[T any](base, extra []T, cmp func(a, b T) int, keep func(*T) bool) []T {
	out := make([]T, 0, len(base)+len(extra))
	for i := range base {
		if keep(&base[i]) {
			out = append(out, base[i])
		}
	}
	if len(extra) == 0 {
		return out
	}
	kept := len(out)
	at := make([]int, len(extra))
	for j := range extra {
		at[j], _ = slices.BinarySearchFunc(out[:kept], extra[j], cmp)
	}
	out = out[:kept+len(extra)]
	// From the back: the kept entries from at[j] on move up by the j+1 extras that
	// sort before them, and extra[j] lands just below them.
	end := kept
	for j := len(extra) - 1; j >= 0; j-- {
		copy(out[at[j]+j+1:], out[at[j]:end])
		out[at[j]+j] = extra[j]
		end = at[j]
	}
	return out
}

// sortedValues returns the entries of m sorted by cmp.
func sortedValues[T any](m map[FileKey]*T, cmp func(a, b T) int) []T {
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, *v)
	}
	slices.SortFunc(out, cmp)
	return out
}

// compareAdds and compareRemoves order a snapshot's files and tombstones: by path, then
// deletion vector.
func compareAdds(a, b Add) int {
	return compareFiles(a.Path, b.Path, a.DeletionVector, b.DeletionVector)
}

func compareRemoves(a, b Remove) int {
	return compareFiles(a.Path, b.Path, a.DeletionVector, b.DeletionVector)
}

// compareFiles builds the deletion vectors' ids only for equal paths: cmp.Or would
// build them for every comparison, which was most of sorting a large table's removes.
func compareFiles(pa, pb string, da, db *DeletionVector) int {
	if c := cmp.Compare(pa, pb); c != 0 {
		return c
	}
	return cmp.Compare(da.UniqueID(), db.UniqueID())
}
