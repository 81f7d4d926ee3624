//go:build integration

package s3store_test

import (
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// motoStore opens a store on the full tier's moto server, with its own S3 client, the
// credentials of the standard chain (the dummies in the environment) and a fresh prefix.
func motoStore(t *testing.T, bucket, prefix string) *s3store.Store {
	s, err := s3store.New(t.Context(), s3store.Options{
		Bucket:       bucket,
		Prefix:       prefix,
		Region:       os.Getenv("AWS_REGION"),
		Endpoint:     fulltier.S3Endpoint(t),
		UsePathStyle: true,
	})
	require.NoError(t, err)
	return s
}

func TestMotoConformance(t *testing.T) {
	bucket := fulltier.NewBucket(t)
	storetest.Run(t, func(t *testing.T) deltalog.Store {
		return motoStore(t, bucket, "tables/"+uuid.NewString())
	})
}

// TestMotoRacingWriters races two writers, each with its own client, for the
// versions of one table.
func TestMotoRacingWriters(t *testing.T) {
	bucket := fulltier.NewBucket(t)
	storetest.RacingWriters(t, [2]deltalog.Store{motoStore(t, bucket, "race"), motoStore(t, bucket, "race")}, 25)
}
