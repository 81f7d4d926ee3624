package fulltier

import (
	"os"
	"testing"
)

// UnityURL returns the URL of the OSS Unity Catalog server. When
// scripts/test.sh could not have the server on this machine it skips the
// test with the script's reason; when neither variable is set it fails the
// test, as every other server helper does.
func UnityURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvUnityURL); u != "" {
		return u
	}
	if why := os.Getenv(EnvUnityUnavailable); why != "" {
		t.Skipf("fulltier: needs the Unity Catalog server, which this machine cannot run: %s "+
			"(the requests the unity client sends are still checked against Unity Catalog's published API)", why)
	}
	return env(t, EnvUnityURL)
}
