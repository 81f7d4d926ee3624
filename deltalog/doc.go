// Package deltalog reads and writes the Delta Lake transaction log: actions, schemas,
// protocol features, snapshots, optimistic commits with conflict detection, checkpoints
// and txn application versions. It knows nothing of Kafka or Avro. It carries no
// API-stability promise.
package deltalog
