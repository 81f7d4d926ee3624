package azstore

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/cdc2delta/cdc2delta/deltalog/storewatch"
)

// DefaultRequestTimeout is the request timeout used when
// Options.RequestTimeout is zero.
const DefaultRequestTimeout = 10 * time.Second

// TimeoutError reports an Azure request that made no progress for the
// request timeout: no attempt started, no byte sent or received, no answer.
// An endpoint that accepts connections and never answers (a frozen
// emulator, a black-holed route) ends here instead of holding its caller
// forever. It comes wrapped with deltalog.ErrUnavailable: waiting may cure it.
type TimeoutError struct {
	Endpoint  string // the Blob service URL
	Op        string // "GetBlob", "PutBlob", "DeleteBlob", "ListBlobs"
	Container string
	Blob      string        // the blob name or listed prefix
	After     time.Duration // the request timeout
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("Azure Blob at %s: %s %s/%s made no progress for %s (the request timeout)",
		e.Endpoint, e.Op, e.Container, e.Blob, e.After)
}

// watch starts the watchdog of operation op on blob, and returns the
// context to run it in.
func (s *Store) watch(ctx context.Context, op, blob string) (context.Context, *storewatch.Watchdog) {
	return storewatch.Start(ctx, s.timeout,
		&TimeoutError{Endpoint: s.endpoint, Op: op, Container: s.container, Blob: blob, After: s.timeout})
}

// watchedTransport is the SDK's HTTP transport with every attempt of a
// watched operation reporting its progress to the operation's watchdog.
type watchedTransport struct{ next policy.Transporter }

func (c watchedTransport) Do(req *http.Request) (*http.Response, error) {
	return storewatch.RoundTrip(req, c.next.Do)
}
