package fulltier

import (
	"testing"
	"time"
)

// EnvHiveURIs holds the Thrift URI of the full tier's Hive Metastore,
// "thrift://127.0.0.1:PORT" (scripts/setup/hive.sh; embedded Derby, no
// authentication).
const EnvHiveURIs = "CDC2DELTA_HIVE_URIS"

// HiveMetastore returns the URI of the full tier's Hive Metastore.
func HiveMetastore(t testing.TB) string {
	t.Helper()
	return env(t, EnvHiveURIs)
}

// Hive is a private Hive Metastore of one test, which the test may freeze
// (SIGSTOP), thaw and stop: the shared one of the full tier must never be
// frozen.
type Hive struct {
	// URI is "thrift://127.0.0.1:PORT".
	URI string
	*scriptServer
}

// StartHive starts a metastore with scripts/setup/hive.sh on a free
// loopback port. It is thawed and stopped when the test ends.
func StartHive(t testing.TB) *Hive {
	t.Helper()
	s, out := startScript(t, "Hive Metastore", "hive.sh", "hive.pid", 5*time.Minute)
	return &Hive{URI: out, scriptServer: s}
}
