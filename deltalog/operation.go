package deltalog

import (
	"bytes"
	"encoding/json"
)

// Operation names as Spark records them in commitInfo.operation; DESCRIBE HISTORY, delta-rs
// history() and UIs display them.
const (
	OpWrite           = "WRITE"
	OpMerge           = "MERGE"
	OpDelete          = "DELETE"
	OpUpdate          = "UPDATE"
	OpOptimize        = "OPTIMIZE"
	OpRestore         = "RESTORE"
	OpCreateTable     = "CREATE TABLE"
	OpVacuumStart     = "VACUUM START"
	OpVacuumEnd       = "VACUUM END"
	OpSetTblProps     = "SET TBLPROPERTIES"
	OpStreamingUpdate = "STREAMING UPDATE"
)

// Operation describes a commit for commitInfo. It is plain data: Commit copies it into
// commitInfo.operation, operationParameters and operationMetrics.
//
// Parameters are Spark's operationParameters, each value itself a JSON-encoded string:
//   - WRITE: mode ("Append", "Overwrite"), partitionBy (JSON array)
//   - MERGE: predicate, matchedPredicates, notMatchedPredicates, notMatchedBySourcePredicates
//   - DELETE / UPDATE: predicate
//   - OPTIMIZE: predicate, zOrderBy
//   - VACUUM START: retentionCheckEnabled, defaultRetentionMillis, specifiedRetentionMillis
//   - VACUUM END: status
//   - RESTORE: version, timestamp
//
// Metrics are Spark's operationMetrics with decimal string values:
//   - WRITE: numFiles, numOutputRows, numOutputBytes (+ numRemovedFiles, numRemovedBytes on overwrite)
//   - MERGE: numSourceRows, numTargetRowsInserted, numTargetRowsUpdated, numTargetRowsDeleted,
//     numTargetRowsCopied, numTargetFilesAdded, numTargetFilesRemoved, numTargetBytesAdded,
//     numTargetBytesRemoved, numOutputRows, numTargetChangeFilesAdded,
//     numTargetDeletionVectorsAdded, numTargetDeletionVectorsRemoved,
//     numTargetDeletionVectorsUpdated, executionTimeMs, scanTimeMs, rewriteTimeMs
//   - DELETE: numAddedFiles, numRemovedFiles, numDeletedRows, numCopiedRows,
//     numDeletionVectorsAdded, numDeletionVectorsRemoved, numDeletionVectorsUpdated,
//     numAddedChangeFiles, numRemovedBytes, numAddedBytes, executionTimeMs
//   - UPDATE: as DELETE with numUpdatedRows instead of numDeletedRows
//   - OPTIMIZE: numAddedFiles, numRemovedFiles, numAddedBytes, numRemovedBytes, minFileSize,
//     p25FileSize, p50FileSize, p75FileSize, maxFileSize, numDeletionVectorsRemoved
//   - VACUUM START: numFilesToDelete, sizeOfDataToDelete; VACUUM END: numDeletedFiles,
//     numVacuumedDirectories
//   - RESTORE: tableSizeAfterRestore, numOfFilesAfterRestore, numRemovedFiles,
//     numRestoredFiles, removedFilesSize, restoredFilesSize
//
// Extra are further commitInfo fields, each written as a JSON string (readers find them in
// CommitInfo.Extra). commitInfo is free-form and readers ignore fields they do not know, so
// a writer can record its own bookkeeping there; prefix the names with the writer's
// ("cdc2delta.tombstones"). A name CommitInfo models is refused with ErrInvalidCommit.
type Operation struct {
	Name       string
	Parameters map[string]string
	Metrics    map[string]string
	Extra      map[string]string
}

// OperationValues are commitInfo.operationParameters or operationMetrics as stored, each
// value raw JSON. Spark writes only strings, but other writers do not: Databricks writes
// booleans ("statsOnLoad": false), RESTORE numbers ("version": 3), delta-rs numeric
// metrics ("num_added_files": 1). Keeping the JSON means none of them is dropped or
// retyped on the way to DESCRIBE HISTORY.
type OperationValues map[string]json.RawMessage

// Text returns the value of key as text: a JSON string unquoted, any other JSON value
// (number, boolean, null, object, array) as its compact JSON text, "" when absent.
func (ov OperationValues) Text(key string) string {
	raw, ok := ov[key]
	if !ok {
		return ""
	}
	var s string
	if bytes.HasPrefix(raw, []byte{'"'}) && json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// Texts returns every value as Text renders it.
func (ov OperationValues) Texts() map[string]string {
	if ov == nil {
		return nil
	}
	out := make(map[string]string, len(ov))
	for k := range ov {
		out[k] = ov.Text(k)
	}
	return out
}

// stringValues encodes Operation.Parameters or Metrics as JSON strings, as Spark does.
func stringValues(m map[string]string) OperationValues {
	if m == nil {
		return nil
	}
	out := make(OperationValues, len(m))
	for k, v := range m {
		b, _ := MarshalPlain(v) // a string always marshals
		out[k] = b
	}
	return out
}
