//go:build integration

package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestCrashRecoveryGCS is TestCrashRecovery with the tables on the full tier's
// fake-gcs-server: SIGKILLs land in GCS uploads and ifGenerationMatch=0 commits, and
// the tables must still equal the source.
func TestCrashRecoveryGCS(t *testing.T) {
	endpoint := fulltier.GCSEndpoint(t)
	bucket := fulltier.NewGCSBucket(t)
	client, err := gcsstore.NewClient(t.Context(), gcsstore.Options{Endpoint: endpoint})
	require.NoError(t, err)
	runCrashRecoveryOn(t, 1, 8, crashStorage{
		tablesURL: "gs://" + bucket,
		config:    fmt.Sprintf("storage: {gcs: {endpoint: %q}}", endpoint),
		open: func(t *testing.T, prefix string) deltalog.Store {
			st, err := client.Store(bucket, prefix)
			require.NoError(t, err)
			return st
		},
	})
}
