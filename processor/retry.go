package processor

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/backoff"
)

// Retrying (ADR 0026): an error is transient only if it is on the allowlist
// below; everything else is permanent and stops the table at once. Transient
// errors are retried with one backoff; past the budget the table is reported
// stalled (and keeps retrying), so nothing is retried forever in silence.

// transient reports whether waiting may cure err.
func transient(err error) bool {
	var ce *deltalog.ConflictError
	switch {
	case err == nil:
		return false
	case errors.Is(err, deltalog.ErrUnavailable), // the store said so
		errors.Is(err, codecs.ErrRegistry),                     // registry unreachable or 5xx
		errors.As(err, &ce), errors.Is(err, deltalog.ErrExist): // lost a commit race
		return true
	case errors.Is(err, codecs.ErrRegistryRefused), errors.Is(err, ErrDeadLetterTopic):
		return false
	case kerr.IsRetriable(err), errors.Is(err, kgo.ErrRecordTimeout), errors.Is(err, kgo.ErrRecordRetries):
		return true
	case netError(err), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ETIMEDOUT),
		errors.Is(err, io.ErrUnexpectedEOF):
		// A connection that dropped under a store or client that did not
		// classify it.
		return true
	}
	return false
}

// netError reports a network error of a client or store that did not
// classify it. A syscall.Errno is a net.Error too, but a bare one (under a
// *fs.PathError, say) is a local file system's answer: EROFS, ENOSPC,
// EACCES, EIO. Waiting does not cure those, so they stop the table with
// their hint instead of stalling it; only an errno that says it is
// temporary (EINTR, EAGAIN) is retried.
func netError(err error) bool {
	var ne net.Error
	if !errors.As(err, &ne) {
		return false
	}
	if errno, ok := ne.(syscall.Errno); ok {
		return errno.Temporary()
	}
	return true
}

// retryPolicy is the processor's backoff and the budget before a table
// retrying one failure is reported stalled.
type retryPolicy struct {
	backoff.Policy
	budget time.Duration
}

// retryState is one table's current run of transient failures.
type retryState struct {
	since    time.Time // first failure of the run; zero when none
	attempts int
	last     error
	what     string // what is being retried: "opening", "applying", ...
}

func (s *retryState) failing() bool { return !s.since.IsZero() }
