package deltalog_test

// Run: go test ./deltalog -run '^$' -bench 'BenchmarkSnapshotLoad|BenchmarkCommit' -benchtime 5x -count 6

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
)

// buildLog writes n commit files directly (no Commit overhead): version 0 creates the
// table, each later version adds one file and advances a txn, like a CDC append stream.
func buildLog(b *testing.B, st deltalog.Store, n int) {
	b.Helper()
	ctx := b.Context()
	for v := range n {
		var lines string
		if v == 0 {
			lines = `{"commitInfo":{"timestamp":1,"operation":"CREATE TABLE"}}` + "\n" +
				`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
				`{"metaData":{"id":"bench","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{}}}` + "\n"
		} else {
			lines = fmt.Sprintf(`{"commitInfo":{"timestamp":%d,"operation":"WRITE","readVersion":%d,"isolationLevel":"Serializable","isBlindAppend":true}}`+"\n"+
				`{"add":{"path":"part-%05d-8f2b1f8e-3c52-4a55-9b0e-5a1e3e0c0001.c000.zstd.parquet","partitionValues":{},"size":123456,"modificationTime":%d,"dataChange":true,"stats":"{\"numRecords\":1000,\"minValues\":{\"id\":%d},\"maxValues\":{\"id\":%d},\"nullCount\":{\"id\":0}}"}}`+"\n"+
				`{"txn":{"appId":"group/topic/0","version":%d,"lastUpdated":%d}}`+"\n",
				v, v-1, v, v, v*1000, v*1000+999, v*1000, v)
		}
		require.NoError(b, st.PutIfAbsent(ctx, fmt.Sprintf("_delta_log/%020d.json", v), []byte(lines)))
	}
}

func BenchmarkSnapshotLoad(b *testing.B) {
	const commits = 10_000
	for _, checkpoint := range []bool{false, true} {
		b.Run(fmt.Sprintf("commits=10k/checkpoint=%v", checkpoint), func(b *testing.B) {
			st, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
			require.NoError(b, err)
			buildLog(b, st, commits)
			tbl, err := deltalog.Open(b.Context(), st)
			require.NoError(b, err)
			if checkpoint {
				// Commit version 10,000 through Commit so that it writes the checkpoint.
				snap, err := tbl.Snapshot(b.Context())
				require.NoError(b, err)
				res, err := tbl.Commit(b.Context(), snap, []deltalog.Action{addFile("last.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
				require.NoError(b, err)
				require.True(b, res.Checkpointed, "%v", res.CheckpointErr)
			}
			b.ReportAllocs()
			for b.Loop() {
				snap, err := tbl.Snapshot(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				if snap.NumFiles() < commits-1 {
					b.Fatalf("%d files", snap.NumFiles())
				}
			}
			b.ReportMetric(float64(commits)*float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// BenchmarkCommitLocal measures one blind-append commit on local disk with fsync, the
// snapshot load excluded.
func BenchmarkCommitLocal(b *testing.B) {
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("fsync=%v", sync), func(b *testing.B) {
			st, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: !sync})
			require.NoError(b, err)
			tbl, err := deltalog.Open(b.Context(), st, deltalog.DisableCheckpoints())
			require.NoError(b, err)
			_, err = tbl.Commit(b.Context(), nil, createActions(b, testSchema(), nil), deltalog.Operation{Name: deltalog.OpCreateTable})
			require.NoError(b, err)
			snap, err := tbl.Snapshot(b.Context())
			require.NoError(b, err)
			i := 0
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				res, err := tbl.Commit(b.Context(), snap, []deltalog.Action{addFile(fmt.Sprintf("f%d.parquet", i)), txnAction("app", int64(i))},
					deltalog.Operation{Name: deltalog.OpWrite})
				total += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				i++
				b.StopTimer()
				if snap, err = tbl.SnapshotAt(b.Context(), res.Version); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "commit-µs")
		})
	}
}

// BenchmarkSnapshotUpdate measures bringing a kept snapshot of a 10k-commit table up to
// date after one more commit, the path a long-running writer takes.
func BenchmarkSnapshotUpdate(b *testing.B) {
	const commits = 10_000
	st, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
	require.NoError(b, err)
	buildLog(b, st, commits)
	tbl, err := deltalog.Open(b.Context(), st, deltalog.DisableCheckpoints())
	require.NoError(b, err)
	base, err := tbl.Snapshot(b.Context())
	require.NoError(b, err)
	_, err = tbl.Commit(b.Context(), base, []deltalog.Action{addFile("next.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		snap, err := tbl.Update(b.Context(), base)
		if err != nil {
			b.Fatal(err)
		}
		if snap.Version() != commits {
			b.Fatalf("version %d", snap.Version())
		}
	}
}

// BenchmarkCommitNext measures a writer's commit and its next snapshot on a trickled
// table: one live file rewritten per commit, and the tombstones of an hour, a day and a
// week of such commits every 10 s (the default retention keeps them 7 days). "update"
// reads the snapshot back with Table.Update, "result" takes CommitResult.Snapshot.
//
//	go test ./deltalog -run '^$' -bench CommitNext -benchmem -count 6
func BenchmarkCommitNext(b *testing.B) {
	for _, tombstones := range []int{360, 8_640, 60_480} {
		for _, next := range []string{"update", "result"} {
			b.Run(fmt.Sprintf("tombstones=%d/%s", tombstones, next), func(b *testing.B) {
				ctx := b.Context()
				st, err := localstore.New(localstore.Options{Dir: b.TempDir(), NoSync: true})
				require.NoError(b, err)
				tbl, err := deltalog.Open(ctx, st, deltalog.DisableCheckpoints())
				require.NoError(b, err)
				_, err = tbl.Commit(ctx, nil, createActions(b, testSchema(), nil), deltalog.Operation{Name: deltalog.OpCreateTable})
				require.NoError(b, err)
				snap, err := tbl.Snapshot(ctx)
				require.NoError(b, err)
				old := make([]deltalog.Action, 0, tombstones+1)
				for i := range tombstones {
					old = append(old, removeFile(fmt.Sprintf("part-%05d-8f2b1f8e-3c52-4a55-9b0e-5a1e3e0c0001.c000.zstd.parquet", i)))
				}
				tail := "tail-0.parquet"
				old = append(old, addFile(tail))
				res, err := tbl.Commit(ctx, snap, old, deltalog.Operation{Name: deltalog.OpWrite})
				require.NoError(b, err)
				if snap, err = tbl.SnapshotAt(ctx, res.Version); err != nil {
					b.Fatal(err)
				}
				require.Len(b, snap.Tombstones(), tombstones)
				i := 0
				b.ReportAllocs()
				for b.Loop() {
					i++
					file := fmt.Sprintf("tail-%d.parquet", i)
					res, err := tbl.Commit(ctx, snap, []deltalog.Action{removeFile(tail), addFile(file), txnAction("group/topic/0", int64(i))},
						deltalog.Operation{Name: deltalog.OpMerge}, deltalog.ReadWholeTable())
					if err != nil {
						b.Fatal(err)
					}
					tail = file
					if next == "result" && res.Snapshot != nil {
						snap = res.Snapshot
					} else if snap, err = tbl.Update(ctx, snap); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			})
		}
	}
}
