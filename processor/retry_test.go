package processor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/backoff"
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

// TestRetryRunStartsWhenTheHungCallBegan: a call that hung until its
// deadline counts toward the budget from the moment it began, so a table
// whose first call hangs for as long as the budget is stalled as soon as
// it fails, not one budget later.
func TestRetryRunStartsWhenTheHungCallBegan(t *testing.T) {
	const budget = 20 * time.Second
	m, err := newMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	clock := time.Unix(1000, 0)
	p := &Processor{now: func() time.Time { return clock }, m: m, log: slog.New(slog.DiscardHandler),
		retry: retryPolicy{Policy: backoff.Policy{Min: time.Millisecond, Max: time.Millisecond}, budget: budget}}
	tb := &table{path: "t", opened: true}
	var states []TableState
	calls := 0
	err = p.withRetry(t.Context(), tb, "applying", func(context.Context) error {
		calls++
		if calls > 1 {
			p.mu.Lock()
			states = append(states, tb.state(budget, clock))
			p.mu.Unlock()
			return nil
		}
		clock = clock.Add(budget + time.Second) // hangs past the budget, then times out
		return fmt.Errorf("put: %w", deltalog.ErrUnavailable)
	})
	require.NoError(t, err)
	require.Equal(t, []TableState{TableStalled}, states, "stalled once the hung call failed")
}
