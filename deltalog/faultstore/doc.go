// Package faultstore wraps any deltalog.Store and injects faults into its calls: errors,
// delays, and writes that land but report failure. It plays the part pebble's errorfs plays
// for a file system, so a fault test can run against the local and S3 stores as well as
// the in-memory one.
package faultstore
