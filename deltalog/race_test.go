package deltalog_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

func raceStores(t *testing.T) map[string]deltalog.Store {
	ls, err := localstore.New(localstore.Options{Dir: t.TempDir(), NoSync: true})
	require.NoError(t, err)
	return map[string]deltalog.Store{"memstore": memstore.New(memstore.Options{}), "localstore": ls}
}

// TestRaceBlindAppends: two writers append concurrently; every version is won by exactly
// one writer and no commit is lost (blind appends never conflict, they are retried).
func TestRaceBlindAppends(t *testing.T) {
	const perWriter = 25
	for name, st := range raceStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			creator, err := deltalog.Open(ctx, st, deltalog.DisableCheckpoints())
			require.NoError(t, err)
			createTable(t, creator, nil)

			var mu sync.Mutex
			won := map[int64]string{}
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for _, w := range []string{"A", "B"} {
				wg.Go(func() {
					tbl, err := deltalog.Open(ctx, st, deltalog.CommitRetries(1000), deltalog.RetryBackoff(0, time.Millisecond))
					if err != nil {
						errs <- err
						return
					}
					for i := range perWriter {
						snap, err := tbl.Snapshot(ctx)
						if err != nil {
							errs <- err
							return
						}
						res, err := tbl.Commit(ctx, snap, []deltalog.Action{
							addFile(fmt.Sprintf("%s-%03d.parquet", w, i)), txnAction("writer/"+w, int64(i)),
						}, deltalog.Operation{Name: deltalog.OpWrite})
						if err != nil {
							errs <- fmt.Errorf("writer %s commit %d: %w", w, i, err)
							return
						}
						mu.Lock()
						if prev, dup := won[res.Version]; dup {
							errs <- fmt.Errorf("version %d won by both %s and %s", res.Version, prev, w)
						}
						won[res.Version] = w
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.Len(t, won, 2*perWriter)
			for v := int64(1); v <= 2*perWriter; v++ {
				require.Contains(t, won, v)
			}
			snap, err := creator.Snapshot(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(2*perWriter), snap.Version())
			require.Len(t, snap.Files(), 2*perWriter)
			for _, w := range []string{"A", "B"} {
				v, ok := snap.TxnVersion("writer/" + w)
				require.True(t, ok)
				require.Equal(t, int64(perWriter-1), v)
			}
		})
	}
}

// TestRaceReadModifyWrite: two writers increment a counter held as the name of the single
// live file (remove counter-N, add counter-N+1). Conflict detection must make every lost
// update fail, so the final counter equals the number of successful commits.
func TestRaceReadModifyWrite(t *testing.T) {
	const perWriter = 15
	for name, st := range raceStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			creator, err := deltalog.Open(ctx, st, deltalog.DisableCheckpoints())
			require.NoError(t, err)
			snap := createTable(t, creator, nil)
			_, err = creator.Commit(ctx, snap, []deltalog.Action{addFile("counter-0.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
			require.NoError(t, err)

			var wg sync.WaitGroup
			var mu sync.Mutex
			conflicts, successes := 0, 0
			errs := make(chan error, 2)
			for range 2 {
				wg.Go(func() {
					tbl, err := deltalog.Open(ctx, st, deltalog.RetryBackoff(0, time.Millisecond), deltalog.DisableCheckpoints())
					if err != nil {
						errs <- err
						return
					}
					for done := 0; done < perWriter; {
						err := increment(ctx, tbl)
						var ce *deltalog.ConflictError
						switch {
						case errors.As(err, &ce):
							mu.Lock()
							conflicts++
							mu.Unlock()
						case err != nil:
							errs <- err
							return
						default:
							done++
							mu.Lock()
							successes++
							mu.Unlock()
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			snap, err = creator.Snapshot(ctx)
			require.NoError(t, err)
			files := snap.Files()
			require.Len(t, files, 1, "a lost update would leave two live counters")
			require.Equal(t, fmt.Sprintf("counter-%d.parquet", 2*perWriter), files[0].Path)
			require.Equal(t, 2*perWriter, successes)
			require.Equal(t, int64(1+2*perWriter), snap.Version(), "conflicting attempts must not commit")
			t.Logf("%s: %d conflicts detected", name, conflicts)
		})
	}
}

func increment(ctx context.Context, tbl *deltalog.Table) error {
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return err
	}
	files := snap.Files()
	if len(files) != 1 {
		return fmt.Errorf("version %d has %d live files", snap.Version(), len(files))
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(files[0].Path, "counter-"), ".parquet"))
	if err != nil {
		return err
	}
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{
		removeFile(files[0].Path), addFile(fmt.Sprintf("counter-%d.parquet", n+1)),
	}, deltalog.Operation{Name: deltalog.OpMerge}, deltalog.ReadFiles(files[0].Path))
	return err
}
