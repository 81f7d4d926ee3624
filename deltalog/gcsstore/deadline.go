package gcsstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
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

// watchdog cancels one GCS operation's context when it makes no progress for its
// timeout. Progress is an attempt starting, a byte of the request body sent, the
// answer's headers, a byte of the answer's body: so a large object that keeps moving is
// never cut, and a silent endpoint is cut after one timeout whatever the SDK's retries
// would do.
type watchdog struct {
	budget  budget
	timeout time.Duration
	timer   *time.Timer
	cancel  context.CancelFunc
	fired   atomic.Bool
	err     *TimeoutError
	once    sync.Once
}

type watchdogKey struct{}

// watch starts the watchdog of operation op on object, and returns the context to run
// it in.
func (s *Store) watch(ctx context.Context, op, object string) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watchdog{budget: budget{max: s.maxRetries + 1, op: op, bucket: s.name, object: object}, timeout: s.timeout, cancel: cancel,
		err: &TimeoutError{Endpoint: s.endpoint, Op: op, Bucket: s.name, Object: object, After: s.timeout}}
	w.timer = time.AfterFunc(s.timeout, func() {
		w.fired.Store(true)
		cancel()
	})
	return context.WithValue(ctx, watchdogKey{}, w), w
}

func (w *watchdog) kick() {
	if !w.fired.Load() {
		w.timer.Reset(w.timeout)
	}
}

// pause holds the timer while the caller, not GCS, has the operation: a List's consumer
// between two items. kick resumes it.
func (w *watchdog) pause() { w.timer.Stop() }

// stop ends the watch and releases the context.
func (w *watchdog) stop() {
	w.once.Do(func() {
		w.timer.Stop()
		w.cancel()
	})
}

// timedOut returns the timeout error in place of err when the watchdog fired: the
// SDK's error then only says that the context was canceled.
func (w *watchdog) timedOut(err error) error {
	if err != nil && w.fired.Load() {
		return fmt.Errorf("%w: %w", deltalog.ErrUnavailable, w.err)
	}
	return err
}

// watchedTransport is the HTTP transport under the credentials: every attempt of a
// watched operation reports its progress to the operation's watchdog.
type watchedTransport struct{ next http.RoundTripper }

func (t watchedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w, _ := req.Context().Value(watchdogKey{}).(*watchdog)
	if w == nil {
		return t.next.RoundTrip(req)
	}
	if err := w.budget.exhausted(); err != nil {
		return nil, err
	}
	w.kick()
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = progressBody{req.Body, w}
	}
	resp, err := t.next.RoundTrip(req)
	w.budget.record(resp, err)
	if err != nil {
		return nil, err
	}
	w.kick()
	resp.Body = progressBody{resp.Body, w}
	return resp, nil
}

// progressBody kicks its watchdog on every byte that moves.
type progressBody struct {
	io.ReadCloser
	w *watchdog
}

func (b progressBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.kick()
	}
	return n, err
}

// watchedBody is the body a Get returns: reading it stays under the operation's
// watchdog, and closing it ends the watch.
type watchedBody struct {
	io.ReadCloser
	w *watchdog
}

func (b watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = classify(b.w.timedOut(err))
	}
	return n, err
}

func (b watchedBody) Close() error {
	err := b.ReadCloser.Close()
	b.w.stop()
	return err
}
