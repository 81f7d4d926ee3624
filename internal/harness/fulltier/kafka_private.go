package fulltier

import (
	"strings"
	"testing"
	"time"
)

// PrivateKafka is a Kafka broker of one test (scripts/setup/kafka.sh in a
// temporary directory), which the test may freeze (SIGSTOP), thaw and stop:
// the shared broker of the full tier must never be frozen.
type PrivateKafka struct {
	// Brokers is its plaintext bootstrap address.
	Brokers []string
	*scriptServer
}

// StartKafka starts a private broker and waits until it serves admin
// requests. It is thawed and stopped when the test ends.
func StartKafka(t testing.TB) *PrivateKafka {
	t.Helper()
	s, out := startScript(t, "kafka", "kafka.sh", "kafka.pid", 5*time.Minute)
	lines := strings.Fields(out)
	if len(lines) == 0 {
		t.Fatalf("fulltier: the private kafka in %s printed no address", s.dir)
	}
	return &PrivateKafka{Brokers: []string{lines[len(lines)-1]}, scriptServer: s}
}
