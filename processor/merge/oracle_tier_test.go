//go:build !integration

package merge_test

// The fast tier's oracle budget: fixed seeds, a few seconds of CPU.
const (
	oracleIterations = 40
	oracleLongTier   = false
)
