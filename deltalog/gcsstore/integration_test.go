//go:build integration

package gcsstore_test

import (
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

// TestFakeGCSRacingWriters races two writers, each with its own client, for the
// versions of one table.
func TestFakeGCSRacingWriters(t *testing.T) {
	bucket := fulltier.NewGCSBucket(t)
	lost := storetest.RacingWriters(t, [2]deltalog.Store{fakeStore(t, bucket, "race"), fakeStore(t, bucket, "race")}, 25)
	require.Positive(t, lost, "the writers never raced for a version: the test proved nothing")
}
