package fulltier

import (
	"os"
	"testing"
)

// env returns the value of the variable key, failing the test when it is
// unset, with the command that sets it.
func env(t testing.TB, key string) string {
	t.Helper()
	v := os.Getenv(key)
	if v == "" {
		t.Fatalf("fulltier: %s is not set: full-tier tests need the servers that "+
			"scripts/test.sh starts (run scripts/test.sh, or see docs/TESTING.md)", key)
	}
	return v
}
