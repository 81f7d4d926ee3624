// Package memstore is an in-memory deltalog.Store for tests, like pebble's vfs.NewMem.
// Clone captures the durable state a restarted process would find; to inject faults,
// wrap it in a faultstore.Store.
package memstore
