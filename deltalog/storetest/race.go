package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// RacingWriters has two writers on one table, each with its own client, make
// commitsEach commits as committers do: write the next version with
// PutIfAbsent and, on ErrExist, try the one after. Every version must be won
// by exactly one writer, with its bytes, and no commit may be lost. It
// returns how many races the writers lost in all.
func RacingWriters(t *testing.T, writers [2]deltalog.Store, commitsEach int) (lost int) {
	ctx := t.Context()
	won := make([][]int, len(writers)) // versions each writer's commits landed at
	lostBy := make([]int, len(writers))
	errs := make([]error, len(writers))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w, s := range writers {
		wg.Go(func() {
			<-start
			v := 0
			for c := 0; c < commitsEach; {
				body := fmt.Appendf(nil, "writer %d commit %d", w, c)
				err := s.PutIfAbsent(ctx, fmt.Sprintf("_delta_log/%020d.json", v), body)
				switch {
				case err == nil:
					won[w] = append(won[w], v)
					c++
				case errors.Is(err, deltalog.ErrExist):
					lostBy[w]++
				default:
					errs[w] = err
					return
				}
				v++
			}
		})
	}
	close(start)
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	t.Logf("races lost: writer 0 %d, writer 1 %d", lostBy[0], lostBy[1])

	owner := make(map[int]string)
	for w, vs := range won {
		require.Len(t, vs, commitsEach, "writer %d lost a commit", w)
		for c, v := range vs {
			prev, dup := owner[v]
			require.False(t, dup, "version %d won twice (%s, writer %d)", v, prev, w)
			owner[v] = fmt.Sprintf("writer %d commit %d", w, c)
		}
	}
	paths, err := Paths(ctx, writers[0], "_delta_log/", "")
	require.NoError(t, err)
	require.Len(t, paths, 2*commitsEach, "versions 0..n-1 without gaps")
	for v := range 2 * commitsEach {
		got, err := Read(ctx, writers[1], fmt.Sprintf("_delta_log/%020d.json", v))
		require.NoError(t, err)
		require.Equal(t, owner[v], string(got), "version %d", v)
	}
	return lostBy[0] + lostBy[1]
}
