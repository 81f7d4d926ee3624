// Package gcsstore is a deltalog.Store on Google Cloud Storage and GCS emulators
// (fake-gcs-server), built on cloud.google.com/go/storage.
//
// PutIfAbsent writes with the precondition ifGenerationMatch=0 (the object must not
// exist): GCS answers 412 Precondition Failed when another writer holds the name, and
// the store reports deltalog.ErrExist so the committer rebases. This is what delta-rs and
// Spark rely on for GCS; no lock service is needed.
package gcsstore
