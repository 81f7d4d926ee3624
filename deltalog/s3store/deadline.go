package s3store

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/cdc2delta/cdc2delta/deltalog/storewatch"
)

// DefaultRequestTimeout is the request timeout used when
// Options.RequestTimeout is zero.
const DefaultRequestTimeout = 10 * time.Second

// TimeoutError reports an S3 request that made no progress for the request
// timeout: no attempt started, no byte sent or received, no answer. An
// endpoint that accepts connections and never answers (a frozen server, a
// black-holed route) ends here instead of holding its caller forever. It
// comes wrapped with deltalog.ErrUnavailable: waiting may cure it.
type TimeoutError struct {
	Endpoint string // the endpoint URL, or "AWS" for the default one
	Op       string // the S3 operation: "GetObject", "PutObject", ...
	Bucket   string
	Key      string        // the object or listed prefix
	After    time.Duration // the request timeout
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("S3 at %s: %s s3://%s/%s made no progress for %s (the request timeout)",
		e.Endpoint, e.Op, e.Bucket, e.Key, e.After)
}

// watch starts the watchdog of operation op on key, and returns the context
// to run it in.
func (s *Store) watch(ctx context.Context, op, key string) (context.Context, *storewatch.Watchdog) {
	return storewatch.Start(ctx, s.timeout,
		&TimeoutError{Endpoint: s.endpoint, Op: op, Bucket: s.bucket, Key: key, After: s.timeout})
}

// watchedClient is the SDK's HTTP client with every attempt of a watched
// operation reporting its progress to the operation's watchdog.
type watchedClient struct{ next aws.HTTPClient }

func (c watchedClient) Do(req *http.Request) (*http.Response, error) {
	return storewatch.RoundTrip(req, c.next.Do)
}
