//go:build integration

package gcsstore_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// fakeStore opens a store on the full tier's fake-gcs-server, with its own client
// (anonymous, as for any emulator) and a fresh prefix.
func fakeStore(t *testing.T, bucket, prefix string) *gcsstore.Store {
	s, err := gcsstore.New(t.Context(), gcsstore.Options{
		Bucket:   bucket,
		Prefix:   prefix,
		Endpoint: fulltier.GCSEndpoint(t),
	})
	require.NoError(t, err)
	return s
}

func TestFakeGCSConformance(t *testing.T) {
	bucket := fulltier.NewGCSBucket(t)
	storetest.Run(t, func(t *testing.T) deltalog.Store {
		return fakeStore(t, bucket, "tables/"+uuid.NewString())
	})
}

// TestFakeGCSRacingWriters has two writers, each with its own client, make commits to
// one table as committers do: write the next version with PutIfAbsent and, on ErrExist,
// try the one after. Every version must be won by exactly one writer, with its bytes,
// and no commit may be lost.
func TestFakeGCSRacingWriters(t *testing.T) {
	const commitsEach = 25
	ctx := t.Context()
	bucket := fulltier.NewGCSBucket(t)
	writers := []*gcsstore.Store{fakeStore(t, bucket, "race"), fakeStore(t, bucket, "race")}

	won := make([][]int, len(writers)) // versions each writer's commits landed at
	lost := make([]int, len(writers))  // races lost
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
					lost[w]++
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
	t.Logf("races lost: writer 0 %d, writer 1 %d", lost[0], lost[1])
	require.Positive(t, lost[0]+lost[1], "the writers never raced for a version: the test proved nothing")

	owner := make(map[int]string)
	for w, vs := range won {
		require.Len(t, vs, commitsEach, "writer %d lost a commit", w)
		for c, v := range vs {
			prev, dup := owner[v]
			require.False(t, dup, "version %d won twice (%s, writer %d)", v, prev, w)
			owner[v] = fmt.Sprintf("writer %d commit %d", w, c)
		}
	}
	paths, err := storetest.Paths(ctx, writers[0], "_delta_log/", "")
	require.NoError(t, err)
	require.Len(t, paths, 2*commitsEach, "versions 0..n-1 without gaps")
	for v := range 2 * commitsEach {
		got, err := storetest.Read(ctx, writers[1], fmt.Sprintf("_delta_log/%020d.json", v))
		require.NoError(t, err)
		require.Equal(t, owner[v], string(got), "version %d", v)
	}
}
