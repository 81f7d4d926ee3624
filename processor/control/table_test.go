package control

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

func at(n int) codecs.Position {
	var l codecs.LSN
	l[8], l[9] = byte(n>>8), byte(n)
	return codecs.Position{Commit: l, Change: l, Serial: 1}
}

func tableRow(name string, version int64, complete, last int) Row {
	base := time.Date(2024, 3, 15, 0, 0, 0, 0, time.UTC)
	return Row{Kind: KindTable, Name: name, TablePath: "tables/" + name, DeltaVersion: version, ScanFrom: -1,
		CompleteThrough: at(complete), CompleteThroughCommit: base.Add(time.Duration(complete) * time.Second),
		LastApplied: at(last), LastAppliedCommit: base.Add(time.Duration(last) * time.Second)}
}

// TestAdvance: rows move forward only, a table gets a version row each time
// its complete_through moves, and nothing is committed when nothing moves.
func TestAdvance(t *testing.T) {
	store := memstore.New(memstore.Options{})
	c, err := Open(t.Context(), store, nil)
	require.NoError(t, err)
	v, err := c.Advance(t.Context(), Update{Tables: []Row{tableRow("sales.dbo.orders", 3, 5, 7), tableRow("sales.dbo.lines", 2, 4, 4)}})
	require.NoError(t, err)
	require.EqualValues(t, 1, v)
	// An older view (a process that read less) moves nothing.
	v, err = c.Advance(t.Context(), Update{Tables: []Row{tableRow("sales.dbo.orders", 2, 4, 6)}})
	require.NoError(t, err)
	require.EqualValues(t, -1, v)
	// last_applied moves alone: no version row.
	_, err = c.Advance(t.Context(), Update{Tables: []Row{tableRow("sales.dbo.orders", 4, 5, 9)}})
	require.NoError(t, err)
	fin := time.Date(2024, 3, 15, 0, 0, 4, 0, time.UTC)
	_, err = c.Advance(t.Context(), Update{
		Tables: []Row{tableRow("sales.dbo.orders", 5, 8, 9)},
		Groups: []Row{{Kind: KindGroup, Name: "sales", DeltaVersion: -1, ScanFrom: -1, CompleteThrough: at(4), CompleteThroughCommit: fin, FinalizedUntil: fin}},
	})
	require.NoError(t, err)

	st, err := c.Read(t.Context())
	require.NoError(t, err)
	o := st.Tables["sales.dbo.orders"]
	require.Equal(t, at(8), o.CompleteThrough)
	require.Equal(t, at(9), o.LastApplied)
	require.EqualValues(t, 5, o.DeltaVersion)
	require.Equal(t, fin, st.Groups["sales"].FinalizedUntil)
	require.False(t, o.UpdatedAt.IsZero())
	var got []string
	for _, r := range st.Versions["sales.dbo.orders"] {
		got = append(got, fmt.Sprintf("v%d through %s", r.DeltaVersion, r.CompleteThrough.Commit))
	}
	require.Equal(t, []string{"v3 through " + at(5).Commit.String(), "v5 through " + at(8).Commit.String()}, got)
	require.Len(t, st.Versions["sales.dbo.lines"], 1)
}

// TestAdvanceConcurrently: processes that share the control table, each
// advancing its own tables and a shared group, lose no update.
func TestAdvanceConcurrently(t *testing.T) {
	store := memstore.New(memstore.Options{})
	var wg sync.WaitGroup
	const writers, rounds = 3, 15
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Open(t.Context(), store, nil)
			if err != nil {
				t.Error(err)
				return
			}
			for i := 1; i <= rounds; i++ {
				fin := time.Date(2024, 3, 15, 0, 0, i, 0, time.UTC)
				_, err := c.Advance(t.Context(), Update{
					Tables: []Row{tableRow(fmt.Sprintf("t%d", w), int64(i), i, i)},
					Groups: []Row{{Kind: KindGroup, Name: "g", DeltaVersion: -1, ScanFrom: -1, CompleteThrough: at(i), CompleteThroughCommit: fin, FinalizedUntil: fin}},
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	c, err := Open(t.Context(), store, nil)
	require.NoError(t, err)
	st, err := c.Read(t.Context())
	require.NoError(t, err)
	for w := range writers {
		name := fmt.Sprintf("t%d", w)
		require.Equal(t, at(rounds), st.Tables[name].CompleteThrough, name)
		require.Len(t, st.Versions[name], rounds, "%s: a version row per advance", name)
	}
	require.Equal(t, time.Date(2024, 3, 15, 0, 0, rounds, 0, time.UTC), st.Groups["g"].FinalizedUntil)
	var versionFiles int
	for _, f := range st.files {
		if *f.PartitionValues[colKind] == KindVersion {
			versionFiles++
		}
	}
	require.LessOrEqual(t, versionFiles, maxVersionFiles, "version rows are folded")
}
