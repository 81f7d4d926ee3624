package deltalog

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOverlay compares overlay with filtering and sorting everything, on random inputs.
func TestOverlay(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		base, extra := []int{}, []int{}
		for v := range r.IntN(40) {
			base = append(base, 2*v) // even
		}
		for range r.IntN(6) {
			extra = append(extra, 2*r.IntN(45)+1) // odd: never equal to a base entry
		}
		slices.Sort(extra)
		extra = slices.Compact(extra)
		drop := map[int]bool{}
		for _, v := range base {
			if r.IntN(4) == 0 {
				drop[v] = true
			}
		}
		want := slices.DeleteFunc(slices.Clone(base), func(v int) bool { return drop[v] })
		want = append(want, extra...)
		slices.Sort(want)
		got := overlay(base, extra, cmp.Compare[int], func(v *int) bool { return !drop[*v] })
		require.Equal(t, want, got, "base %v extra %v drop %v", base, extra, drop)
	}
}

// TestTombstoneSetShares: a commit that adds a tombstone shares base and copies only
// recent; one that touches a file base holds, or lets recent grow past √(2·base),
// rebuilds base; an expired tombstone in a shared base is not read.
func TestTombstoneSetShares(t *testing.T) {
	rm := func(path string, at int64) Remove { return Remove{Path: path, DeletionTimestamp: &at} }
	var base []Remove
	for i := range 200 {
		base = append(base, rm(fmt.Sprintf("b%03d", i), int64(100+i)))
	}
	ts := newTombstoneSet(base, 0)
	never := func(*Remove) bool { return false }
	n := ts.next([]Remove{rm("c000", 1000)}, []Remove{{Path: "c000"}}, never, 0)
	require.Same(t, &ts.base[0], &n.base[0], "base shared")
	require.Len(t, n.recent, 1)
	require.Len(t, n.all(), 201)

	// The cutoff passes b000..b049: they stay in the shared base, unread.
	n = n.next([]Remove{rm("c001", 1000)}, []Remove{{Path: "c001"}}, never, 149)
	require.Same(t, &ts.base[0], &n.base[0])
	all := n.all()
	require.Len(t, all, 152)
	require.Equal(t, 152, n.len())
	require.Equal(t, "b050", all[0].Path)

	// Re-adding b100 (in base) rebuilds it without b100 and without the expired.
	b100 := func(r *Remove) bool { return r.Path == "b100" }
	r := n.next(nil, []Remove{{Path: "b100"}}, b100, 149)
	require.Len(t, r.base, 151)
	require.Empty(t, r.recent)
	require.NotContains(t, paths(r.all()), "b100")

	// recent grows to 20 (21² > 2·200) before base is rebuilt.
	g := n
	for i := 2; len(g.recent) > 0; i++ {
		path := fmt.Sprintf("c%03d", i)
		g = g.next([]Remove{rm(path, 1000)}, []Remove{{Path: path}}, never, 149)
		require.LessOrEqual(t, len(g.recent), 20)
	}
	require.Equal(t, 150+21, len(g.base), "the unexpired of base and the 21 of recent")
}

func paths(rs []Remove) []string {
	out := make([]string, len(rs))
	for i := range rs {
		out[i] = rs[i].Path
	}
	return out
}
