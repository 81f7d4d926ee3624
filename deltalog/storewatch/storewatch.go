// Package storewatch cuts an object-store operation that makes no progress for
// the request timeout. Progress is an SDK attempt starting, a byte of the
// request body sent, the answer's headers, a byte of the answer's body: so a
// large object that keeps moving is never cut, and an endpoint that accepts
// connections and never answers (a frozen server, a black-holed route) is cut
// after one timeout whatever the SDK's retries would do.
//
// Each store names its own timeout error (its fields name the store's
// objects) and hooks RoundTrip into its SDK's HTTP client.
package storewatch

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

// MaxRetryDelay is the longest pause an SDK may take between two attempts: a
// longer one would be cut by the request timeout and reported as a silent
// endpoint.
func MaxRetryDelay(requestTimeout time.Duration) time.Duration {
	return requestTimeout / 2
}

// Watchdog cancels one operation's context when it makes no progress for its
// timeout.
type Watchdog struct {
	timeout time.Duration
	timer   *time.Timer
	cancel  context.CancelFunc
	fired   atomic.Bool
	err     error
	once    sync.Once
}

type watchdogKey struct{}

// Start starts the watchdog of one operation and returns the context to run
// it in. timeoutErr is the store's error for the operation, which TimedOut
// reports once the watchdog fired.
func Start(ctx context.Context, timeout time.Duration, timeoutErr error) (context.Context, *Watchdog) {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watchdog{timeout: timeout, cancel: cancel, err: timeoutErr}
	w.timer = time.AfterFunc(timeout, func() {
		w.fired.Store(true)
		cancel()
	})
	return context.WithValue(ctx, watchdogKey{}, w), w
}

// Kick reports progress: the timeout starts again.
func (w *Watchdog) Kick() {
	if !w.fired.Load() {
		w.timer.Reset(w.timeout)
	}
}

// Pause holds the timer while the caller, not the store, has the operation
// (a listing's consumer between two items). Kick resumes it.
func (w *Watchdog) Pause() { w.timer.Stop() }

// Stop ends the watch and releases the context.
func (w *Watchdog) Stop() {
	w.once.Do(func() {
		w.timer.Stop()
		w.cancel()
	})
}

// TimedOut returns the store's timeout error, wrapped with
// deltalog.ErrUnavailable (waiting may cure it), in place of err when the
// watchdog fired: the SDK's error then only says that the context was
// canceled.
func (w *Watchdog) TimedOut(err error) error {
	if err != nil && w.fired.Load() {
		return fmt.Errorf("%w: %w", deltalog.ErrUnavailable, w.err)
	}
	return err
}

// RoundTrip sends one attempt through next, reporting its progress to the
// watchdog of the request's operation; a request outside any watched
// operation goes through untouched.
func RoundTrip(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	w, _ := req.Context().Value(watchdogKey{}).(*Watchdog)
	if w == nil {
		return next(req)
	}
	w.Kick()
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = progressBody{req.Body, w}
	}
	resp, err := next(req)
	if err != nil {
		return nil, err
	}
	w.Kick()
	resp.Body = progressBody{resp.Body, w}
	return resp, nil
}

// progressBody kicks its watchdog on every byte that moves.
type progressBody struct {
	io.ReadCloser
	w *Watchdog
}

func (b progressBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.Kick()
	}
	return n, err
}

// Body is the body a Get returns: reading it stays under the watchdog, a
// read error passes through TimedOut and then mapErr (when not nil), and
// closing it ends the watch.
func (w *Watchdog) Body(rc io.ReadCloser, mapErr func(error) error) io.ReadCloser {
	return watchedBody{rc, w, mapErr}
}

type watchedBody struct {
	io.ReadCloser
	w      *Watchdog
	mapErr func(error) error
}

func (b watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = b.w.TimedOut(err)
		if b.mapErr != nil {
			err = b.mapErr(err)
		}
	}
	return n, err
}

func (b watchedBody) Close() error {
	err := b.ReadCloser.Close()
	b.w.Stop()
	return err
}
