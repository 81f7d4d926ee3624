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

// scriptServer is a server of one test, started by a setup script in a
// temporary directory, which the test may freeze (SIGSTOP), thaw and stop:
// the shared servers of the full tier must never be frozen, since every other
// test of the run uses them.
type scriptServer struct {
	t           testing.TB
	name        string // for messages
	script, dir string
	pidFile     string
	pid         int
}

// startScript runs `scripts/setup/<script> start DIR` (the script waits,
// with a deadline, until the server accepts connections), reads the pid it
// leaves in DIR/<pidFile>, and returns the server with what the script
// printed. The server is thawed and stopped when the test ends.
func startScript(t testing.TB, name, script, pidFile string, timeout time.Duration) (*scriptServer, string) {
	t.Helper()
	s := &scriptServer{t: t, name: name, script: filepath.Join(filepath.Dir(ScriptsDir(t)), "setup", script),
		dir: t.TempDir(), pidFile: pidFile}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", s.script, "start", s.dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		s.Stop()
		t.Fatalf("fulltier: starting a private %s (%s start %s): %v", name, s.script, s.dir, err)
	}
	raw, err := os.ReadFile(filepath.Join(s.dir, pidFile))
	if err == nil {
		s.pid, err = strconv.Atoi(strings.TrimSpace(string(raw)))
	}
	if err != nil {
		s.Stop()
		t.Fatalf("fulltier: the private %s in %s left no pid: %v", name, s.dir, err)
	}
	t.Cleanup(s.Stop)
	return s, strings.TrimSpace(string(out))
}

// Freeze stops the server with SIGSTOP and returns once it is stopped: the
// kernel still accepts connections and buffers requests, and nothing
// answers.
func (s *scriptServer) Freeze() {
	s.t.Helper()
	if err := freeze(s.pid); err != nil {
		s.t.Fatalf("fulltier: freezing the private %s: %v", s.name, err)
	}
}

// Thaw resumes a frozen server with SIGCONT.
func (s *scriptServer) Thaw() { s.signal(syscall.SIGCONT) }

// Stop thaws and stops the server (the script's stop); its port then
// refuses connections. Stopping twice is harmless.
func (s *scriptServer) Stop() {
	if out, err := exec.Command("bash", s.script, "stop", s.dir).CombinedOutput(); err != nil {
		s.t.Errorf("fulltier: stopping the private %s: %v\n%s", s.name, err, out)
	}
}

func (s *scriptServer) signal(sig syscall.Signal) {
	s.t.Helper()
	if err := syscall.Kill(s.pid, sig); err != nil {
		s.t.Fatalf("fulltier: signalling the private %s: %v", s.name, err)
	}
}
