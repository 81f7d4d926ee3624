package processor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestTransient(t *testing.T) {
	pathErr := func(errno syscall.Errno) error {
		return fmt.Errorf("localstore: put %q: %w", "part-0.parquet", &fs.PathError{Op: "open", Path: "/t/part-0.parquet", Err: errno})
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"store unavailable", fmt.Errorf("s3: %w", deltalog.ErrUnavailable), true},
		{"registry unreachable", fmt.Errorf("decoding: %w", codecs.ErrRegistry), true},
		{"commit race", fmt.Errorf("committing: %w", deltalog.ErrExist), true},
		{"kafka retriable", kerr.LeaderNotAvailable, true},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"host unreachable", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.EHOSTUNREACH}, true},
		{"deadline", context.DeadlineExceeded, true},
		{"interrupted write", pathErr(syscall.EINTR), true},
		// A bare errno is a net.Error too: these once stalled their table
		// for ever instead of stopping it with their hint.
		{"read-only file system", pathErr(syscall.EROFS), false},
		{"disk full", pathErr(syscall.ENOSPC), false},
		{"permission denied", pathErr(syscall.EACCES), false},
		{"i/o error", pathErr(syscall.EIO), false},
		{"registry refused", fmt.Errorf("decoding: %w", codecs.ErrRegistryRefused), false},
		{"dead-letter topic", fmt.Errorf("%w: dlq does not exist", ErrDeadLetterTopic), false},
		{"unknown", errors.New("boom"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, transient(tc.err), "%v", tc.err)
		})
	}
}
