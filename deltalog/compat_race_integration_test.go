//go:build integration

package deltalog_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

var raceSchema = &deltalog.StructType{Fields: []deltalog.StructField{
	{Name: "id", Type: deltalog.TypeLong, Metadata: map[string]any{}},
	{Name: "writer", Type: deltalog.TypeString, Nullable: true, Metadata: map[string]any{}},
	{Name: "seq", Type: deltalog.TypeLong, Nullable: true, Metadata: map[string]any{}},
}}

// raceCommit is one commit a racing writer made.
type raceCommit struct {
	writer  string
	seq     int64
	version int64
	retries int
}

// TestCompatRacingWriters runs two deltalog writers, each with its own Store, committing
// concurrently to one table on local disk and on S3 (moto, If-None-Match commits). Every
// version must be won by exactly one writer, no commit may be lost, and delta-rs must
// then read all rows and both writers' txn versions.
func TestCompatRacingWriters(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		dir := t.TempDir()
		newStore := func() deltalog.Store {
			s, err := localstore.New(localstore.Options{Dir: dir, NoSync: true})
			require.NoError(t, err)
			return s
		}
		raceTable(t, newStore, dir)
	})
	t.Run("s3", func(t *testing.T) {
		bucket := fulltier.NewBucket(t)
		endpoint := fulltier.S3Endpoint(t)
		newStore := func() deltalog.Store {
			s, err := s3store.New(t.Context(), s3store.Options{
				Bucket: bucket, Prefix: "race/orders", Endpoint: endpoint, UsePathStyle: true,
				Region:      envOrDefault("AWS_REGION", "us-east-1"),
				Credentials: credentials.NewStaticCredentialsProvider(envOrDefault("AWS_ACCESS_KEY_ID", "test"), envOrDefault("AWS_SECRET_ACCESS_KEY", "test"), ""),
			})
			require.NoError(t, err)
			return s
		}
		raceTable(t, newStore, "s3://"+bucket+"/race/orders")
	})
}

func raceTable(t *testing.T, newStore func() deltalog.Store, path string) {
	ctx := t.Context()
	const perWriter = 12
	writers := []string{"writer-a", "writer-b"}

	creator, err := deltalog.Open(ctx, newStore())
	require.NoError(t, err)
	ss, err := raceSchema.SchemaString()
	require.NoError(t, err)
	meta := deltalog.Metadata{
		ID: uuid.NewString(), Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString: ss, PartitionColumns: []string{}, Configuration: map[string]string{},
	}
	proto := deltalog.MinimalProtocol(raceSchema, meta.Configuration)
	_, err = creator.Commit(ctx, nil, []deltalog.Action{{Protocol: &proto}, {Metadata: &meta}},
		deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)

	var (
		mu      sync.Mutex
		commits []raceCommit
		errs    []error
		start   = make(chan struct{})
		wg      sync.WaitGroup
	)
	for wi, name := range writers {
		store := newStore()
		tbl, err := deltalog.Open(ctx, store, deltalog.CommitRetries(4*perWriter),
			deltalog.RetryBackoff(time.Millisecond, 20*time.Millisecond))
		require.NoError(t, err)
		wg.Go(func() {
			<-start
			for seq := range int64(perWriter) {
				c, err := raceOne(t, tbl, store, name, int64(wi)*1000+seq, seq)
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s commit %d: %w", name, seq, err))
				} else {
					commits = append(commits, c)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	require.Empty(t, errs)

	// Every version 1..2n was won by exactly one commit.
	n := len(writers) * perWriter
	require.Len(t, commits, n)
	versions := make([]int64, 0, n)
	retries := 0
	for _, c := range commits {
		versions = append(versions, c.version)
		retries += c.retries
	}
	slices.Sort(versions)
	for i, v := range versions {
		require.Equal(t, int64(i+1), v, "versions won: %v", versions)
	}
	t.Logf("%d commits, %d lost races retried", n, retries)

	// Each commit file holds the txn of the writer that won it, and only that.
	store := newStore()
	for _, c := range commits {
		apps := commitAppIDs(t, store, c.version)
		require.Equal(t, map[string]int64{c.writer: c.seq}, apps, "version %d", c.version)
	}

	snap, err := creator.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(n), snap.Version())
	for _, w := range writers {
		v, ok := snap.TxnVersion(w)
		require.True(t, ok)
		require.Equal(t, int64(perWriter-1), v, "txn of %s", w)
	}
	ours := readStore(t, store, nil)
	require.Len(t, ours.Rows, n)

	got := fulltier.ReadTable(t, fulltier.DeltaRS, path, fulltier.ReadOptions{AppIDs: writers})
	require.Equal(t, ours.Rows, engineRows(t, engineFields(got.Schema), got.Rows), "delta-rs rows")
	for _, w := range writers {
		require.NotNil(t, got.Txn[w], "delta-rs txn of %s", w)
		require.Equal(t, int64(perWriter-1), *got.Txn[w], "delta-rs txn of %s", w)
	}
}

// raceOne appends one row as a blind append with the writer's txn.
func raceOne(t *testing.T, tbl *deltalog.Table, store deltalog.Store, writer string, id, seq int64) (raceCommit, error) {
	ctx := t.Context()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return raceCommit{}, err
	}
	w, err := datafile.NewWriter(datafile.Options{Schema: raceSchema, Properties: map[string]string{}})
	if err != nil {
		return raceCommit{}, err
	}
	adds, err := w.Write(ctx, store, [][]any{{id, writer, seq}})
	if err != nil {
		return raceCommit{}, err
	}
	actions := []deltalog.Action{{Add: &adds[0]}, {Txn: &deltalog.Txn{AppID: writer, Version: seq}}}
	res, err := tbl.Commit(ctx, snap, actions, deltalog.Operation{
		Name: deltalog.OpWrite, Parameters: map[string]string{"mode": `"Append"`},
	}, deltalog.ReadAppIDs(writer))
	if err != nil {
		return raceCommit{}, err
	}
	return raceCommit{writer: writer, seq: seq, version: res.Version, retries: res.Retries}, nil
}

// commitAppIDs returns the txn actions of one commit file.
func commitAppIDs(t *testing.T, store deltalog.Store, version int64) map[string]int64 {
	t.Helper()
	rc, err := store.Get(t.Context(), fmt.Sprintf("_delta_log/%020d.json", version))
	require.NoError(t, err)
	defer rc.Close()
	apps := map[string]int64{}
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var a struct {
			Txn *deltalog.Txn `json:"txn"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &a))
		if a.Txn != nil {
			apps[a.Txn.AppID] = a.Txn.Version
		}
	}
	require.NoError(t, sc.Err())
	return apps
}
