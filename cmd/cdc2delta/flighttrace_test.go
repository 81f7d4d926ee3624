package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFlightTraceOnSignal: each SIGUSR1 writes the recent trace to the next
// file, and without a prefix nothing is started.
func TestFlightTraceOnSignal(t *testing.T) {
	var errw bytes.Buffer
	startFlightTrace("", &errw)() // off: returns a no-op

	prefix := filepath.Join(t.TempDir(), "t")
	stop := startFlightTrace(prefix, &errw)
	for n := range 2 {
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
		path := fmt.Sprintf("%s.%d.%d.trace", prefix, os.Getpid(), n)
		require.Eventually(t, func() bool {
			st, err := os.Stat(path)
			return err == nil && st.Size() > 0
		}, 10*time.Second, 10*time.Millisecond, "no trace at %s: %s", path, errw.String())
	}
	stop()
	require.Empty(t, errw.String())
}
