//go:build integration

package merge_test

// The full tier's oracle budget: new seeds every run.
const (
	oracleIterations = 500
	oracleLongTier   = true
)
