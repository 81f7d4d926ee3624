package fulltier

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// freeze sends SIGSTOP to pid and waits until every thread of it is
// stopped: kill(2) returns when the signal is queued, and a server thread
// still running on another core could answer one more request, which a
// test of a frozen server would take for a wrongly working timeout.
func freeze(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		running, err := runningThreads(pid)
		if err != nil || running == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d threads of pid %d still running 10s after SIGSTOP", running, pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// runningThreads counts pid's threads not in the stopped state ('T').
func runningThreads(pid int) (int, error) {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		return 0, fmt.Errorf("listing the threads of pid %d: %v", pid, err)
	}
	running := 0
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited
		}
		// "pid (comm) S ...": comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) {
			return 0, fmt.Errorf("reading %s: unexpected %q", p, b)
		}
		if state := b[i+2]; state != 'T' && state != 't' {
			running++
		}
	}
	return running, nil
}
