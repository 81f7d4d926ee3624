package e2ebench

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCPUGroupHoldsAProcess runs a busy loop for a second in a group of a
// fifth of a core: unthrottled it would take about a second of CPU.
func TestCPUGroupHoldsAProcess(t *testing.T) {
	g, err := newCPUGroup(fmt.Sprintf("cdc2bench-test-%d", os.Getpid()), 0.2)
	if errors.Is(err, ErrConfig) {
		t.Skipf("no writable CPU cgroup here: %v", err)
	}
	require.NoError(t, err)
	argv := g.command("sh", "-c", "while :; do :; done")
	cmd := exec.Command(argv[0], argv[1:]...)
	require.NoError(t, cmd.Start())
	r := &manyRun{cmd: cmd, done: make(chan struct{})}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	time.Sleep(time.Second)
	cpu, err := r.cpu()
	r.stop()
	require.NoError(t, err)
	require.NoError(t, g.remove())
	t.Logf("CPU time in 1 s at a quota of 0.2 cores: %v", cpu)
	require.Greater(t, cpu, 50*time.Millisecond, "the loop ran")
	require.Less(t, cpu, 400*time.Millisecond, "the quota held it")
}

func TestCPUGroupRefusesATinyQuota(t *testing.T) {
	_, err := newCPUGroup("cdc2bench-test-tiny", 0.001)
	require.ErrorIs(t, err, ErrConfig)
}
