package fulltier

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// PrivateKafka is a Kafka broker of one test (scripts/setup/kafka.sh in a
// temporary directory), which the test may freeze (SIGSTOP) and thaw: the
// shared broker of the full tier must never be frozen.
type PrivateKafka struct {
	// Brokers is its plaintext bootstrap address.
	Brokers []string
	t       testing.TB
	pid     int
}

// StartKafka starts a private broker and waits until it serves admin
// requests. It is thawed and stopped when the test ends.
func StartKafka(t testing.TB) *PrivateKafka {
	t.Helper()
	script := filepath.Join(filepath.Dir(ScriptsDir(t)), "setup", "kafka.sh")
	dir := t.TempDir()
	stop := func() {
		if out, err := exec.Command("bash", script, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("fulltier: stopping the private kafka: %v\n%s", err, out)
		}
	}
	out, err := exec.Command("bash", script, "start", dir).Output()
	if err != nil {
		stop()
		t.Fatalf("fulltier: starting a private kafka in %s: %v", dir, err)
	}
	lines := strings.Fields(string(out))
	pidText, err := os.ReadFile(filepath.Join(dir, "kafka.pid"))
	if err != nil || len(lines) == 0 {
		stop()
		t.Fatalf("fulltier: the private kafka in %s left no pid or address: %v", dir, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		stop()
		t.Fatalf("fulltier: private kafka pid %q: %v", pidText, err)
	}
	k := &PrivateKafka{Brokers: []string{lines[len(lines)-1]}, t: t, pid: pid}
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGCONT)
		stop()
	})
	return k
}

// Freeze stops the broker with SIGSTOP: connections are accepted by the
// kernel and requests buffered, and nothing answers.
func (k *PrivateKafka) Freeze() { k.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen broker with SIGCONT.
func (k *PrivateKafka) Thaw() { k.signal(syscall.SIGCONT) }

func (k *PrivateKafka) signal(sig syscall.Signal) {
	k.t.Helper()
	if err := syscall.Kill(k.pid, sig); err != nil {
		k.t.Fatalf("fulltier: signalling the private kafka: %v", err)
	}
}
