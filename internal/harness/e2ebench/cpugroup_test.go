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

// TestCPUGroupHoldsAProcess runs a busy loop in a group of a fifth of a core until it
// has used 100ms of CPU: unthrottled that takes about 100ms, held about 500ms.
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
	const want = 100 * time.Millisecond
	start := time.Now()
	require.Eventually(t, func() bool {
		cpu, err := r.cpu()
		return err == nil && cpu >= want
	}, time.Minute, 5*time.Millisecond, "the loop runs")
	took := time.Since(start)
	r.stop()
	require.NoError(t, g.remove())
	t.Logf("%v of CPU took %v at a quota of 0.2 cores", want, took)
	require.Greater(t, took, 250*time.Millisecond, "the quota held it")
}

func TestCPUGroupRefusesATinyQuota(t *testing.T) {
	_, err := newCPUGroup("cdc2bench-test-tiny", 0.001)
	require.ErrorIs(t, err, ErrConfig)
}
