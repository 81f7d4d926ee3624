package procstatus

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status")
	require.NoError(t, os.WriteFile(path, []byte("Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t1024 kB\nVmBad:\tlots kB\n"), 0o600))
	for _, c := range []struct {
		key  string
		want uint64
	}{
		{"VmHWM:", 2048 << 10},
		{"VmRSS:", 1024 << 10},
		{"VmBad:", 0},
		{"VmSwap:", 0},
	} {
		require.Equal(t, c.want, Field(path, c.key), c.key)
	}
	require.Zero(t, Field(filepath.Join(t.TempDir(), "none"), "VmRSS:"))
	require.Positive(t, Field(Of(os.Getpid()), "VmRSS:"))
}
