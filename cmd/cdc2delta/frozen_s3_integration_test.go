//go:build integration

package main

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestFrozenS3StallsWithinBudget runs the binary against the real broker
// and a private moto, shows that it applies, then freezes moto (SIGSTOP: it
// accepts connections and never answers). Within the retry budget plus one
// request timeout every table must be stalled in /readyz (503), and the log
// must name S3, the endpoint and the operation that hung. After SIGCONT
// everything must be applied exactly once.
func TestFrozenS3StallsWithinBudget(t *testing.T) {
	const (
		requestTimeout = 2 * time.Second
		budget         = 6 * time.Second
	)
	brokers := fulltier.KafkaBrokers(t)
	moto := fulltier.StartMoto(t)
	const bucket = "frozen"
	moto.CreateBucket(bucket)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"} {
		if os.Getenv(k) == "" {
			t.Setenv(k, v)
		}
	}
	prefix := fmt.Sprintf("frozens3%d", time.Now().UnixNano())
	src := newCrashSource(t, brokers, prefix, dbzgen.WorkloadOptions{Seed: 38, Keys: 100, Snapshot: true, MaxTxEvents: 3})
	s3c, err := s3store.NewClient(t.Context(), s3store.Options{Endpoint: moto.Endpoint, UsePathStyle: true})
	require.NoError(t, err)
	run := startStoreRun(t, src, brokers[0], prefix, storeTables{scheme: "s3", bucket: bucket,
		storage: fmt.Sprintf("{s3: {endpoint: %q, path_style: true, request_timeout: %s}}", moto.Endpoint, requestTimeout),
		open:    func(prefix string) (deltalog.Store, error) { return s3c.Store(bucket, prefix) }}, budget)

	run.stallsWhileFrozen(moto, budget, requestTimeout, storeStall{name: "S3", at: "S3 at " + moto.Endpoint,
		ops: "GetObject|PutObject|ListObjectsV2|DeleteObject", object: "s3://" + bucket + "/"})
}
