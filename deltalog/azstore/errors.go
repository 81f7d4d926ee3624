package azstore

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// StatusError is an error answer of the Blob service, in one line (the
// SDK's own message spans a dozen). The SDK's *azcore.ResponseError stays
// reachable with errors.As.
type StatusError struct {
	Status int    // the HTTP status
	Code   string // the service's error code ("AuthenticationFailed", ...)
	cause  *azcore.ResponseError
}

func (e *StatusError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d %s", e.Status, e.Code)
}

func (e *StatusError) Unwrap() error { return e.cause }

// transientCodes are Blob service error codes that waiting may cure.
var transientCodes = map[string]bool{
	"ServerBusy": true, "InternalError": true, "OperationTimedOut": true,
}

// classify shortens an SDK answer to a *StatusError and marks err with
// deltalog.ErrUnavailable when the SDK, having exhausted its own retries,
// still failed for a reason that waiting may cure: a 5xx or 429 answer, a
// busy code, a timeout or a network error. Anything else (403, no such
// container) stays permanent: retrying it only hides a configuration problem.
func classify(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, deltalog.ErrUnavailable) {
		return err
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		se := &StatusError{Status: re.StatusCode, Code: re.ErrorCode, cause: re}
		if se.Status >= 500 || se.Status == 429 || transientCodes[se.Code] {
			return fmt.Errorf("%w: %w", deltalog.ErrUnavailable, se)
		}
		return se
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", deltalog.ErrUnavailable, err)
	}
	return err
}

// isStatus reports whether err is a Blob service answer with the status and,
// when code is not empty, that error code.
func isStatus(err error, status int, code string) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status && (code == "" || re.ErrorCode == code)
}
