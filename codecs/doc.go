// Package codecs turns Kafka records written by Debezium's SQL Server
// connector through Confluent's Avro converter into typed change events.
//
// A record's key and value bytes go in; a [Change] comes out: the operation,
// the primary-key values, the row image aligned with the table's [Layout],
// the columns the event did not carry, and the source [Position] that orders
// the events of one table. The package knows nothing about Delta files: it
// describes columns with its own [Type], whose [Type.DeltaName] is the Delta
// schema type a table needs.
//
// # Wire format
//
// Every non-empty key and value starts with the Confluent header: a zero
// magic byte and a 4-byte big-endian schema id, followed by the Avro binary
// body. An empty value is a tombstone ([OpTombstone]), not an error.
//
// # Schemas
//
// Schemas are fetched by id through a [SchemaSource] (normally a [Registry]
// client) once, compiled into one goavro codec plus a precomputed column
// layout, and reused for every later record carrying that id. Concurrent
// misses on one id share one lookup. Avro logical types are decoded by this
// package, not by goavro, so decimals never pass through big.Rat. Row images
// and keys of the shapes Debezium writes are read by a decoder compiled from
// the schema (rowdec.go, ADR 0033), other shapes by goavro; the envelope's
// framework fields (op, the source block) are read in place and the row image
// the op does not need is skipped (ADR 0004), with a goavro-only fallback for
// unfamiliar envelopes.
//
// # Types
//
// docs/type-mapping.md lists how each SQL Server type reaches Delta, and
// docs/adr/0002-sqlserver-type-mapping.md explains the choices (precision,
// wall-clock timestamps, time of day, out-of-range values).
//
// The package carries no API-stability promise.
package codecs
