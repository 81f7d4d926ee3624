package fulltier

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// freeze returns only once a process busy on a core is stopped, and
// SIGCONT starts it again.
func TestFreeze(t *testing.T) {
	cmd := exec.Command("bash", "-c", "while :; do :; done")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	running, err := runningThreads(pid)
	require.NoError(t, err)
	require.Equal(t, 1, running)

	require.NoError(t, freeze(pid))
	running, err = runningThreads(pid)
	require.NoError(t, err)
	require.Zero(t, running)

	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	require.Eventually(t, func() bool { n, err := runningThreads(pid); return err == nil && n == 1 }, 5e9, 1e6)
}
