// Package s3store is a deltalog.Store on Amazon S3 and S3-compatible servers, built on
// aws-sdk-go-v2.
//
// PutIfAbsent is a PutObject with "If-None-Match: *" (S3 conditional writes, GA since
// August 2024, also in MinIO, R2 and moto): 412 Precondition Failed means another writer
// holds the key, and 409 ConditionalRequestConflict means a concurrent conditional write
// to the same key was in flight, so the put is retried until it gets 200 or 412. This is
// what delta-rs does by default since 0.23, so the two can write one table concurrently.
// No DynamoDB lock is needed or supported (see docs/adr/0011).
package s3store
