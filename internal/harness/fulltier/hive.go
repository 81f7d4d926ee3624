package fulltier

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
	URI    string
	t      testing.TB
	script string
	dir    string
	pid    int
}

// StartHive starts a metastore with scripts/setup/hive.sh on a free
// loopback port (the script waits, with a deadline, until it accepts
// connections). It is thawed and stopped when the test ends.
func StartHive(t testing.TB) *Hive {
	t.Helper()
	script := filepath.Join(ScriptsDir(t), "..", "setup", "hive.sh")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, "start", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fulltier: %s start: %v", script, err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "hive.pid"))
	pid, perr := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || perr != nil {
		t.Fatalf("fulltier: reading the metastore's pid in %s: %v %v", dir, err, perr)
	}
	h := &Hive{URI: strings.TrimSpace(string(out)), t: t, script: script, dir: dir, pid: pid}
	t.Cleanup(h.Stop)
	return h
}

// Freeze stops the metastore with SIGSTOP: the kernel still accepts
// connections and buffers requests, and nothing answers.
func (h *Hive) Freeze() { h.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen metastore with SIGCONT.
func (h *Hive) Thaw() { h.signal(syscall.SIGCONT) }

// Stop stops the metastore (thawing it first); connections are then
// refused. Stopping twice is harmless.
func (h *Hive) Stop() {
	stop := exec.Command("bash", h.script, "stop", h.dir)
	stop.Stderr = os.Stderr
	_ = stop.Run() // kills it after 20s if TERM does not; nothing else to do on failure
}

func (h *Hive) signal(sig syscall.Signal) {
	h.t.Helper()
	if err := syscall.Kill(h.pid, sig); err != nil {
		h.t.Fatalf("fulltier: signalling the metastore: %v", err)
	}
}
