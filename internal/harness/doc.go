// Package harness holds no code: it is the parent of the packages that only
// tests and the benchmark binary (cmd/cdc2bench) use, so that a reader tells
// them apart from what ships.
//
//   - cdcmodel: the reference model the oracle tests compare the engine with
//   - e2ebench: the end-to-end, scale-out and many-tables benchmarks
//   - fulltier: the real servers and readers of the full test tier
//
// The rule: nothing the cdc2delta binary links imports a package under
// internal/harness, and every other package under internal/ is linked by it.
// layout_test.go checks both with `go list -deps`.
package harness
