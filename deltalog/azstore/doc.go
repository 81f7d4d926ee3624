// Package azstore is a deltalog.Store on Azure Blob Storage, ADLS Gen2 and
// OneLake, built on the Azure SDK for Go (azblob, azidentity).
//
// Every table is reached through the Blob endpoint of its account, ADLS Gen2
// (abfss://) and OneLake tables included, as delta-rs and object_store do:
// the Blob API serves hierarchical-namespace accounts too, and it is the one
// API the Azurite emulator serves.
//
// PutIfAbsent is a Put Blob with "If-None-Match: *": 409 BlobAlreadyExists
// or 412 ConditionNotMet means another writer holds the name, and the
// committer rebases on deltalog.ErrExist. No lease or lock is needed.
package azstore
