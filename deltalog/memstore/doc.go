// Package memstore is an in-memory deltalog.Store for tests, with fault injection: fail
// the Nth Get, Put, PutIfAbsent, List or Delete whose path matches a glob, add latency,
// or apply a write and then report failure (a crash or lost acknowledgement after the
// object became durable). It follows pebble's vfs.NewMem plus errorfs.
package memstore
