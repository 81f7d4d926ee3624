package gcsstore

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog/storewatch"
)

// DefaultRequestTimeout is the request timeout used when Options.RequestTimeout is zero.
const DefaultRequestTimeout = 10 * time.Second

// TimeoutError reports a GCS request that made no progress for the request timeout: no
// attempt started, no byte sent or received, no answer. An endpoint that accepts
// connections and never answers (a frozen emulator, a black-holed route) ends here
// instead of holding its caller forever. It comes wrapped with deltalog.ErrUnavailable:
// waiting may cure it.
type TimeoutError struct {
	Endpoint string // the emulator's URL, or "GCS"
	Op       string // "get", "put", "list", "delete"
	Bucket   string
	Object   string        // the object or listed prefix
	After    time.Duration // the request timeout
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("GCS at %s: %s gs://%s/%s made no progress for %s (the request timeout)",
		e.Endpoint, e.Op, e.Bucket, e.Object, e.After)
}

type budgetKey struct{}

// watch starts the watchdog and the retry budget of operation op on object, and
// returns the context to run it in.
func (s *Store) watch(ctx context.Context, op, object string) (context.Context, *storewatch.Watchdog) {
	ctx = context.WithValue(ctx, budgetKey{}, &budget{max: s.maxRetries + 1, op: op, bucket: s.name, object: object})
	return storewatch.Start(ctx, s.timeout,
		&TimeoutError{Endpoint: s.endpoint, Op: op, Bucket: s.name, Object: object, After: s.timeout})
}

// watchedTransport is the HTTP transport under the credentials: every attempt of a
// watched operation reports its progress to the operation's watchdog and counts
// against the operation's retry budget.
type watchedTransport struct{ next http.RoundTripper }

func (t watchedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	b, _ := req.Context().Value(budgetKey{}).(*budget)
	if b == nil {
		return t.next.RoundTrip(req)
	}
	if err := b.exhausted(); err != nil {
		return nil, err
	}
	return storewatch.RoundTrip(req, func(req *http.Request) (*http.Response, error) {
		resp, err := t.next.RoundTrip(req)
		b.record(resp, err)
		return resp, err
	})
}
