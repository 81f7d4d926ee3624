// Package deltalog reads and writes the Delta Lake transaction log: actions, schemas,
// protocol features, snapshots, optimistic commits with conflict detection, checkpoints,
// deletion vectors and txn application versions. It knows nothing of Kafka or Avro, and it
// carries no API-stability promise.
//
// # Storage
//
// A table lives in a [Store] rooted at the table directory: deltalog/localstore,
// deltalog/s3store and deltalog/memstore (tests, with fault injection). A commit is an
// atomic create-if-absent of the next `_delta_log/<version>.json`, so storage needs no lock
// service (docs/adr/0011).
//
// # Reading
//
// [Open] returns a [Table]; [Table.Snapshot], [Table.SnapshotAt] and [Table.SnapshotAtTime]
// replay the newest complete checkpoint at or below the target version (classic, multi-part
// or v2 with sidecars), then the JSON commits after it. A table that needs a reader feature
// we do not implement is refused with an [UnsupportedFeatureError] naming the feature; a
// table with a live data file named by absolute URI (SHALLOW CLONE writes them) with an
// [AbsolutePathError], unless opened with [ResolveAbsolutePaths] to be read (a commit
// from such a snapshot is still refused); a missing, truncated or corrupt file, or a metaData without a
// valid schemaString, gives a [CorruptFileError] naming it.
//
// # Committing
//
//	read snapshot v ──► build actions ──► PutIfAbsent(v+1.json)
//	                                        │
//	                  ┌─── ErrExist ◄───────┤
//	                  ▼                     └──► success: checkpoint every
//	   read winners v+1..w, check conflicts        delta.checkpointInterval,
//	   (protocol, metadata, files read or          then expired-log cleanup
//	    removed, txn appIds, domains)
//	                  │
//	     conflict ──► *ConflictError      no conflict ──► retry at w+1 (bounded)
//
// [ExactVersion] skips the retry: a taken v+1 fails the commit with [ErrExist]. An
// [Operation] carries commitInfo's operation, parameters and metrics, and any fields of the
// writer's own ([Operation].Extra); [Table.CommitInfo] reads one version's back.
//
// The writer checks the table's writer features before every commit and refuses what it
// cannot honour (docs/adr/0010).
//
// # Exactly-once application versions
//
// A [Txn] action records, per application id, the last version an application applied.
// cdc2delta writes one per Kafka partition in the same commit as the data, so the offsets
// and the rows become visible together (docs/adr/0020); [Snapshot.TxnVersion] reads them.
package deltalog
