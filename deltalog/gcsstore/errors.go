package gcsstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"google.golang.org/api/googleapi"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// classify marks err with deltalog.ErrUnavailable when the SDK, having exhausted its own
// retries, still failed for a reason that waiting may cure: a 5xx, 408 or 429 answer, a
// timeout or a network error. Anything else (403, no such bucket, bad credentials)
// stays permanent: retrying it only hides a configuration problem.
func classify(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, deltalog.ErrUnavailable) {
		return err
	}
	if s := statusOf(err); s >= 500 || s == http.StatusTooManyRequests || s == http.StatusRequestTimeout {
		return fmt.Errorf("%w: %w", deltalog.ErrUnavailable, err)
	}
	var re *RetriesError
	var ne net.Error
	if errors.As(err, &re) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", deltalog.ErrUnavailable, err)
	}
	return err
}

// statusOf is the HTTP status of a GCS error answer, 0 for anything else.
func statusOf(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}
