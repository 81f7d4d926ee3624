package azstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/cdc2delta/cdc2delta/deltalog"
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

// watchdog cancels one operation's context when it makes no progress for
// its timeout. Progress is an SDK attempt starting, a byte of the request
// body sent, the answer's headers, a byte of the answer's body: so a large
// blob that keeps moving is never cut, and a silent endpoint is cut after
// one timeout whatever the SDK's retries would do.
type watchdog struct {
	timeout time.Duration
	timer   *time.Timer
	cancel  context.CancelFunc
	fired   atomic.Bool
	err     *TimeoutError
	once    sync.Once
}

type watchdogKey struct{}

// watch starts the watchdog of operation op on blob, and returns the
// context to run it in.
func (s *Store) watch(ctx context.Context, op, blob string) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watchdog{timeout: s.timeout, cancel: cancel,
		err: &TimeoutError{Endpoint: s.endpoint, Op: op, Container: s.container, Blob: blob, After: s.timeout}}
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

// stop ends the watch and releases the context.
func (w *watchdog) stop() {
	w.once.Do(func() {
		w.timer.Stop()
		w.cancel()
	})
}

// timedOut returns the timeout error in place of err when the watchdog
// fired: the SDK's error then only says that the context was canceled.
func (w *watchdog) timedOut(err error) error {
	if err != nil && w.fired.Load() {
		return fmt.Errorf("%w: %w", deltalog.ErrUnavailable, w.err)
	}
	return err
}

// watchedTransport is the SDK's HTTP transport with every attempt of a
// watched operation reporting its progress to the operation's watchdog.
type watchedTransport struct{ next policy.Transporter }

func (c watchedTransport) Do(req *http.Request) (*http.Response, error) {
	w, _ := req.Context().Value(watchdogKey{}).(*watchdog)
	if w == nil {
		return c.next.Do(req)
	}
	w.kick()
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = progressBody{req.Body, w}
	}
	resp, err := c.next.Do(req)
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

// watchedBody is the body a Get returns: reading it stays under the
// operation's watchdog, and closing it ends the watch.
type watchedBody struct {
	io.ReadCloser
	w *watchdog
}

func (b watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = b.w.timedOut(err)
	}
	return n, err
}

func (b watchedBody) Close() error {
	err := b.ReadCloser.Close()
	b.w.stop()
	return err
}
