// Package dbzgen generates Debezium SQL Server change events exactly as
// Debezium and the Confluent AvroConverter put them on Kafka: Avro key and
// value schemas registered in a Schema Registry, and records in the Confluent
// wire format (magic byte 0, 4-byte big-endian schema id, Avro body).
//
// It is a test and demo helper: codecs tests, the quickstart command and the
// benchmarks use it in place of SQL Server, Kafka Connect and Debezium. The
// schemas follow ../shared/reference/debezium-sqlserver.md (record names,
// connect.* properties, logical types per time.precision.mode,
// decimal.handling.mode and binary.handling.mode, the Source block of each
// Debezium layout); the cross-check test compares its bytes with fastavro.
//
// Rows are given in natural Go types (time.Time for temporal columns, a
// decimal string or *big.Rat for decimals, []byte for binaries); the
// generator applies SQL Server's rounding and Debezium's per-mode encoding.
//
//	gen := dbzgen.New(client, dbzgen.DefaultOptions())
//	orders, err := gen.Table(dbzgen.Orders())
//	key, value, err := gen.Encode(ctx, dbzgen.Event{Table: orders, Op: dbzgen.OpCreate, After: row, ...})
package dbzgen
