package s3store

import (
	"context"
	"errors"
	"fmt"
	"net"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// transientCodes are S3 error codes that waiting may cure.
var transientCodes = map[string]bool{
	"SlowDown": true, "ServiceUnavailable": true, "InternalError": true, "RequestTimeout": true,
	"Throttling": true, "ThrottlingException": true,
	"RequestLimitExceeded": true, "OperationAborted": true,
}

// classify marks err with deltalog.ErrUnavailable when the SDK, having
// exhausted its own retries, still failed for a reason that waiting may cure:
// a 5xx or 429 answer, a throttling code, a timeout or a network error.
// Anything else (access denied, no such bucket, bad credentials) stays
// permanent: retrying it only hides a configuration problem.
func classify(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, deltalog.ErrUnavailable) {
		return err
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		if s := re.HTTPStatusCode(); s >= 500 || s == 429 {
			return fmt.Errorf("%w: %w", deltalog.ErrUnavailable, err)
		}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && transientCodes[ae.ErrorCode()] {
		return fmt.Errorf("%w: %w", deltalog.ErrUnavailable, err)
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", deltalog.ErrUnavailable, err)
	}
	return err
}
